/**
 * The per-cycle views of nodes and pods (what every capability of a cycle reads), and the scheduler's
 * accounting of a pod's requests while a resize is pending (KEP-1287: max(spec unless Infeasible,
 * allocated, actual)).
 */
import { describe, expect, it } from 'vitest';
import { effectiveRequests, nodeFacts, type PodView, podView } from '../../shared/cycle/views.js';
import type { ContainerStatusLike, PodObject } from '../../shared/cycle/wire.js';

type Res = { cpu?: string; memory?: string };

function pod(opts: {
  phase?: string;
  spec?: Res[];
  allocated?: (Res | undefined)[];
  actual?: (Res | undefined)[];
  pending?: 'Deferred' | 'Infeasible';
  deleting?: boolean;
}): PodObject {
  const specs = opts.spec ?? [{ cpu: '100m', memory: '128Mi' }];
  const statuses: ContainerStatusLike[] = specs.map((_, i) => ({
    name: `c${i}`,
    ...(opts.allocated?.[i] ? { allocatedResources: opts.allocated[i] } : {}),
    ...(opts.actual?.[i] ? { resources: { requests: opts.actual[i] } } : {}),
  }));
  return {
    metadata: {
      name: 'p',
      namespace: 'ns',
      uid: 'u-1',
      resourceVersion: '42',
      creationTimestamp: '2026-11-02T00:00:00Z',
      labels: { app: 'x', 'fleetscope.io/balloon': 'true' },
      ownerReferences: [
        { kind: 'ReplicaSet', name: 'other', uid: 'r-0' },
        { kind: 'DaemonSet', name: 'balloons', uid: 'd-1', controller: true },
      ],
      ...(opts.deleting ? { deletionTimestamp: '2026-11-02T01:00:00Z' } : {}),
    },
    spec: {
      nodeName: 'n1',
      priority: 1_000_000_000,
      containers: specs.map((r, i) => ({ name: `c${i}`, resources: { requests: r } })),
    },
    status: {
      phase: opts.phase ?? 'Running',
      startTime: '2026-11-02T00:00:05Z',
      conditions: opts.pending ? [{ type: 'PodResizePending', status: 'True', reason: opts.pending }] : [],
      containerStatuses: statuses,
    },
  };
}

const view = (p: PodObject): PodView => podView(p) as PodView;
const MiB = 2 ** 20;

describe('podView', () => {
  it('keeps what node scope and balloons read, as numbers', () => {
    const v = view(
      pod({
        allocated: [{ cpu: '250m', memory: '256Mi' }],
        actual: [{ cpu: '200m', memory: '192Mi' }],
        deleting: true,
      }),
    );
    expect(v).toMatchObject({
      name: 'p',
      namespace: 'ns',
      uid: 'u-1',
      node: 'n1',
      phase: 'Running',
      terminating: true,
      priority: 1_000_000_000,
      balloon: true,
      owner: { kind: 'DaemonSet', name: 'balloons', uid: 'd-1' },
      resourceVersion: '42',
      createdAt: Date.parse('2026-11-02T00:00:00Z'),
      startTime: Date.parse('2026-11-02T00:00:05Z'),
    });
    expect(v.containers[0]).toMatchObject({
      name: 'c0',
      reqCpu: 100,
      reqMem: 128 * MiB,
      allocCpu: 250,
      allocMem: 256 * MiB,
      actCpu: 200,
      actMem: 192 * MiB,
      hasActual: true,
    });
  });

  it('keeps pods not scheduled yet (node ""), and says so when a pod is no balloon and has no controller', () => {
    const raw = pod({});
    raw.spec = { containers: raw.spec?.containers };
    raw.metadata = { ...raw.metadata, labels: {}, ownerReferences: [] };
    const v = view(raw);
    expect(v.node).toBe('');
    expect(v.balloon).toBe(false);
    expect(v.owner).toBeUndefined();
    expect(v.containers[0]?.hasActual).toBe(false);
    expect(podView({ metadata: {} })).toBeUndefined();
  });
});

