/**
 * Issue 28's rules that need no cluster: which waiting pods are demand, what a balloon pod must be.
 */
import { describe, expect, it } from 'vitest';
import { amounts, sub } from '../../shared/balloons/amounts.js';
import { decide } from '../../shared/balloons/decide.js';
import { compilePolicies } from '../../shared/balloons/desired.js';
import { balloonPodProblems } from '../../shared/balloons/integrity.js';
import { validatePolicy } from '../../shared/balloons/policy.js';
import { nodePrice } from '../../shared/balloons/prices.js';
import { demandable } from '../../shared/balloons/read.js';
import { parseResizeRequest } from '../../shared/balloons/requests.js';
import { monthlyValue } from '../../shared/balloons/summary-model.js';
import { podView } from '../../shared/cycle/views.js';
import type { PodObject } from '../../shared/cycle/wire.js';

const unschedulable = {
  phase: 'Pending',
  conditions: [
    {
      type: 'PodScheduled',
      status: 'False',
      reason: 'Unschedulable',
      message: '0/3 nodes are available: 3 Insufficient cpu.',
    },
  ],
};
const waiting = (spec: object, status: object = unschedulable): PodObject => ({
  metadata: { name: 'p', namespace: 'default', uid: 'u' },
  spec: { containers: [{ name: 'app', resources: { requests: { cpu: '1' } } }], ...spec },
  status,
});

describe('waiting pods as demand', () => {
  it('counts only a pod the default scheduler reported Unschedulable for resources, without gates', () => {
    expect(demandable(podView(waiting({}))!)).toBe(true);
    expect(demandable(podView(waiting({ schedulingGates: [{ name: 'x' }] }))!)).toBe(false);
    expect(demandable(podView(waiting({ schedulerName: 'volcano' }))!)).toBe(false);
    expect(demandable(podView(waiting({}, { phase: 'Pending' }))!)).toBe(false);
    const volume = {
      phase: 'Pending',
      conditions: [
        {
          type: 'PodScheduled',
          status: 'False',
          reason: 'Unschedulable',
          message: 'unbound PersistentVolumeClaims',
        },
      ],
    };
    expect(demandable(podView(waiting({}, volume))!)).toBe(false);
  });
});

describe('what a balloon pod must be', () => {
  const balloon = (spec: object): PodObject => ({
    metadata: { name: 'b', namespace: 'kube-system', uid: 'b' },
    spec: {
      nodeName: 'n1',
      priority: 1_000_000_000,
      preemptionPolicy: 'Never',
      containers: [{ name: 'balloon', resources: { requests: { cpu: '1m', memory: '1Mi' } } }],
      ...spec,
    },
  });
  it('is sound as fleetscope makes it', () => {
    expect(balloonPodProblems(podView(balloon({}))!)).toEqual([]);
  });
  it('names each field that differs', () => {
    expect(balloonPodProblems(podView(balloon({ priority: 0 }))!).join()).toMatch(/^priority 0/);
    expect(
      balloonPodProblems(podView(balloon({ preemptionPolicy: 'PreemptLowerPriority' }))!).join(),
    ).toMatch(/preemptionPolicy PreemptLowerPriority/);
    const limited = balloon({
      containers: [{ name: 'balloon', resources: { requests: { cpu: '1m' }, limits: { cpu: '3' } } }],
    });
    expect(balloonPodProblems(podView(limited)!).join()).toMatch(/limits on container balloon/);
    const init = balloon({ initContainers: [{ name: 'i', resources: { requests: { cpu: '2' } } }] });
    expect(balloonPodProblems(podView(init)!).join()).toMatch(/init containers/);
  });
});

