/**
 * The simulated components' writes as a real apiserver receives them (local/sim/real/writes.ts), without
 * a server: what the DaemonSet controller, scheduler, kubelet and node lifecycle decide becomes a pod
 * create as the controller sends it, pods/binding, a /status update and a conditional node update; a
 * refusal is reported and the object read again. (The real-server suites are test/simreal/.)
 */
import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../local/sim/clock.js';
import { ClusterState } from '../../local/sim/cluster.js';
import type { Json } from '../../local/sim/json.js';
import { buildNode, nodeShape } from '../../local/sim/nodes.js';
import type { RealApi } from '../../local/sim/real/api.js';
import { ApiMirror } from '../../local/sim/real/mirror.js';
import { RealApiWrites, RemoteVersions } from '../../local/sim/real/writes.js';
import { ClusterAccessError } from '../../shared/k8s/errors.js';

interface Call {
  method: string;
  path: string;
  body: Json;
}

function setup(refuse?: (c: Call) => number | undefined) {
  const calls: Call[] = [];
  const api: RealApi = {
    get: async <T>() => ({}) as T,
    list: async () => [],
    async send<T>(method: string, path: string, body: unknown): Promise<T> {
      const call = { method, path, body: body as Json };
      calls.push(call);
      const status = refuse?.(call);
      if (status)
        throw new ClusterAccessError({
          cluster: 'u',
          operation: path,
          kind: 'http',
          status,
          retryable: false,
          detail: `answered ${status}`,
        });
      return { ...(body as object), metadata: { ...(body as Json).metadata, resourceVersion: '900' } } as T;
    },
  };
  const cluster = new ClusterState(
    { name: 'u', nodes: 1, kubernetesVersion: 'v1.36.2' },
    new ManualClock(Date.UTC(2026, 10, 2)),
  );
  const versions = new RemoteVersions();
  const writes = new RealApiWrites(cluster, api, versions);
  cluster.mirrorRealApiserver(writes, '', 1);
  /** An object as read from the server (resourceVersion kept aside, as the mirror does). */
  const read = (collection: string, key: string, obj: Json, rv = '100') => {
    versions.set(collection, key, rv);
    cluster.store.put(collection, key, obj);
    cluster.settle();
  };
  return { api, calls, cluster, writes, versions, read };
}

const node = (cluster: ClusterState) => {
  const n = buildNode(cluster, nodeShape(cluster, 0), Date.UTC(2026, 10, 1));
  n.spec = { ...n.spec, taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] };
  return n;
};

const daemonSet = {
  kind: 'DaemonSet',
  apiVersion: 'apps/v1',
  metadata: { name: 'agent', namespace: 'default', uid: 'ds-uid', generation: 1 },
  spec: {
    selector: { matchLabels: { app: 'agent' } },
    updateStrategy: { type: 'OnDelete' },
    template: {
      metadata: { labels: { app: 'agent' } },
      spec: {
        priorityClassName: 'system-node-critical',
        containers: [{ name: 'a', image: 'pause', resources: { requests: { cpu: '10m', memory: '8Mi' } } }],
      },
    },
  },
};