describe('nodeFacts', () => {
  it('reads capacity, allocatable, readiness, cordon, resourceVersion and identity', () => {
    const n = nodeFacts({
      metadata: {
        name: 'n1',
        uid: 'u1',
        creationTimestamp: '2026-11-02T00:00:00Z',
        resourceVersion: '7',
        labels: { zone: 'a' },
      },
      spec: { unschedulable: true, taints: [{ key: 'k', effect: 'NoSchedule' }] },
      status: {
        capacity: { cpu: '4', memory: '16Gi' },
        allocatable: { cpu: '3920m', memory: '15Gi' },
        conditions: [
          { type: 'MemoryPressure', status: 'False' },
          { type: 'Ready', status: 'True' },
        ],
      },
    });
    expect(n).toEqual({
      name: 'n1',
      labels: { zone: 'a' },
      taints: [{ key: 'k', value: undefined, effect: 'NoSchedule' }],
      allocatableCpu: 3920,
      allocatableMemory: 15 * 1024 * MiB,
      capacityCpu: 4000,
      capacityMemory: 16 * 1024 * MiB,
      ready: true,
      unschedulable: true,
      resourceVersion: '7',
      uid: 'u1',
      createdAt: Date.UTC(2026, 10, 2),
    });
    expect(nodeFacts({ status: { conditions: [{ type: 'Ready', status: 'Unknown' }] } })).toMatchObject({
      ready: false,
      unschedulable: false,
      capacityCpu: 0,
      resourceVersion: '',
    });
  });
});

describe('effectiveRequests (the scheduler accounting while a resize is pending)', () => {
  it('is the spec requests while the node reports no actual resources', () => {
    expect(
      effectiveRequests(view(pod({ spec: [{ cpu: '100m', memory: '128Mi' }, { cpu: '50m' }] }))),
    ).toEqual({
      cpu: 150,
      memory: 128 * MiB,
    });
  });

  it('reserves a Deferred upsize at once: max(spec, allocated, actual)', () => {
    const p = pod({
      spec: [{ cpu: '500m', memory: '512Mi' }],
      allocated: [{ cpu: '200m', memory: '256Mi' }],
      actual: [{ cpu: '200m', memory: '256Mi' }],
      pending: 'Deferred',
    });
    expect(effectiveRequests(view(p))).toEqual({ cpu: 500, memory: 512 * MiB });
  });

  it('keeps the larger allocated or actual size while a downsize is under way', () => {
    const p = pod({
      spec: [{ cpu: '100m', memory: '128Mi' }],
      allocated: [{ cpu: '100m', memory: '128Mi' }],
      actual: [{ cpu: '300m', memory: '384Mi' }],
    });
    expect(effectiveRequests(view(p))).toEqual({ cpu: 300, memory: 384 * MiB });
  });

  it('does not count the spec of an Infeasible resize', () => {
    const p = pod({
      spec: [{ cpu: '5', memory: '64Gi' }],
      allocated: [{ cpu: '200m', memory: '256Mi' }],
      actual: [{ cpu: '150m', memory: '300Mi' }],
      pending: 'Infeasible',
    });
    expect(effectiveRequests(view(p))).toEqual({ cpu: 200, memory: 300 * MiB });
  });

  it('sums the containers, each by its own maximum per resource', () => {
    const p = pod({
      spec: [{ cpu: '100m', memory: '100Mi' }, { cpu: '100m' }],
      allocated: [{ cpu: '150m', memory: '50Mi' }, undefined],
      actual: [{ cpu: '120m', memory: '80Mi' }, {}],
    });
    expect(effectiveRequests(view(p))).toEqual({ cpu: 150 + 100, memory: 100 * MiB });
  });

  it('counts nothing for a pod that has finished', () => {
    for (const phase of ['Succeeded', 'Failed'])
      expect(effectiveRequests(view(pod({ phase, spec: [{ cpu: '1', memory: '1Gi' }] })))).toEqual({
        cpu: 0,
        memory: 0,
      });
    expect(effectiveRequests(view(pod({ phase: 'Pending' }))).cpu).toBe(100);
  });
});