describe('7. input that was silently wrong is refused, naming the field', () => {
  const base = { name: 'p', selector: 'pool=a', max: { cpu: '4', memory: '8Gi' } };
  it('a unit-less memory below 1Mi is bytes: refused with a hint', () => {
    expect(() => parseResizeRequest({ node: 'n1', cpu: '1', memory: '4' })).toThrow(
      /memory: "4" is 4 bytes .*4Gi or 4Mi/,
    );
    expect(() => validatePolicy({ ...base, max: { cpu: '4', memory: 8 } })).toThrow(
      /max.memory: "8" is 8 bytes/,
    );
    // with a unit, or large enough to be meant, it stands; zero stays zero
    expect(parseResizeRequest({ node: 'n1', cpu: '1', memory: '4Gi' }).size.memory).toBe(4 * 2 ** 30);
    expect(parseResizeRequest({ node: 'n1', cpu: '1', memory: String(2 ** 30) }).size.memory).toBe(2 ** 30);
    expect(validatePolicy({ ...base, headroomMin: { cpu: '0', memory: '0' } }).headroomMin.memory).toBe(0);
  });
  it('an unknown field of a policy is refused, not ignored', () => {
    expect(() => validatePolicy({ ...base, headroomPercnt: 50 } as never)).toThrow(
      /^headroomPercnt: unknown field/,
    );
    expect(() => validatePolicy({ ...base, max: { cpu: '4', memory: '8Gi', memroy: '1Gi' } })).toThrow(
      /max.memroy: unknown field/,
    );
  });
  it('a number that is not decimal is refused', () => {
    expect(() => validatePolicy({ ...base, headroomPercent: '0x10' })).toThrow(
      /headroomPercent: must be a number/,
    );
    expect(() => validatePolicy({ ...base, shrinkCooldownMinutes: '1e2' })).toThrow(/shrinkCooldownMinutes/);
    expect(validatePolicy({ ...base, headroomPercent: '16' }).headroomPercent).toBe(16);
  });
  it('a size that can never grow a node is refused', () => {
    expect(() =>
      validatePolicy({ ...base, min: { cpu: '0', memory: '0' }, max: { cpu: '0', memory: '0' } }),
    ).toThrow(/max.cpu: must be greater than zero/);
    expect(() => parseResizeRequest({ node: 'n1', cpu: '0', memory: '0' })).toThrow(
      /cpu: must be greater than zero \(node n1/,
    );
    expect(() => parseResizeRequest({ node: 'n1', cpu: '1', memory: '0' })).toThrow(
      /memory: must be greater/,
    );
  });
});

describe('4. a node never offers less than its pods use', () => {
  const GI = 2 ** 30;
  const policies = compilePolicies([
    validatePolicy({
      name: 'pool',
      selector: 'pool=a',
      headroomPercent: 10,
      headroomMin: { cpu: '0', memory: '0' },
      min: { cpu: '750m', memory: '1Gi' },
      max: { cpu: '8', memory: '32Gi' },
      step: { cpu: '250m', memory: '256Mi' },
      shrinkCooldownMinutes: 0,
    }),
  ]);
  const node = {
    name: 'n1',
    labels: { pool: 'a' },
    capacity: amounts(8000, 32 * GI),
    allocatable: amounts(7900, 31 * GI),
  };
  const balloon = {
    namespace: 'kube-system',
    name: 'b',
    uid: 'b',
    node: 'n1',
    balloon: true,
    requests: amounts(7150, 30 * GI),
  };
  const workload = {
    namespace: 'default',
    name: 'w',
    uid: 'w',
    node: 'n1',
    balloon: false,
    requests: amounts(500, GI / 2),
  };
  const run = (usage?: Map<string, ReturnType<typeof amounts>>) =>
    decide({
      now: 0,
      nodes: [node],
      pods: [balloon, workload],
      policies,
      requests: [],
      previous: {},
      ...(usage ? { usage } : {}),
    }).decisions[0]!;

  it('by requests alone the node offers its minimum', () => {
    expect(run().desired?.size).toEqual(amounts(750, GI));
  });
  it('usage above that bounds the shrink (usage + the policy headroom), said in the state, and counts as over-commitment', () => {
    const used = Math.round(3.27 * GI);
    const d = run(new Map([['n1', amounts(691, used)]]));
    // usage + 10%, rounded up to the policy's step (250m, 256Mi)
    const MI256 = 256 * 2 ** 20;
    const floor = amounts(1000, Math.ceil((used + Math.ceil(used * 0.1)) / MI256) * MI256);
    expect(d.desired?.usageFloor).toEqual(floor);
    expect(d.desired?.size).toEqual(floor);
    expect(d.state.usageFloor).toEqual(floor);
    expect(d.resizeTo).toEqual(sub(node.allocatable, floor));
    // the balloon now holds 30Gi of 31Gi while 3.27Gi are used: over-committed by what is used beyond
    expect(d.state.overcommittedByUsage?.memory).toBe(used + 30 * GI - 31 * GI);
    // the requests' figure (the Events, the kubelet's admission) does not move with usage
    expect(d.state.overcommitted).toBeUndefined();
  });
});

describe('6. money: a host is priced once, whatever the number of kubelets on it', () => {
  const GI = 2 ** 30;
  const kubelet = (i: number) => ({
    name: `k${i}`,
    labels: {
      'node.kubernetes.io/instance-type': 'm5.2xlarge',
      'fleetscope.io/host-id': 'h1',
      'fleetscope.io/kubelets-per-host': '4',
    },
    capacity: amounts(8000, 32 * GI),
    allocatable: amounts(7900, 31 * GI),
  });
  const balloon = (i: number) => ({
    namespace: 'kube-system',
    name: `b${i}`,
    uid: `b${i}`,
    node: `k${i}`,
    balloon: true,
    requests: amounts(6000, 24 * GI),
  });
  it('four kubelets of one m5.2xlarge are worth at most the host ($280.32 a month)', () => {
    const { decisions } = decide({
      now: 0,
      nodes: [0, 1, 2, 3].map(kubelet),
      pods: [0, 1, 2, 3].map(balloon),
      policies: [],
      requests: [],
      previous: {},
    });
    const total = decisions.reduce((sum, d) => sum + (monthlyValue(d.state) ?? 0), 0);
    // each balloon holds 3/4 of the host: together 3/4 of one host's price, not three hosts'
    expect(total).toBeCloseTo(0.384 * 730 * 0.75, 2);
    expect(decisions[0]?.state.price).toMatchObject({ sharedBy: 4, hourlyUsd: 0.096 });
  });
  it('the shipped table is scaled to the node region; an unknown region is unpriced, never us-east-1 silently', () => {
    const labels = (region: string) => ({
      'node.kubernetes.io/instance-type': 'm5.2xlarge',
      'topology.kubernetes.io/region': region,
    });
    expect(nodePrice(labels('eu-west-1'), [])).toEqual({
      instanceType: 'm5.2xlarge',
      hourlyUsd: 0.4262,
      from: 'table',
      region: 'eu-west-1',
    });
    expect(nodePrice(labels('us-east-1'), [])?.hourlyUsd).toBe(0.384);
    expect(nodePrice(labels('xx-nowhere-1'), [])).toBeUndefined();
    expect(nodePrice(labels('xx-nowhere-1'), [{ 'm5.2xlarge': 0.5 }])?.hourlyUsd).toBe(0.5);
  });
});