describe('the simulated components writing to a real apiserver', () => {
  it('node lifecycle: the not-ready taint removed by an update conditional on the version read', async () => {
    const { calls, cluster, writes, read } = setup();
    const n = node(cluster);
    read('nodes', n.metadata.name, n, '42');
    await writes.flush(() => {});
    const update = calls.find((c) => c.path === `/api/v1/nodes/${n.metadata.name}`);
    expect(update?.method).toBe('PUT');
    expect(update?.body.metadata.resourceVersion).toBe('42');
    expect(update?.body.spec.taints).toBeUndefined();
  });

  it('an update is never sent without the version it was decided from', async () => {
    const { calls, cluster, writes } = setup();
    const n = node(cluster);
    cluster.store.put('nodes', n.metadata.name, n); // in the cache, version unknown (a write failed)
    cluster.settle();
    await writes.flush(() => {});
    expect(calls.filter((c) => c.path.startsWith('/api/v1/nodes'))).toEqual([]);
  });

  it('a DaemonSet pod: created as the controller sends it, bound through pods/binding, started by a /status update', async () => {
    const { calls, cluster, writes, read } = setup();
    const n = node(cluster);
    read('namespaces', 'default', {
      kind: 'Namespace',
      apiVersion: 'v1',
      metadata: { name: 'default', uid: 'ns' },
    });
    read('nodes', n.metadata.name, { ...n, spec: {} });
    // Mirrored from the server, as every PriorityClass is (admission gives the pod its value).
    read('priorityclasses.scheduling.k8s.io', 'system-node-critical', {
      kind: 'PriorityClass',
      apiVersion: 'scheduling.k8s.io/v1',
      metadata: { name: 'system-node-critical' },
      value: 2_000_001_000,
    });
    read('daemonsets.apps', 'default/agent', daemonSet);
    await writes.flush(() => {});
    const podCalls = calls.filter((c) => c.path.includes('/pods'));
    expect(podCalls.map((c) => `${c.method} ${c.path.replace(/agent-[a-z0-9]{5}/, 'agent-x')}`)).toEqual([
      'POST /api/v1/namespaces/default/pods',
      'POST /api/v1/namespaces/default/pods/agent-x/binding',
      'PUT /api/v1/namespaces/default/pods/agent-x/status',
    ]);
    const [create, binding, status] = podCalls as [Call, Call, Call];
    expect(create.body.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'DaemonSet', name: 'agent', uid: 'ds-uid', controller: true }),
    ]);
    // What admission adds is left to the server's admission: priority, the service-account token volume.
    expect(create.body.metadata.uid).toBeUndefined();
    expect(create.body.status).toBeUndefined();
    expect(create.body.spec.priority).toBeUndefined();
    expect(create.body.spec.priorityClassName).toBe('system-node-critical');
    expect(JSON.stringify(create.body.spec)).not.toContain('kube-api-access-');
    expect(binding.body).toMatchObject({ kind: 'Binding', target: { kind: 'Node', name: n.metadata.name } });
    expect(status.body.status.phase).toBe('Running');
    expect(status.body.metadata.uid).toBeUndefined();
    expect(status.body.metadata.resourceVersion).toBeUndefined();
    expect(
      cluster.store.get('pods', create.path.length ? `default/${create.body.metadata.name}` : '')?.spec
        .nodeName,
    ).toBe(n.metadata.name);
  });

  it('a refused write is reported and the object read again; a create that lost a race is not a problem', async () => {
    const { cluster, writes, versions, read } = setup((c) =>
      c.path.startsWith('/api/v1/nodes/') ? 409 : c.path.endsWith('/serviceaccounts') ? 409 : undefined,
    );
    const n = node(cluster);
    read('namespaces', 'extra', {
      kind: 'Namespace',
      apiVersion: 'v1',
      metadata: { name: 'extra', uid: 'ns' },
    });
    read('nodes', n.metadata.name, n, '42');
    await writes.flush(() => {});
    expect(writes.problems).toEqual([
      expect.stringMatching(new RegExp(`^PUT /api/v1/nodes/${n.metadata.name}: .*409`)),
    ]);
    expect(versions.get('nodes', n.metadata.name)).toBeUndefined();
    expect(versions.get('serviceaccounts', 'extra/default')).toBeUndefined();
  });

  it('a read of the server keeps what is still to be sent, and drops what the server no longer has', async () => {
    const { api, cluster, writes, versions, read } = setup();
    const mirror = new ApiMirror(cluster, api, versions, (c, k) => writes.queued(c, k));
    read('configmaps', 'default/gone', {
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { name: 'gone', namespace: 'default' },
    });
    cluster.internalWrite('configmaps', 'default/new', {
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { name: 'new', namespace: 'default' },
    });
    await mirror.read(); // the server lists nothing yet
    expect(cluster.store.get('configmaps', 'default/new')).toBeDefined();
    expect(cluster.store.get('configmaps', 'default/gone')).toBeUndefined();
  });
});
