/**
 * In-place resize through pods/resize (client-node, strategic merge patch) and the simulated kubelet:
 * actuation, Deferred (retried when room appears), Infeasible, critical-pod preemption, the 422 rules,
 * and the version differences (1.32 status.resize, 1.33 memory-limit rule, 1.35 conditions).
 */
import {
  ApiException,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type V1Pod,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import { kubeConfigFor } from './helpers.js';

let sim: Simulator;
const clients: Record<string, CoreV1Api> = {};
const SMP = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

/** A node with a known allocatable (2 CPUs, 4 GiB) in every cluster. */
function addNode(cluster: string, name: string): void {
  sim.cluster(cluster).store.put('nodes', {
    metadata: { name, labels: { 'kubernetes.io/hostname': name } },
    spec: {},
    status: {
      capacity: { cpu: '2', memory: '4Gi', pods: '110' },
      allocatable: { cpu: '2', memory: '4Gi', pods: '110' },
      conditions: [
        { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' },
      ],
    },
  });
}

const pod = (
  name: string,
  node: string,
  requests: Record<string, string>,
  limits?: Record<string, string>,
  priorityClassName?: string,
): V1Pod => ({
  metadata: { name },
  spec: {
    nodeName: node,
    priorityClassName,
    containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10', resources: { requests, limits } }],
  },
});

const resize = (
  cluster: string,
  name: string,
  requests: Record<string, string>,
  limits?: Record<string, string>,
) =>
  (clients[cluster] as CoreV1Api).patchNamespacedPodResize(
    {
      name,
      namespace: 'default',
      body: { spec: { containers: [{ name: 'app', resources: { requests, limits } }] } },
    },
    SMP,
  );

const read = (cluster: string, name: string) =>
  (clients[cluster] as CoreV1Api).readNamespacedPod({ name, namespace: 'default' });
const conditions = (p: V1Pod) =>
  (p.status?.conditions ?? [])
    .filter((c) => c.type.startsWith('PodResize'))
    .map((c) => [c.type, c.reason ?? '', c.message ?? '']);

beforeAll(async () => {
  sim = await startSimulator({
    clusters: [
      { name: 'v135', nodes: 0 },
      { name: 'v133', nodes: 0, kubernetesVersion: '1.33.5' },
      { name: 'v132', nodes: 0, kubernetesVersion: '1.32.13' },
    ],
  });
  for (const c of ['v135', 'v133', 'v132']) {
    addNode(c, 'n1');
    clients[c] = kubeConfigFor(sim, c).makeApiClient(CoreV1Api);
  }
});
afterAll(async () => {
  await sim?.stop();
});

describe('resize on a 1.35 cluster', () => {
  it('starts bound pods with their resources reported', async () => {
    const c = clients.v135 as CoreV1Api;
    await c.createNamespacedPod({
      namespace: 'default',
      body: pod('a', 'n1', { cpu: '500m', memory: '512Mi' }, { cpu: '500m', memory: '512Mi' }),
    });
    await c.createNamespacedPod({
      namespace: 'default',
      body: pod('b', 'n1', { cpu: '500m', memory: '256Mi' }),
    });
    const a = await read('v135', 'a');
    expect(a.status?.phase).toBe('Running');
    expect(a.status?.qosClass).toBe('Guaranteed');
    expect(a.metadata?.generation).toBe(1);
    expect(a.status?.containerStatuses?.[0]?.resources).toEqual({
      limits: { cpu: '500m', memory: '512Mi' },
      requests: { cpu: '500m', memory: '512Mi' },
    });
    expect(a.status?.containerStatuses?.[0]?.allocatedResources).toEqual({ cpu: '500m', memory: '512Mi' });
  });

  it('actuates a resize that fits: PodResizeInProgress, then status resources follow the spec', async () => {
    const patched = await resize('v135', 'a', { cpu: '800m' }, { cpu: '800m' });
    expect(patched.spec?.containers[0]?.resources?.requests).toEqual({ cpu: '800m', memory: '512Mi' });
    expect(patched.metadata?.generation).toBe(2);
    const during = await read('v135', 'a');
    expect(conditions(during)).toEqual([['PodResizeInProgress', '', '']]);
    expect(during.status?.containerStatuses?.[0]?.allocatedResources).toEqual({
      cpu: '800m',
      memory: '512Mi',
    });
    expect(during.status?.containerStatuses?.[0]?.resources?.requests?.cpu).toBe('500m');
    const done = await read('v135', 'a');
    expect(conditions(done)).toEqual([]);
    expect(done.status?.containerStatuses?.[0]?.resources).toEqual({
      limits: { cpu: '800m', memory: '512Mi' },
      requests: { cpu: '800m', memory: '512Mi' },
    });
    expect(done.status?.observedGeneration).toBe(2);
  });

  it('defers a resize that fits the node but not what is free, and applies it when room appears', async () => {
    await resize('v135', 'a', { cpu: '1800m' }, { cpu: '1800m' });
    const deferred = await read('v135', 'a');
    expect(conditions(deferred)).toEqual([
      [
        'PodResizePending',
        'Deferred',
        "Node didn't have enough resource: cpu, requested: 1800, used: 500, capacity: 2000",
      ],
    ]);
    expect(deferred.status?.containerStatuses?.[0]?.resources?.requests?.cpu).toBe('800m');
    sim.clock.advance(60_000);
    expect(conditions(await read('v135', 'a'))[0]?.[1]).toBe('Deferred');
    await (clients.v135 as CoreV1Api).deleteNamespacedPod({ name: 'b', namespace: 'default' });
    sim.clock.advance(1_000);
    const applied = await read('v135', 'a');
    expect(conditions(applied)).toEqual([]);
    expect(applied.status?.containerStatuses?.[0]?.resources?.requests?.cpu).toBe('1800m');
  });

  it('marks a resize beyond the node allocatable Infeasible and does not retry it', async () => {
    await resize('v135', 'a', { cpu: '3' }, { cpu: '3' });
    const p = await read('v135', 'a');
    expect(conditions(p)).toEqual([
      [
        'PodResizePending',
        'Infeasible',
        "Node didn't have enough capacity: cpu, requested: 3000, capacity: 2000",
      ],
    ]);
    sim.clock.advance(600_000);
    expect(conditions(await read('v135', 'a'))[0]?.[1]).toBe('Infeasible');
    // Reverting the spec to what is allocated clears the pending resize.
    await resize('v135', 'a', { cpu: '1800m' }, { cpu: '1800m' });
    expect(conditions(await read('v135', 'a'))).toEqual([]);
  });

  it('lets a critical pod evict lower-priority pods to make room', async () => {
    const c = clients.v135 as CoreV1Api;
    await c.createNamespacedPod({
      namespace: 'default',
      body: pod('low', 'n1', { cpu: '100m', memory: '64Mi' }),
    });
    await c.createNamespacedPod({
      namespace: 'default',
      body: pod('crit', 'n1', { cpu: '50m', memory: '64Mi' }, undefined, 'system-node-critical'),
    });
    expect((await read('v135', 'crit')).spec?.priority).toBe(2000001000);
    await resize('v135', 'crit', { cpu: '150m' });
    const low = await read('v135', 'low');
    expect(low.status?.phase).toBe('Failed');
    expect(low.status?.reason).toBe('Preempting');
    await read('v135', 'crit');
    expect((await read('v135', 'crit')).status?.containerStatuses?.[0]?.resources?.requests?.cpu).toBe(
      '150m',
    );
  });

  it('rejects a QoS class change with 422 Invalid and the recorded causes', async () => {
    const err = await resize('v135', 'a', { cpu: '1' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiException);
    const e = err as ApiException<string>;
    expect(e.code).toBe(422);
    expect(JSON.parse(e.body)).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'Pod "a" is invalid: spec: Invalid value: "Guaranteed": Pod QOS Class may not change as a result of resizing',
      reason: 'Invalid',
      details: {
        name: 'a',
        kind: 'Pod',
        causes: [
          {
            reason: 'FieldValueInvalid',
            message: 'Invalid value: "Guaranteed": Pod QOS Class may not change as a result of resizing',
            field: 'spec',
          },
        ],
      },
      code: 422,
    });
  });

  it('rejects removed limits, non cpu/memory resources and resizePolicy changes; ignores image changes', async () => {
    const c = clients.v135 as CoreV1Api;
    const causes = async (body: object) => {
      const e = (await c
        .patchNamespacedPodResize({ name: 'a', namespace: 'default', body }, SMP)
        .catch((x: unknown) => x)) as ApiException<string>;
      expect(e.code).toBe(422);
      return JSON.parse(e.body).details.causes.map(
        (x: { field: string; message: string }) => `${x.field}: ${x.message.split('\n')[0]}`,
      );
    };
    expect(await causes({ spec: { containers: [{ name: 'app', resources: { limits: null } }] } })).toEqual([
      'spec: Invalid value: "Guaranteed": Pod QOS Class may not change as a result of resizing',
      'spec.containers[0].resources.limits: Forbidden: resource limits cannot be removed',
    ]);
    expect(
      await causes({
        spec: {
          containers: [
            {
              name: 'app',
              resources: { requests: { 'ephemeral-storage': '1Gi' }, limits: { 'ephemeral-storage': '1Gi' } },
            },
          ],
        },
      }),
    ).toEqual(['spec: Forbidden: only cpu and memory resources are mutable']);
    expect(
      await causes({
        spec: {
          containers: [
            { name: 'app', resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'RestartContainer' }] },
          ],
        },
      }),
    ).toEqual(['spec: Forbidden: only cpu and memory resources are mutable']);
    const before = await read('v135', 'a');
    const same = await c.patchNamespacedPodResize(
      {
        name: 'a',
        namespace: 'default',
        body: {
          spec: {
            containers: [
              { name: 'app', image: 'other:1' },
              { name: 'ghost', image: 'x' },
            ],
          },
        },
      },
      SMP,
    );
    expect(same.spec?.containers.map((x) => x.image)).toEqual(['registry.k8s.io/pause:3.10']);
    expect(same.metadata?.resourceVersion).toBe(before.metadata?.resourceVersion);
  });

  it('answers 404 for a missing pod and for PUT with a stale resourceVersion 409', async () => {
    const c = clients.v135 as CoreV1Api;
    const missing = (await resize('v135', 'nope', { cpu: '1' }).catch(
      (e: unknown) => e,
    )) as ApiException<string>;
    expect(missing.code).toBe(404);
    expect(JSON.parse(missing.body).message).toBe('pods "nope" not found');
    const current = await c.readNamespacedPodResize({ name: 'a', namespace: 'default' });
    await resize('v135', 'a', { cpu: '1700m' }, { cpu: '1700m' });
    const stale = (await c
      .replaceNamespacedPodResize({ name: 'a', namespace: 'default', body: current })
      .catch((e: unknown) => e)) as ApiException<string>;
    expect(stale.code).toBe(409);
  });

  it('allows a memory limit decrease with resizePolicy NotRequired (1.35)', async () => {
    const c = clients.v135 as CoreV1Api;
    await c.createNamespacedPod({
      namespace: 'default',
      body: pod('m', 'n1', { cpu: '10m', memory: '100Mi' }, { memory: '400Mi' }),
    });
    const p = await resize('v135', 'm', { memory: '100Mi' }, { memory: '300Mi' });
    expect(p.spec?.containers[0]?.resources?.limits?.memory).toBe('300Mi');
  });
});

