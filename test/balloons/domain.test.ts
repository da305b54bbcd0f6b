import { describe, expect, it } from 'vitest';
import { amounts, sub } from '../../shared/balloons/amounts.js';
import type { BalloonNode } from '../../shared/balloons/cluster-read.js';
import { decide } from '../../shared/balloons/decide.js';
import { compilePolicies, desiredSize, hostShare } from '../../shared/balloons/desired.js';
import { nodeSelectorTerms } from '../../shared/balloons/manifests.js';
import { holdShrinks, PolicyError, policySize, validatePolicy } from '../../shared/balloons/policy.js';
import { balloonedMonthlyUsd, nodePrice } from '../../shared/balloons/prices.js';
import { BALLOON_FLOOR, planBalloon, podsInTheWay } from '../../shared/balloons/sizing.js';
import { matchesLabels, parseLabelSelector, SelectorError } from '../../shared/kernel/label-selector.js';
import { readableUsd } from '../../shared/kernel/units-format.js';

const GI = 2 ** 30;
const MI = 2 ** 20;

describe('label selectors, as kubectl parses them', () => {
  it('parses equality, set and existence requirements', () => {
    expect(parseLabelSelector('pool=batch, zone in (a, b),!spot,gpu,tier!=web')).toEqual([
      { key: 'pool', operator: 'In', values: ['batch'] },
      { key: 'zone', operator: 'In', values: ['a', 'b'] },
      { key: 'spot', operator: 'DoesNotExist', values: [] },
      { key: 'gpu', operator: 'Exists', values: [] },
      { key: 'tier', operator: 'NotIn', values: ['web'] },
    ]);
  });
  it('matches as label selectors do (NotIn matches an absent label)', () => {
    const reqs = parseLabelSelector('pool=batch,tier!=web');
    expect(matchesLabels(reqs, { pool: 'batch' })).toBe(true);
    expect(matchesLabels(reqs, { pool: 'batch', tier: 'web' })).toBe(false);
    expect(matchesLabels(reqs, { pool: 'web' })).toBe(false);
  });
  it('refuses a malformed selector naming the bad part', () => {
    expect(() => parseLabelSelector('pool==')).not.toThrow();
    expect(() => parseLabelSelector('pool in ()')).toThrow(/lists no values/);
    expect(() => parseLabelSelector('-bad-=x')).toThrow(SelectorError);
    expect(() => parseLabelSelector('a,,b')).toThrow(/empty requirement/);
    expect(() => parseLabelSelector('k=v w')).toThrow(/cannot parse "k=v w"/);
  });
});

describe('policies', () => {
  const base = { name: 'batch', selector: 'pool=batch', max: { cpu: '8', memory: '32Gi' } };
  it('fills defaults and refuses bad fields by name', () => {
    const p = validatePolicy(base);
    expect(p.min).toEqual(amounts(500, 512 * MI));
    expect(p.headroomPercent).toBe(10);
    expect(() => validatePolicy({ ...base, min: { cpu: '9', memory: '1Gi' } })).toThrow(
      /min.cpu: 9 cores exceeds max.cpu 8 cores/,
    );
    expect(() => validatePolicy({ ...base, selector: 'pool in ()' })).toThrow(/^selector: /);
    expect(() => validatePolicy({ ...base, name: 'Bad_Name' })).toThrow(/^name: /);
    expect(() => validatePolicy({ ...base, max: { cpu: '-1', memory: '1Gi' } })).toThrow(
      /max.cpu: "-1" is negative/,
    );
    expect(() => validatePolicy({ ...base, max: { cpu: 'lots', memory: '1Gi' } })).toThrow(
      /max.cpu: "lots" is not a cpu quantity/,
    );
    expect(() => validatePolicy({ ...base, headroomPercent: 'x' })).toThrow(/headroomPercent/);
    expect(() => validatePolicy({ ...base, step: { cpu: '0', memory: '1Mi' } })).toThrow(/step.cpu/);
    expect(() => validatePolicy(base)).not.toThrow(PolicyError);
  });
  it('sizes to requests plus headroom, rounded up to the step, within the bounds', () => {
    const p = validatePolicy({
      ...base,
      headroomPercent: 20,
      headroomMin: { cpu: '100m', memory: '128Mi' },
      step: { cpu: '500m', memory: '1Gi' },
    });
    // 2600m + 20% = 3120m -> 3500m; 3Gi + 614.4Mi -> 4Gi
    expect(policySize(p, amounts(2600, 3 * GI))).toEqual(amounts(3500, 4 * GI));
    // nothing running: the minimum
    expect(policySize(p, amounts(0, 0))).toEqual(amounts(500, 1 * GI));
    // more than the maximum: the maximum (a hard bound, even off-step)
    expect(policySize(p, amounts(9000, 40 * GI))).toEqual(amounts(8000, 32 * GI));
  });
  it('holds a shrink during the cool-down, never a growth', () => {
    const current = amounts(4000, 8 * GI);
    expect(holdShrinks(amounts(3000, 10 * GI), current, 1_000, 60_000, 600_000)).toEqual({
      size: amounts(4000, 10 * GI),
      held: true,
    });
    expect(holdShrinks(amounts(3000, 10 * GI), current, 1_000, 700_000, 600_000)).toEqual({
      size: amounts(3000, 10 * GI),
      held: false,
    });
    expect(holdShrinks(amounts(3000, 6 * GI), current, undefined, 0, 600_000).held).toBe(false);
  });
});

