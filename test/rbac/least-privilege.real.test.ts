/**
 * Least privilege on a real kube-apiserver: the RBAC `fleetscope rbac` generates for a capability (with
 * the fleet core) is applied to the real server and bound to a user of its own, authenticated by a
 * client certificate; the capability then runs through the real handlers under exactly that identity.
 * Nothing it does is refused, and what no capability needs (secrets, deleting pods, writing nodes,
 * resizing pods for inventory) is refused with the real server's 403, whose Status the simulator must
 * answer word for word (test/rbac/least-privilege.sim.test.ts asserts the same bodies).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.js';
import { validatePolicy } from '../../shared/balloons/policy.js';
import { DynamoBalloonStore } from '../../shared/balloons/store-dynamo.js';
import { CAPABILITIES } from '../../shared/capabilities.js';
import { resetClusterConnector } from '../../shared/fleet/cluster-access.js';
import { DynamoRegistry } from '../../shared/fleet/registry-dynamo.js';
import { rbacManifests, withRequired } from '../../shared/platform/rbac-manifests.js';
import { busEvent } from '../support/bus-event.js';
import { claimsThroughDrift, expectRepaired } from '../support/claims-drift.js';
import { collectionPath } from '../support/rbac-paths.js';
import { describeRealApiserver } from '../support/real-apiserver.js';
import { forbidden, prepareCluster } from './real-cluster.js';

const CAPS = ['inventory', 'claims', 'nodescope', 'balloons'] as const;
type Cap = (typeof CAPS)[number];
const userOf = (cap: Cap) => `fs-${cap}`;
const work = (cluster: string, capability: string) =>
  busEvent('ClusterWorkRequested', {
    cluster,
    capability,
    cycleId: `${capability}/1`,
    requestedAt: new Date().toISOString(),
  });

describeRealApiserver('least privilege under the generated RBAC', (server, version) => {
  let runtime: LocalRuntime;
  let dir: string;
  const admin = async (method: string, path: string, body?: unknown, contentType?: string) => {
    const r = await server.raw(method, path, { body, contentType });
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
    return r.json;
  };

  beforeAll(async () => {
    runtime = await startLocalRuntime({ retryDelayMs: 5 });
    process.env.FLEETSCOPE_BALLOONS_SETTLE_MS = '0';
    dir = await mkdtemp(join(tmpdir(), 'fleetscope-rbac-real-'));
    await prepareCluster(admin, server.established);
    const registry = new DynamoRegistry(runtime.db, runtime.table);
    for (const cap of CAPS) {
      const caps = withRequired(CAPABILITIES, ['fleet', cap]);
      for (const m of rbacManifests(caps, {
        subjects: [{ kind: 'User', name: userOf(cap) }],
        prefix: userOf(cap),
      }))
        await admin('POST', collectionPath(m.object as never), m.object);
      const path = join(dir, `${cap}.yaml`);
      await writeFile(path, await server.api().kubeconfigFor(userOf(cap)));
      await registry.add({
        name: `real-${cap}`,
        kubeconfig: { kind: 'file', path, context: 'envtest' },
        labels: {},
        registeredAt: new Date().toISOString(),
      });
    }
  }, 120_000);
  afterAll(async () => {
    delete process.env.FLEETSCOPE_BALLOONS_SETTLE_MS;
    await resetClusterConnector();
    await runtime?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('inventory: a full inventory of the cluster under its own role', async () => {
    await runtime.invoker.invoke('inventory', work('real-inventory', 'inventory'));
    const status = await new DynamoRegistry(runtime.db, runtime.table).getStatus('real-inventory');
    expect(status).toMatchObject({ reachable: true, nodeCount: 2, serverVersion: server.api().version });
    expect(status?.serverVersion).toMatch(new RegExp(`^v${version.replace('.', '\\.')}\\.`));
  });

  it('claims: registration creates the CRDs, then membership, custom claims and drift repair', async () => {
    const c = 'real-claims';
    const got = await claimsThroughDrift(
      {
        runtime,
        admin,
        registered: (cluster) =>
          busEvent('ClusterRegistered', { cluster, labels: {}, registeredAt: new Date().toISOString() }),
        check: (cluster) => work(cluster, 'claims'),
      },
      c,
    );
    const kubeSystem = await admin('GET', '/api/v1/namespaces/kube-system');
    expectRepaired(got, kubeSystem.metadata.uid);
    expect(runtime.invoker.deadLetters).toEqual([]);
  });

  /** One cluster cycle (node scope, then balloons) through the real handler. */
  const clusterCycle = async (cap: Cap) => {
    const out = (await runtime.invoker.invoke('cycle', work(`real-${cap}`, 'cycle'))) as Record<
      string,
      unknown
    >;
    expect(out.error, 'the cycle failed').toBeUndefined();
    return out;
  };

  it('nodescope: a cycle reads the scoped CRD, the DaemonSet, its VPA and pods with no refusal', async () => {
    // No metrics API on a bare server, so no history and nothing to write yet: this covers node scope's
    // reads under its role; its writes (annotations, VPA status, resizes) need usage samples.
    const out = (await clusterCycle('nodescope')).nodescope;
    expect(out).toMatchObject({
      vpaCrd: 'scoped',
      metricsApi: 'absent',
      daemonSets: 1,
      nodes: 2,
      errors: [],
    });
    expect(runtime.invoker.deadLetters).toEqual([]);
  });

  it('balloons: the DaemonSet and PriorityClass created under the role', async () => {
    const store = new DynamoBalloonStore(runtime.db, runtime.table);
    const policy = { name: 'all', selector: 'kubernetes.io/os=linux', max: { cpu: '2', memory: '4Gi' } };
    await store.putPolicy('real-balloons', validatePolicy(policy));
    await clusterCycle('balloons');
    await clusterCycle('balloons');
    expect(
      (await admin('GET', '/apis/apps/v1/namespaces/kube-system/daemonsets/fleetscope-balloon')).metadata
        .name,
    ).toBe('fleetscope-balloon');
    expect(
      (await admin('GET', '/apis/scheduling.k8s.io/v1/priorityclasses/fleetscope-balloon')).value,
    ).toBeTypeOf('number');
    expect(runtime.invoker.deadLetters).toEqual([]);
  });

  it('refuses what no capability needs, with the real 403 Status', async () => {
    const as = (cap: Cap) => ({ user: userOf(cap) });
    const secrets = await server.raw('GET', '/api/v1/namespaces/kube-system/secrets', as('claims'));
    expect(secrets.status).toBe(403);
    expect(secrets.json).toEqual(
      forbidden(userOf('claims'), 'list', 'secrets', { namespace: 'kube-system' }),
    );
    const del = await server.raw('DELETE', '/api/v1/namespaces/monitoring/pods/agent-1', as('claims'));
    expect(del.json).toEqual(
      forbidden(userOf('claims'), 'delete', 'pods', { namespace: 'monitoring', name: 'agent-1' }),
    );
    const patch = await server.raw('PATCH', '/api/v1/nodes/node-a', {
      ...as('inventory'),
      body: { metadata: { labels: { x: 'y' } } },
      contentType: 'application/merge-patch+json',
    });
    expect(patch.json).toEqual(forbidden(userOf('inventory'), 'patch', 'nodes', { name: 'node-a' }));
    const resize = await server.raw('PATCH', '/api/v1/namespaces/monitoring/pods/agent-1/resize', {
      ...as('inventory'),
      body: {},
      contentType: 'application/strategic-merge-patch+json',
    });
    expect(resize.json).toEqual(
      forbidden(userOf('inventory'), 'patch', 'pods/resize', { namespace: 'monitoring', name: 'agent-1' }),
    );
    const other = await server.raw('GET', '/api/v1/namespaces/default', as('inventory'));
    expect(other.json).toEqual(
      forbidden(userOf('inventory'), 'get', 'namespaces', { namespace: 'default', name: 'default' }),
    );
  });
});
