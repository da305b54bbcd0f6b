/**
 * Least privilege, proved over a simulated cluster that enforces RBAC: for each capability, the RBAC
 * `fleetscope rbac` generates for it (and the fleet core) is applied, bound to a ServiceAccount of its
 * own, and the capability's full cycle runs under that account's token through the real handlers. No
 * request of any cycle is refused, and what no capability needs (secrets, deleting pods, writing nodes)
 * is refused with the real server's 403.
 */

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.js';
import { deniedRequests } from '../../local/sim/authz.js';
import { clusterClaimCrd, type SimCluster, startSimulator } from '../../local/sim/index.js';
import { validatePolicy } from '../../shared/balloons/policy.js';
import { DynamoBalloonStore } from '../../shared/balloons/store-dynamo.js';
import { CAPABILITIES } from '../../shared/capabilities.js';
import { clusterAccess, resetClusterConnector } from '../../shared/fleet/cluster-access.js';
import { DynamoRegistry } from '../../shared/fleet/registry-dynamo.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import { setNodeScopeClock } from '../../shared/nodescope/clock.js';
import { deps } from '../../shared/platform/deps.js';
import type { Detail } from '../../shared/platform/events.js';
import { rbacManifests, withRequired } from '../../shared/platform/rbac-manifests.js';
import { agentDaemonSet, HOUR, MINUTE, START, VPA_RESOURCE, vpaObject } from '../nodescope/helpers.js';
import { raw } from '../sim/helpers.js';
import { claimsThroughDrift } from '../support/claims-drift.js';
import { collectionPath } from '../support/rbac-paths.js';

type Sim = Awaited<ReturnType<typeof startSimulator>>;
const NS = 'fleetscope';
const CAPS = ['inventory', 'claims', 'nodescope', 'balloons'] as const;
type Cap = (typeof CAPS)[number];
const userOf = (cap: Cap) => `system:serviceaccount:${NS}:fs-${cap}`;

const event = (detailType: string, detail: Record<string, unknown>) => ({
  version: '0',
  id: `${detailType}-${Math.random()}`,
  'detail-type': detailType,
  source: 'fleetscope',
  account: '000000000000',
  time: new Date().toISOString(),
  region: 'us-east-1',
  resources: [],
  detail,
});