const node = (name: string, labels: Record<string, string> = {}, cpu = 8000, mem = 32 * GI) => ({
  name,
  labels,
  capacity: amounts(cpu, mem),
  allocatable: amounts(cpu - 100, mem - GI),
});

describe('desired size: explicit, then policy, then host share', () => {
  const policies = compilePolicies([
    validatePolicy({ name: 'pool', selector: 'pool=a', max: { cpu: '6', memory: '24Gi' } }),
  ]);
  it('an explicit request beats the policy', () => {
    const n = { ...node('n1', { pool: 'a' }), workloads: amounts(1000, GI) };
    const d = desiredSize(
      n,
      { node: 'n1', size: amounts(6000, 24 * GI), requestedAt: 5, via: 'cli' },
      policies,
      {},
      0,
    );
    expect(d?.source.kind).toBe('explicit');
    expect(d?.size).toEqual(amounts(6000, 24 * GI));
    expect(desiredSize(n, undefined, policies, {}, 0)?.source).toEqual({
      kind: 'policy',
      policy: 'pool',
      held: false,
    });
  });
  it('clamps a request above allocatable (the node cannot offer more than it has)', () => {
    const n = { ...node('n1'), workloads: amounts(0, 0) };
    const d = desiredSize(
      n,
      { node: 'n1', size: amounts(16000, 64 * GI), requestedAt: 5, via: 'event' },
      [],
      {},
      0,
    );
    expect(d?.clamped).toBe(true);
    expect(d?.size).toEqual(n.allocatable);
  });
  it('N kubelets on a host: each offers 1/N of the host, less its own reserve', () => {
    const n = {
      ...node('k1', { 'fleetscope.io/host-id': 'h1', 'fleetscope.io/kubelets-per-host': '4' }),
      workloads: amounts(0, 0),
    };
    const share = hostShare(n);
    expect(share?.size).toEqual(amounts(2000 - 100, 8 * GI - GI));
    expect(desiredSize(n, undefined, [], {}, 0)?.source).toEqual({ kind: 'host', host: 'h1', kubelets: 4 });
    expect(
      hostShare({ ...n, labels: { 'fleetscope.io/host-id': 'h1', 'fleetscope.io/kubelets-per-host': 'x' } }),
    ).toBeUndefined();
  });
  it('a node no source speaks for is not managed', () => {
    expect(
      desiredSize({ ...node('n9'), workloads: amounts(0, 0) }, undefined, policies, {}, 0),
    ).toBeUndefined();
  });
});

