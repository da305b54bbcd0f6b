/**
 * The in-place resize mechanism on a real kube-apiserver, with this test as the kubelet (there is none):
 * a pod bound to a node and reported Running through pods/status, resized by fleetscope's Resizer over
 * its own client, then Deferred by a PodResizePending condition and Completed once the container status
 * reports the new resources, each outcome read from the pod as the server returns it. A simulator of
 * the same version, with no kubelet either, must answer every step alike (generation, observedGeneration,
 * status.resize and conditions as the server keeps them, and 1.36's refusal of a resize beyond the
 * node's allocatable at admission).
 */
import { expect, it } from 'vitest';
import { clusterResizeApi } from '../../shared/resize/api.js';
import { Resizer } from '../../shared/resize/resizer.js';
import type { PodLike, ResizeRecord, ResizeReport } from '../../shared/resize/types.js';
import { type ApiBackend, onBothBackends } from '../support/backends.js';
import { describeRealApiserver, SKEW_VERSIONS } from '../support/real-apiserver.js';

const NS = 'resizing';
const POD = `/api/v1/namespaces/${NS}/pods/agent`;
const SMP = 'application/strategic-merge-patch+json';
const STARTED = '2026-11-26T10:00:00Z';
const resources = (cpu: string, memory: string) => ({ requests: { cpu, memory }, limits: { cpu, memory } });

const ok = async (b: ApiBackend, method: string, path: string, body?: unknown, contentType?: string) => {
  const r = await b.raw(method, path, { body, contentType });
  if (r.status >= 300) throw new Error(`${b.name}: ${method} ${path}: ${r.status} ${r.text}`);
  return r.json as PodLike & Record<string, never>;
};

/** What the kubelet reports for the container: running, with the resources it runs with. */
const running = (cpu: string, memory: string) => ({
  name: 'collector',
  image: 'busybox',
  imageID: 'docker.io/library/busybox@sha256:0',
  containerID: 'containerd://collector',
  ready: true,
  started: true,
  restartCount: 0,
  state: { running: { startedAt: STARTED } },
  allocatedResources: { cpu, memory },
  resources: resources(cpu, memory),
});

/** The pod's resize-related state as the server keeps it (compared across backends). */
const resizeState = (pod: PodLike & { metadata?: { generation?: number } }) => ({
  generation: pod.metadata?.generation,
  observedGeneration: (pod.status as { observedGeneration?: number } | undefined)?.observedGeneration,
  resize: pod.status?.resize,
  conditions: (pod.status?.conditions ?? []).map(
    (c) => `${c.type}=${c.status}${c.reason ? `/${c.reason}` : ''}`,
  ),
  spec: pod.spec?.containers?.map((c) => c.resources),
});

const outcome = (r: ResizeReport | undefined) =>
  r?.kind === 'resized' ? r.outcome : r?.kind === 'refused' ? `${r.refusal}: ${r.message}` : undefined;

async function scenario(b: ApiBackend) {
  const record: Record<string, unknown> = {};
  await ok(b, 'POST', '/api/v1/nodes', { metadata: { name: 'node-a' } });
  // The kubelet registers what the node offers (a real 1.36 refuses a resize beyond it).
  const offers = { cpu: '1', memory: '1Gi', pods: '110' };
  await ok(
    b,
    'PATCH',
    '/api/v1/nodes/node-a/status',
    { status: { capacity: offers, allocatable: offers } },
    SMP,
  );
  await ok(b, 'POST', '/api/v1/namespaces', { metadata: { name: NS } });
  await ok(b, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: 'default' } });
  await ok(b, 'POST', `/api/v1/namespaces/${NS}/pods`, {
    metadata: { name: 'agent' },
    spec: {
      nodeName: 'node-a',
      containers: [{ name: 'collector', image: 'busybox', resources: resources('100m', '64Mi') }],
    },
  });
  // The kubelet: the pod runs with what it asked for.
  const ready = { type: 'Ready', status: 'True', lastTransitionTime: STARTED };
  let pod = await ok(
    b,
    'PATCH',
    `${POD}/status`,
    { status: { phase: 'Running', conditions: [ready], containerStatuses: [running('100m', '64Mi')] } },
    SMP,
  );
  record.running = resizeState(pod);

  const resizer = new Resizer(clusterResizeApi(await b.client()), { now: () => Date.parse(STARTED) });
  const asked = await resizer.resize(
    { pod, desired: { collector: { requests: { cpu: 200 }, limits: { cpu: 200 } } } },
    undefined,
  );
  record.asked = outcome(asked.report);
  pod = await ok(b, 'GET', POD);
  record.afterRequest = resizeState(pod);
  let state: ResizeRecord | undefined = asked.record;

  // The kubelet cannot fit it now: PodResizePending/Deferred.
  const pending = {
    type: 'PodResizePending',
    status: 'True',
    reason: 'Deferred',
    message: 'Node did not have enough resource: cpu',
    lastTransitionTime: STARTED,
  };
  pod = await ok(b, 'PATCH', `${POD}/status`, { status: { conditions: [ready, pending] } }, SMP);
  const deferred = resizer.observe(pod, state);
  record.deferred = [outcome(deferred.report), resizeState(pod)];
  state = deferred.record;

  // Later it fits: the condition goes, and the container runs with the new resources.
  const { conditions: _c, ...rest } = pod.status ?? {};
  pod = await ok(b, 'PUT', `${POD}/status`, {
    ...pod,
    status: { ...rest, conditions: [ready], containerStatuses: [running('200m', '64Mi')] },
  });
  const completed = resizer.observe(pod, state);
  record.completed = [outcome(completed.report), resizeState(pod)];

  // More than the node offers at all.
  const beyond = await new Resizer(clusterResizeApi(await b.client())).resize(
    { pod, desired: { collector: { requests: { cpu: 4000 }, limits: { cpu: 4000 } } } },
    undefined,
  );
  record.beyondNode = outcome(beyond.report);
  return record;
}

describeRealApiserver(
  'resize outcomes with the test as the kubelet',
  (server, version) => {
    const records = onBothBackends(server, scenario);

    it('on the real server: Requested, then Deferred, then Completed, read from the pod alone', () => {
      const r = records.get('real') ?? {};
      expect(r.asked).toBe('Requested');
      expect((r.afterRequest as { spec: unknown }).spec).toEqual([resources('200m', '64Mi')]);
      expect((r.deferred as unknown[])[0]).toBe('Deferred: Node did not have enough resource: cpu');
      expect((r.completed as unknown[])[0]).toBe('Completed');
      // Pods have a generation on both (KEP-5067), and a resize is a new one.
      expect((r.running as { generation?: number }).generation).toBe(1);
      expect((r.afterRequest as { generation?: number }).generation).toBe(2);
    });

    it('a resize beyond what the node offers: accepted by 1.33 (the kubelet judges), Infeasible at 1.36 admission', () => {
      const r = records.get('real') ?? {};
      if (version === '1.33') expect(r.beyondNode).toBe('Requested');
      else
        expect(r.beyondNode).toBe(
          // The apiserver's 403 (cause NodeCapacity) is the node's answer, not RBAC's: Infeasible.
          `Infeasible: pods "agent" is forbidden: node didn't have enough allocatable resources: cpu, requested: 4000, allocatable: 1000`,
        );
    });

    it('the simulator answers every step as the real server did', () => {
      expect(records.get('sim')).toEqual(records.get('real'));
    });
  },
  { versions: SKEW_VERSIONS },
);