describe('resize on older servers', () => {
  it('1.33 rejects a memory limit decrease unless resizePolicy is RestartContainer', async () => {
    const c = clients.v133 as CoreV1Api;
    await c.createNamespacedPod({
      namespace: 'default',
      body: pod('m', 'n1', { cpu: '10m', memory: '100Mi' }, { memory: '400Mi' }),
    });
    const e = (await resize('v133', 'm', { memory: '100Mi' }, { memory: '300Mi' }).catch(
      (x: unknown) => x,
    )) as ApiException<string>;
    expect(e.code).toBe(422);
    expect(JSON.parse(e.body).details.causes[0]).toEqual({
      reason: 'FieldValueForbidden',
      message: 'Forbidden: memory limits cannot be decreased unless resizePolicy is RestartContainer',
      field: 'spec.containers[0].resources.limits[memory]',
    });
    // A real 1.33.13 sets metadata.generation on pods (npm run fidelity); the refused resize left it at 1.
    expect((await read('v133', 'm')).metadata?.generation).toBe(1);
  });

  it('1.32 reports status.resize (Proposed, then InProgress, then cleared) and no conditions', async () => {
    const c = clients.v132 as CoreV1Api;
    await c.createNamespacedPod({
      namespace: 'default',
      body: pod('p', 'n1', { cpu: '100m', memory: '64Mi' }),
    });
    const patched = await resize('v132', 'p', { cpu: '200m' });
    expect(patched.status?.resize).toBe('Proposed');
    const during = await read('v132', 'p');
    expect(during.status?.resize).toBe('InProgress');
    expect(conditions(during)).toEqual([]);
    expect(during.status?.containerStatuses?.[0]?.allocatedResources).toBeUndefined();
    const done = await read('v132', 'p');
    expect(done.status?.resize).toBeUndefined();
    expect(done.status?.containerStatuses?.[0]?.resources?.requests?.cpu).toBe('200m');
    await resize('v132', 'p', { cpu: '5' });
    expect((await read('v132', 'p')).status?.resize).toBe('Infeasible');
  });
});
