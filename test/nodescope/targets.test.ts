import { describe, expect, it } from 'vitest';
import { placementProblem, toleratesTaint } from '../../shared/nodescope/eligibility.js';
import type { DaemonSetObject, VpaObject } from '../../shared/nodescope/k8s-types.js';
import { applyModeOf, resolveTargets, selectorString } from '../../shared/nodescope/targets.js';

const ds = (name: string, over: Partial<NonNullable<DaemonSetObject['spec']>> = {}): DaemonSetObject => ({
  metadata: { name, namespace: 'mon', uid: `uid-${name}` },
  spec: {
    selector: { matchLabels: { app: name } },
    template: {
      spec: {
        containers: [
          {
            name: 'a',
            resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
          },
          { name: 'b', resources: { requests: { cpu: '50m' } } },
        ],
      },
    },
    ...over,
  },
});

const vpa = (
  name: string,
  spec: NonNullable<VpaObject['spec']>,
  annotations?: Record<string, string>,
): VpaObject => ({
  metadata: { name, namespace: 'mon', uid: `vpa-${name}`, ...(annotations ? { annotations } : {}) },
  spec,
});

const dsRef = (name: string) => ({ apiVersion: 'apps/v1', kind: 'DaemonSet', name });

describe('targets', () => {
  it('takes node scope from spec.scope or the fleetscope.io/scope annotation, and ignores other VPAs', () => {
    const { targets, rejected } = resolveTargets(
      [
        vpa('by-spec', { targetRef: dsRef('one'), scope: 'node', updatePolicy: { updateMode: 'Auto' } }),
        vpa('by-annotation', { targetRef: dsRef('two') }, { 'fleetscope.io/scope': 'node' }),
        vpa('plain', { targetRef: dsRef('three') }),
      ],
      [ds('one'), ds('two'), ds('three')],
    );
    expect(rejected).toEqual([]);
    expect(targets.map((t) => [t.vpa.name, t.via, t.updateMode, t.apply])).toEqual([
      ['by-annotation', 'annotation', 'Auto', 'inplace'],
      ['by-spec', 'spec', 'Auto', 'inplace'],
    ]);
    expect(targets[0]?.containers).toEqual([
      { name: 'a', requests: { cpu: 100, memory: 134217728 }, limits: { memory: 268435456 } },
      { name: 'b', requests: { cpu: 50 }, limits: {} },
    ]);
    expect(targets[0]?.selector).toBe('app=two');
  });

  it('refuses node scope on anything but a DaemonSet, with the reason, and never acts on it', () => {
    const { targets, rejected } = resolveTargets(
      [
        vpa('deploy', {
          targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
          scope: 'node',
        }),
        vpa('label', { targetRef: dsRef('one'), scope: 'kubernetes.io/host name' }),
        vpa('zone-deploy', {
          targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
          scope: 'topology.kubernetes.io/zone',
        }),
        vpa('annotated', { targetRef: dsRef('one') }, { 'fleetscope.io/scope': '-gpu' }),
        vpa('missing', { targetRef: dsRef('nope'), scope: 'node' }),
        vpa('mode', { targetRef: dsRef('one'), scope: 'node', updatePolicy: { updateMode: 'Sometimes' } }),
      ],
      [ds('one')],
    );
    expect(targets).toEqual([]);
    expect(rejected).toHaveLength(6);
    const reasons = Object.fromEntries(rejected.map((r) => [r.vpa, r.reason]));
    expect(reasons.deploy).toBe('node scope applies to DaemonSets only; the target is a Deployment (web)');
    expect(reasons.label).toBe(
      'spec.scope "kubernetes.io/host name" is not a node label key: a label key is an optional DNS subdomain prefix and "/", then a name of alphanumerics, "-", "_" and "." that starts and ends alphanumeric',
    );
    expect(reasons['zone-deploy']).toBe(
      'scope topology.kubernetes.io/zone applies to DaemonSets only; the target is a Deployment (web)',
    );
    expect(reasons.annotated).toMatch(/^annotation fleetscope.io\/scope "-gpu" is not a node label key/);
    expect(reasons.missing).toBe('DaemonSet mon/nope does not exist');
    expect(reasons.mode).toMatch(/updateMode "Sometimes"/);
  });

  it('takes any node label key as the scope: per node for node and hostname, else per label value', () => {
    const { targets, rejected } = resolveTargets(
      [
        vpa('a', { targetRef: dsRef('one'), scope: 'node' }),
        vpa('b', { targetRef: dsRef('two'), scope: 'kubernetes.io/hostname' }),
        vpa('c', { targetRef: dsRef('three'), scope: 'nvidia.com/gpu.present' }),
        vpa(
          'd',
          { targetRef: dsRef('four') },
          {
            'fleetscope.io/scope': 'node',
            'fleetscope.io/new-node-group': 'topology.kubernetes.io/zone',
          },
        ),
      ],
      [ds('one'), ds('two'), ds('three'), ds('four')],
    );
    expect(rejected).toEqual([]);
    expect(Object.fromEntries(targets.map((t) => [t.vpa.name, t.scope]))).toEqual({
      a: { key: 'node', perNode: true, groupLabel: 'node.kubernetes.io/instance-type' },
      b: { key: 'kubernetes.io/hostname', perNode: true, groupLabel: 'node.kubernetes.io/instance-type' },
      c: { key: 'nvidia.com/gpu.present', perNode: false, groupLabel: 'nvidia.com/gpu.present' },
      d: { key: 'node', perNode: true, groupLabel: 'topology.kubernetes.io/zone' },
    });
  });

  it('refuses a balloon DaemonSet (KEP-5620): its pods hold capacity that does not exist', () => {
    const balloon = ds('fleetscope-balloon');
    balloon.spec!.template!.metadata = {
      labels: { app: 'fleetscope-balloon', 'fleetscope.io/balloon': 'true' },
    };
    const { targets, rejected } = resolveTargets(
      [
        vpa('b', {
          targetRef: dsRef('fleetscope-balloon'),
          scope: 'node',
          updatePolicy: { updateMode: 'Auto' },
        }),
      ],
      [balloon],
    );
    expect(targets).toEqual([]);
    expect(rejected[0]?.reason).toMatch(/runs balloon pods \(fleetscope.io\/balloon\)/);
  });

  it('lets the first VPA (by name) have a DaemonSet and refuses a second one', () => {
    const { targets, rejected } = resolveTargets(
      [
        vpa('b-second', { targetRef: dsRef('one'), scope: 'node' }),
        vpa('a-first', { targetRef: dsRef('one'), scope: 'node' }),
      ],
      [ds('one')],
    );
    expect(targets.map((t) => t.vpa.name)).toEqual(['a-first']);
    expect(rejected[0]?.reason).toBe(
      'DaemonSet mon/one is already sized per node by VerticalPodAutoscaler a-first',
    );
  });

  it('resolves container policies by name, then "*", with quantities as integers', () => {
    const { targets } = resolveTargets(
      [
        vpa('p', {
          targetRef: dsRef('one'),
          scope: 'node',
          resourcePolicy: {
            containerPolicies: [
              { containerName: '*', minAllowed: { cpu: '20m' }, controlledValues: 'RequestsOnly' },
              { containerName: 'b', mode: 'Off' },
              { containerName: 'a', maxAllowed: { cpu: '2', memory: '1Gi' }, controlledResources: ['cpu'] },
            ],
          },
        }),
      ],
      [ds('one')],
    );
    expect(targets[0]?.policies).toEqual({
      a: { maxAllowed: { cpu: 2000, memory: 1073741824 }, controlledResources: ['cpu'] },
      b: { mode: 'Off' },
    });
  });

  it('maps update modes: Off recommends only, Initial sizes new pods, the others resize in place', () => {
    expect(
      ['Off', 'Initial', 'Recreate', 'InPlaceOrRecreate', 'Auto'].map((m) => applyModeOf(m as never)),
    ).toEqual(['off', 'initial', 'inplace', 'inplace', 'inplace']);
  });

  it('writes label selectors as the list calls expect them', () => {
    expect(
      selectorString({
        matchLabels: { 'k8s-app': 'x', app: 'y' },
        matchExpressions: [
          { key: 'tier', operator: 'In', values: ['b', 'a'] },
          { key: 'skip', operator: 'DoesNotExist' },
          { key: 'has', operator: 'Exists' },
          { key: 'env', operator: 'NotIn', values: ['dev'] },
        ],
      }),
    ).toBe('app=y,k8s-app=x,tier in (a,b),!skip,has,env notin (dev)');
    expect(selectorString({})).toBeUndefined();
  });
});