describe('balloon plans: deflate always, inflate only into free capacity', () => {
  const allocatable = amounts(8000, 32 * GI);
  it('deflates to grow the node, whatever runs', () => {
    const plan = planBalloon(
      { allocatable, others: amounts(7000, 30 * GI), balloon: amounts(4000, 16 * GI) },
      amounts(6000, 24 * GI),
    );
    expect(plan.next).toEqual(amounts(2000, 8 * GI));
    expect(plan.blocked).toEqual(amounts(0, 0));
  });
  it('inflates fully when the space is free', () => {
    const plan = planBalloon(
      { allocatable, others: amounts(1000, 2 * GI), balloon: BALLOON_FLOOR },
      amounts(4000, 16 * GI),
    );
    expect(plan.next).toEqual(amounts(4000, 16 * GI));
  });
  it('takes only what is free and records the rest as blocked', () => {
    const plan = planBalloon(
      { allocatable, others: amounts(5000, 4 * GI), balloon: amounts(1000, GI) },
      amounts(2000, 8 * GI),
    );
    expect(plan.target).toEqual(amounts(6000, 24 * GI));
    expect(plan.next).toEqual(amounts(3000, 24 * GI));
    expect(plan.blocked).toEqual(amounts(3000, 0));
  });
  it('never deflates on the inflate path when the node is already over-committed', () => {
    const plan = planBalloon(
      { allocatable, others: amounts(7500, 4 * GI), balloon: amounts(1000, GI) },
      amounts(2000, 8 * GI),
    );
    expect(plan.next.cpu).toBe(1000);
    expect(plan.blocked.cpu).toBe(5000);
  });
  it('inflates nothing on a node over-committed in either resource: the kubelet takes a resize whole', () => {
    // found by the property test: memory over-committed from below (the node shrank), cpu free. The
    // kubelet admits a resize only when the pod's whole new request fits beside the others, so a cpu
    // inflate there is Deferred, counted by the scheduler, reverted, and sent again every cycle.
    const plan = planBalloon(
      { allocatable, others: amounts(5700, 34 * GI), balloon: BALLOON_FLOOR },
      amounts(5000, 9 * GI),
    );
    expect(plan.next).toEqual(BALLOON_FLOOR);
    expect(plan.blocked).toEqual(sub(plan.target, BALLOON_FLOOR));
    // a deflate is still planned (it is the kubelet's to hold or take)
    const down = planBalloon(
      { allocatable, others: amounts(5700, 34 * GI), balloon: amounts(2000, 2 * GI) },
      amounts(7000, 31 * GI),
    );
    expect(down.next).toEqual(amounts(1000, GI));
  });
  it('names the largest pods in the way of the blocked resource', () => {
    const pods = [
      { namespace: 'a', name: 'small', requests: amounts(100, GI) },
      { namespace: 'a', name: 'big', requests: amounts(3000, GI) },
      { namespace: 'a', name: 'memonly', requests: amounts(0, 4 * GI) },
    ];
    expect(podsInTheWay(pods, amounts(1000, 0)).map((p) => p.name)).toEqual(['big', 'small']);
  });
});

describe('the DaemonSet runs where a source speaks', () => {
  it('one term per policy, one per explicit node by name, and shared hosts', () => {
    const terms = nodeSelectorTerms({
      policies: [
        { name: 'b', selector: 'pool=b' },
        { name: 'a', selector: '' },
      ],
      explicitNodes: ['n2', 'n1'],
    });
    expect(terms).toEqual([
      { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'Exists' }] },
      { matchExpressions: [{ key: 'pool', operator: 'In', values: ['b'] }] },
      // One node per term: a real apiserver takes one value per node-field requirement.
      { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] },
      { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n2'] }] },
      {
        matchExpressions: [
          { key: 'fleetscope.io/host-id', operator: 'Exists' },
          { key: 'fleetscope.io/kubelets-per-host', operator: 'Exists' },
        ],
      },
    ]);
  });
});