describe('least privilege under RBAC enforcement', () => {
  let sim: Sim;
  let cluster: SimCluster;
  let runtime: LocalRuntime;
  let dir: string;
  const tokens = new Map<Cap, string>();
  const kubeconfigs = new Map<Cap, string>();
  const name = (cap: Cap) => `locked-${cap}`;

  const admin = async (method: string, path: string, body?: unknown, contentType?: string) => {
    const r = await raw(cluster, method, path, { body, contentType });
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
    return r.json;
  };

  beforeAll(async () => {
    sim = await startSimulator({
      clusters: [
        { name: 'locked', nodes: 3, seed: 9, rbac: true, vpaCrd: true, daemonSets: [agentDaemonSet()] },
      ],
      now: START,
    });
    cluster = sim.cluster('locked');
    runtime = await startLocalRuntime({ retryDelayMs: 5 });
    setNodeScopeClock(() => sim.clock.now());
    process.env.FLEETSCOPE_BALLOONS_SETTLE_MS = '0';
    dir = await mkdtemp(join(tmpdir(), 'fleetscope-rbac-'));
    await admin('POST', '/api/v1/namespaces', { metadata: { name: NS } });
    await admin('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', clusterClaimCrd());
    cluster.store.put(
      VPA_RESOURCE,
      vpaObject({ mode: 'Auto', policies: [{ containerName: 'shipper', mode: 'Off' }] }),
    );
    const registry = new DynamoRegistry(runtime.db, runtime.table);
    for (const cap of CAPS) {
      const caps = withRequired(CAPABILITIES, ['fleet', cap]);
      const subject = { kind: 'ServiceAccount' as const, namespace: NS, name: `fs-${cap}` };
      for (const m of rbacManifests(caps, { subjects: [subject], prefix: `fs-${cap}` }))
        await admin('POST', collectionPath(m.object as never), m.object);
      const tr = await admin('POST', `/api/v1/namespaces/${NS}/serviceaccounts/fs-${cap}/token`, {
        spec: { expirationSeconds: 48 * 3600 },
      });
      tokens.set(cap, tr.status.token);
      const text = await cluster.kubeconfigFor({ token: tr.status.token });
      kubeconfigs.set(cap, text);
      const path = join(dir, `${cap}.yaml`);
      await writeFile(path, text);
      await registry.add({
        name: name(cap),
        kubeconfig: { kind: 'file', path, context: 'locked' },
        labels: {},
        registeredAt: new Date(START).toISOString(),
      });
    }
  });
  afterAll(async () => {
    setNodeScopeClock();
    delete process.env.FLEETSCOPE_BALLOONS_SETTLE_MS;
    await resetClusterConnector();
    await runtime?.stop();
    await sim?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('fleet: registration reads the cluster identity under each capability account', async () => {
    for (const cap of CAPS) {
      const ref = { kind: 'file' as const, path: join(dir, `${cap}.yaml`), context: 'locked' };
      await expect(clusterAccess().verify(name(cap), ref)).resolves.toEqual({
        kubeSystemUid: cluster.kubeSystemUid,
      });
    }
  });

  it('inventory: a full inventory of the cluster', async () => {
    const detail = {
      cluster: name('inventory'),
      capability: 'inventory',
      cycleId: 'i/1',
      requestedAt: new Date().toISOString(),
    };
    await runtime.invoker.invoke('inventory', event('ClusterWorkRequested', detail));
    const status = await new DynamoRegistry(runtime.db, runtime.table).getStatus(name('inventory'));
    expect(status).toMatchObject({
      reachable: true,
      nodeCount: 3,
      metricsApi: 'available',
      serverVersion: 'v1.35.0',
    });
  });

  it('claims: registration (creating the CRD), membership, custom claims and drift repair', async () => {
    const got = await claimsThroughDrift(
      {
        runtime,
        admin,
        registered: (cluster) =>
          event('ClusterRegistered', { cluster, labels: {}, registeredAt: new Date().toISOString() }),
        check: (cluster) =>
          event('ClusterWorkRequested', {
            cluster,
            capability: 'claims',
            cycleId: 'c/1',
            requestedAt: new Date().toISOString(),
          }),
      },
      name('claims'),
    );
    expect(got.properties).toMatchObject({
      'id.k8s.io': cluster.kubeSystemUid,
      'clusterset.k8s.io': 'blue',
      'zone.example.com': 'eu-1a',
    });
    expect(got.properties['gone.example.com']).toBeUndefined();
    expect(got.ocm['zone.example.com']).toBe('eu-1a');
    expect(got.syncState).toMatch(/in-sync|repaired/);
  });

  /** One cluster cycle (node scope, then balloons) through the real handler, at the simulated time. */
  const clusterCycle = async (cap: Cap) => {
    sim.clock.advance(15 * MINUTE);
    const at = new Date(sim.clock.now()).toISOString();
    const detail = { cluster: name(cap), capability: 'cycle', cycleId: `cycle/${at}`, requestedAt: at };
    const out = (await runtime.invoker.invoke('cycle', event('ClusterWorkRequested', detail))) as Record<
      string,
      unknown
    >;
    expect(out.error, 'the cycle failed').toBeUndefined();
    return out;
  };
  const busEvents = <T extends 'PodResized' | 'BalloonCycleCompleted'>(t: T) =>
    runtime.bus.log.filter((e) => e.detailType === t).map((e) => e.detail as Detail<T>);

  it('nodescope: collection, fold, annotations, VPA status and in-place resizes in mode Auto', async () => {
    cluster.resetStats();
    for (let i = 0; i < 16; i++) await clusterCycle('nodescope');
    expect(sim.clock.now() - START).toBe(4 * HOUR);
    expect(cluster.stats().byMethodAndKind['PATCH resize']).toBeGreaterThan(0);
    const pods = cluster.store.list('pods', 'monitoring');
    expect(pods.every((p) => p.metadata.annotations?.['fleetscope.io/recommendation'])).toBe(true);
    const vpa = cluster.store.get(VPA_RESOURCE, 'agent', 'monitoring');
    expect(vpa.status.conditions.some((x: { reason: string }) => x.reason === 'NodeScope')).toBe(true);
  });

  it('balloons: the DaemonSet and PriorityClass created, balloons inflated, an explicit node size served', async () => {
    const store = new DynamoBalloonStore(runtime.db, runtime.table);
    const policy = { name: 'all', selector: 'kubernetes.io/os=linux', max: { cpu: '2', memory: '4Gi' } };
    await store.putPolicy(name('balloons'), validatePolicy(policy));
    await clusterCycle('balloons');
    await clusterCycle('balloons');
    expect(cluster.store.get('daemonsets', 'fleetscope-balloon', 'kube-system')).toBeDefined();
    expect(cluster.store.get('priorityclasses', 'fleetscope-balloon')).toBeDefined();
    expect(busEvents('BalloonCycleCompleted').at(-1)?.nodes).toBe(3);
    expect(busEvents('PodResized').some((e) => e.source === 'balloons' && e.outcome === 'Requested')).toBe(
      true,
    );
    const node = cluster.store.list('nodes')[0].metadata.name;
    await deps().publisher.publish([
      {
        detailType: 'NodeResizeRequested',
        detail: {
          cluster: name('balloons'),
          node,
          cpu: '1',
          memory: '2Gi',
          requestedAt: new Date().toISOString(),
        },
        resources: [],
      },
    ]);
    await runtime.bus.drain();
    expect((await store.load(name('balloons'))).requests.map((r) => r.node)).toEqual([node]);
    expect(runtime.invoker.deadLetters).toEqual([]);
  });

  it('refused none of the requests of any cycle', () => {
    expect(deniedRequests(sim.state('locked'))).toEqual([]);
  });

  it('refuses what no capability needs, with the real 403 Status', async () => {
    const token = tokens.get('nodescope') as string;
    const user = userOf('nodescope');
    const secrets = await raw(cluster, 'GET', '/api/v1/namespaces/kube-system/secrets', { token });
    expect(secrets.status).toBe(403);
    expect(secrets.json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `secrets is forbidden: User "${user}" cannot list resource "secrets" in API group "" in the namespace "kube-system"`,
      reason: 'Forbidden',
      details: { kind: 'secrets' },
      code: 403,
    });
    const pod = cluster.store.list('pods', 'monitoring')[0].metadata.name;
    const del = await raw(cluster, 'DELETE', `/api/v1/namespaces/monitoring/pods/${pod}`, { token });
    expect(del.json.message).toBe(
      `pods "${pod}" is forbidden: User "${user}" cannot delete resource "pods" in API group "" in the namespace "monitoring"`,
    );
    expect(del.json.details).toEqual({ name: pod, kind: 'pods' });
    const node = cluster.store.list('nodes')[0].metadata.name;
    const patch = await raw(cluster, 'PATCH', `/api/v1/nodes/${node}`, {
      token,
      body: { metadata: { labels: { x: 'y' } } },
      contentType: 'application/merge-patch+json',
    });
    expect(patch.json.message).toBe(
      `nodes "${node}" is forbidden: User "${user}" cannot patch resource "nodes" in API group "" at the cluster scope`,
    );
    const inv = tokens.get('inventory') as string;
    const resize = await raw(cluster, 'PATCH', `/api/v1/namespaces/monitoring/pods/${pod}/resize`, {
      token: inv,
      body: {},
      contentType: 'application/strategic-merge-patch+json',
    });
    expect(resize.json.message).toBe(
      `pods "${pod}" is forbidden: User "${userOf('inventory')}" cannot patch resource "pods/resize" in API group "" in the namespace "monitoring"`,
    );
    const other = await raw(cluster, 'GET', '/api/v1/namespaces/default', { token: inv });
    expect(other.json.message).toBe(
      `namespaces "default" is forbidden: User "${userOf('inventory')}" cannot get resource "namespaces" in API group "" in the namespace "default"`,
    );
    expect(deniedRequests(sim.state('locked'))).toHaveLength(5);
  });

  it('authenticates client certificates (CN, O) and answers self reviews for the requesting user', async () => {
    const kc = await cluster.kubeconfigFor({ user: 'alice', groups: ['team-a'] });
    const client = ClusterClient.fromKubeconfig(kc, {
      cluster: 'alice',
      context: 'locked',
      retry: { maxAttempts: 1 },
    });
    try {
      const err = await client.call('list nodes', () => client.core.listNode()).catch((e) => e);
      expect(err.status).toBe(403);
      expect(JSON.parse(err.body ?? '{}').message ?? String(err.message)).toContain(
        'nodes is forbidden: User "alice" cannot list resource "nodes" in API group "" at the cluster scope',
      );
    } finally {
      await client.close();
    }
    const token = tokens.get('claims') as string;
    const who = await raw(cluster, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      token,
      body: {},
    });
    expect(who.json.status.userInfo).toMatchObject({
      username: userOf('claims'),
      groups: ['system:serviceaccounts', `system:serviceaccounts:${NS}`, 'system:authenticated'],
    });
    const review = (verb: string, resource: string, group = '') =>
      raw(cluster, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
        token,
        body: { spec: { resourceAttributes: { verb, group, resource } } },
      });
    expect((await review('create', 'clusterproperties', 'about.k8s.io')).json.status).toEqual({
      allowed: true,
      reason: `RBAC: allowed by ClusterRoleBinding "fs-claims:claims" of ClusterRole "fs-claims:claims" to ServiceAccount "fs-claims/${NS}"`,
    });
    expect((await review('list', 'secrets')).json.status).toEqual({ allowed: false });
  });
});