describe('where a DaemonSet can run', () => {
  const node = (over: object = {}) => ({
    name: 'n1',
    labels: { 'kubernetes.io/os': 'linux', pool: 'general' },
    taints: [],
    allocatableCpu: 2000,
    allocatableMemory: 8e9,
    ...over,
  });

  it('honours nodeSelector and required node affinity (labels and metadata.name)', () => {
    expect(placementProblem({ tolerations: [], nodeSelector: { pool: 'general' } }, node())).toBeUndefined();
    expect(placementProblem({ tolerations: [], nodeSelector: { pool: 'gpu' } }, node())).toBe(
      'nodeSelector pool=gpu does not match',
    );
    const byName = { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n2'] }] };
    expect(placementProblem({ tolerations: [], requiredTerms: [byName] }, node())).toBe(
      'required node affinity does not match',
    );
    const either = [byName, { matchExpressions: [{ key: 'pool', operator: 'NotIn', values: ['gpu'] }] }];
    expect(placementProblem({ tolerations: [], requiredTerms: either }, node())).toBeUndefined();
  });

  it('ignores nodes with untolerated NoSchedule/NoExecute taints, with the DaemonSet controller tolerations added', () => {
    const gpu = node({ taints: [{ key: 'nvidia.com/gpu', value: 'true', effect: 'NoSchedule' }] });
    expect(placementProblem({ tolerations: [] }, gpu)).toBe(
      'taint nvidia.com/gpu=true:NoSchedule is not tolerated',
    );
    expect(placementProblem({ tolerations: [{ operator: 'Exists' }] }, gpu)).toBeUndefined();
    expect(
      placementProblem(
        { tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }] },
        gpu,
      ),
    ).toBeUndefined();
    const cordoned = node({ taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }] });
    expect(placementProblem({ tolerations: [] }, cordoned)).toBeUndefined();
    const soft = node({ taints: [{ key: 'x', effect: 'PreferNoSchedule' }] });
    expect(placementProblem({ tolerations: [] }, soft)).toBeUndefined();
    expect(toleratesTaint({ key: 'a', value: 'b' }, { key: 'a', value: 'c', effect: 'NoSchedule' })).toBe(
      false,
    );
  });
});