describe('decide', () => {
  const policies = compilePolicies([
    validatePolicy({
      name: 'pool',
      selector: 'pool=a',
      min: { cpu: '1', memory: '1Gi' },
      max: { cpu: '7', memory: '28Gi' },
      headroomPercent: 0,
      headroomMin: { cpu: '500m', memory: '1Gi' },
      step: { cpu: '500m', memory: '1Gi' },
    }),
  ]);
  const pod = (name: string, nodeName: string, cpu: number, mem: number, balloon = false) => ({
    namespace: balloon ? 'kube-system' : 'default',
    name,
    uid: `u-${name}`,
    node: nodeName,
    balloon,
    requests: amounts(cpu, mem),
  });
  it('sizes each node of the pool from its own workloads and deflates unmanaged balloons', () => {
    const { decisions } = decide({
      now: 0,
      nodes: [node('n1', { pool: 'a' }), node('n2')],
      pods: [
        pod('b1', 'n1', 1, MI, true),
        pod('w1', 'n1', 2000, 4 * GI),
        pod('b2', 'n2', 3000, 8 * GI, true),
      ],
      policies,
      requests: [],
      previous: {},
    });
    const n1 = decisions.find((d) => d.node === 'n1');
    const n2 = decisions.find((d) => d.node === 'n2');
    // n1: workloads 2000m/4Gi + headroom 500m/1Gi = 2500m/5Gi; balloon = 7900-2500, 31Gi-5Gi
    expect(n1?.desired?.size).toEqual(amounts(2500, 5 * GI));
    expect(n1?.resizeTo).toEqual(amounts(5400, 26 * GI));
    expect(n2?.desired).toBeUndefined();
    expect(n2?.resizeTo).toEqual(BALLOON_FLOOR);
  });
  it('reports explicit requests for nodes that do not exist', () => {
    const { stale } = decide({
      now: 0,
      nodes: [node('n1')],
      pods: [],
      policies: [],
      requests: [{ node: 'ghost', size: amounts(1, 1), requestedAt: 0, via: 'cli' }],
      previous: {},
    });
    expect(stale.map((s) => s.request.node)).toEqual(['ghost']);
  });
  it('notices allocatable changing from below and sizes from the new one', () => {
    const prev = {
      allocatable: amounts(3900, 15 * GI),
      capacity: amounts(4000, 16 * GI),
      workloads: amounts(0, 0),
      balloon: BALLOON_FLOOR,
      target: BALLOON_FLOOR,
    };
    const { decisions } = decide({
      now: 0,
      nodes: [node('n1')],
      pods: [pod('b1', 'n1', 1, MI, true)],
      policies: [],
      requests: [{ node: 'n1', size: amounts(4000, 16 * GI), requestedAt: 0, via: 'cli' }],
      previous: { n1: prev },
    });
    expect(decisions[0]?.capacityChanged).toEqual({ from: prev.allocatable, to: amounts(7900, 31 * GI) });
    expect(decisions[0]?.resizeTo).toEqual(amounts(3900, 15 * GI));
  });
});

describe('pending pods are demand a policy-sized pool grows for', () => {
  const policies = compilePolicies([
    validatePolicy({
      name: 'pool',
      selector: 'pool=a',
      headroomPercent: 0,
      headroomMin: { cpu: '0', memory: '0' },
      min: { cpu: '1', memory: '1Gi' },
      max: { cpu: '4', memory: '16Gi' },
      step: { cpu: '500m', memory: '1Gi' },
    }),
  ]);
  const waiting = (name: string, cpu: number, selector: Record<string, string> = { pool: 'a' }) => ({
    namespace: 'default',
    name,
    uid: name,
    node: '',
    balloon: false,
    requests: amounts(cpu, GI),
    nodeSelector: selector,
  });
  it('places waiting pods on pool nodes within the maximum, and the policy sizes the node for them', () => {
    const { decisions } = decide({
      now: 0,
      nodes: [node('n1', { pool: 'a' }), node('n2', { pool: 'a' }), node('n3')],
      pods: [
        waiting('p1', 3000),
        waiting('p2', 3000),
        waiting('p3', 2000),
        waiting('elsewhere', 1000, { pool: 'b' }),
      ],
      policies,
      requests: [],
      previous: {},
    });
    const size = (n: string) => decisions.find((d) => d.node === n)?.desired?.size;
    // p1 -> n1, p2 -> n2 (most room), p3 fits neither within max 4 cpu; "elsewhere" matches no pool node
    expect(size('n1')).toEqual(amounts(3000, GI));
    expect(size('n2')).toEqual(amounts(3000, GI));
    expect(decisions.find((d) => d.node === 'n3')).toBeUndefined();
  });
  it('never grows an explicitly sized node for them', () => {
    const { decisions } = decide({
      now: 0,
      nodes: [node('n1', { pool: 'a' })],
      pods: [waiting('p1', 3000)],
      policies,
      requests: [{ node: 'n1', size: amounts(1000, GI), requestedAt: 0, via: 'cli' }],
      previous: {},
    });
    expect(decisions[0]?.desired?.size).toEqual(amounts(1000, GI));
  });
  it("never grows a node whose taints the pod does not tolerate, or a cordoned one (the scheduler's TaintToleration)", () => {
    const tainted = {
      ...node('n1', { pool: 'a' }),
      taints: [{ key: 'gpu', value: 'yes', effect: 'NoSchedule' }],
    };
    const cordoned = { ...node('n2', { pool: 'a' }), unschedulable: true };
    const soft = { ...node('n3', { pool: 'a' }), taints: [{ key: 'spot', effect: 'PreferNoSchedule' }] };
    const tolerant = {
      ...waiting('tolerant', 2000),
      tolerations: [{ key: 'gpu', operator: 'Equal', value: 'yes', effect: 'NoSchedule' }],
    };
    const size = (pods: ReturnType<typeof waiting>[], nodes: BalloonNode[] = [tainted, cordoned]) =>
      decide({ now: 0, nodes, pods, policies, requests: [], previous: {} }).decisions.map((d) => [
        d.node,
        d.desired?.size,
      ]);
    // the plain pod fits neither: no node is grown for it (both stay at the policy's minimum)
    expect(size([waiting('plain', 3000)])).toEqual([
      ['n1', amounts(1000, GI)],
      ['n2', amounts(1000, GI)],
    ]);
    // a pod tolerating the taint grows the tainted node; PreferNoSchedule never keeps a pod away
    expect(size([tolerant])).toEqual([
      ['n1', amounts(2000, GI)],
      ['n2', amounts(1000, GI)],
    ]);
    expect(size([waiting('plain', 3000)], [soft])).toEqual([['n3', amounts(3000, GI)]]);
  });
});

describe('money: ballooned capacity at the node price', () => {
  const labels = { 'node.kubernetes.io/instance-type': 'm6i.xlarge' };
  it('takes the first override naming the instance type, then the shipped table, and nothing for unknown types', () => {
    expect(nodePrice(labels, [undefined, { 'm6i.xlarge': 0.5 }, { 'm6i.xlarge': 9 }])).toEqual({
      instanceType: 'm6i.xlarge',
      hourlyUsd: 0.5,
      from: 'policy',
    });
    expect(nodePrice(labels, [])).toEqual({ instanceType: 'm6i.xlarge', hourlyUsd: 0.192, from: 'table' });
    expect(nodePrice({ 'node.kubernetes.io/instance-type': 'x9.huge' }, [])).toBeUndefined();
    expect(nodePrice({}, [{ 'm6i.xlarge': 1 }])).toBeUndefined();
  });
  it('values the share of capacity the balloon holds (mean of cpu and memory) over 730 hours', () => {
    const price = { instanceType: 'm6i.xlarge', hourlyUsd: 1, from: 'table' as const };
    const cap = amounts(4000, 16 * 2 ** 30);
    expect(balloonedMonthlyUsd(price, amounts(2000, 4 * 2 ** 30), cap)).toBeCloseTo(((0.5 + 0.25) / 2) * 730);
    expect(balloonedMonthlyUsd(price, amounts(0, 0), cap)).toBe(0);
  });
  it('one formatter for dollars', () => {
    expect([readableUsd(0), readableUsd(12.345), readableUsd(1234.5)]).toEqual(['$0.00', '$12.35', '$1,235']);
  });
  it('refuses a policy price naming the field', () => {
    expect(() =>
      validatePolicy({
        name: 'p',
        selector: 'a=b',
        max: { cpu: '1', memory: '1Gi' },
        prices: { 'm5.large': 'x' },
      }),
    ).toThrow(/prices\.m5\.large: must be a number/);
    expect(() =>
      validatePolicy({
        name: 'p',
        selector: 'a=b',
        max: { cpu: '1', memory: '1Gi' },
        prices: { 'not a type!': 1 },
      }),
    ).toThrow(/prices: "not a type!" is not an instance type/);
  });
});
