/**
 * Waits that keep to the world as it is, judged by a real kube-apiserver (issue 34, defects 2 and 3):
 * a wait for uses never ends on the absence of what it reads (the Feature object deleted with kubectl
 * while a component reports the old value), and one feature whose namespace does not exist does not
 * stop the mirror of the features after it. Whose clock: a pass and a rollout's `--stuck-after` run on
 * the cluster's (the real server's Date), whatever the control plane's says.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.js';
import { FeatureCatalog } from '../../shared/features/catalog.js';
import { FEATURE_API_VERSION } from '../../shared/features/crd.js';
import { setDesired } from '../../shared/features/desired.js';
import type { FeatureRef } from '../../shared/features/model.js';
import { type ReconcilerPorts, reconcileCluster } from '../../shared/features/reconciler.js';
import { advanceRollout, type RolloutPorts, startRollout } from '../../shared/features/rollout-runner.js';
import { MemoryRolloutStore } from '../../shared/features/rollout-store-memory.js';
import type { FeatureSpec } from '../../shared/features/spec.js';
import type { FeatureStore } from '../../shared/features/store.js';
import { DynamoFeatureStore } from '../../shared/features/store-dynamo.js';
import { dynamoTaskStores } from '../../shared/features/task-stores-dynamo.js';
import type { RegisteredCluster } from '../../shared/fleet/cluster.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import { clusterSkew } from '../../shared/k8s/cluster-clock.js';
import { describeRealApiserver, type RealServer } from '../support/real-apiserver.js';
import { testFeature } from './fixtures.js';

const CLUSTER = 'waits';
const declared = (ref: FeatureRef, extra: Partial<FeatureSpec> = {}) =>
  testFeature(ref, { components: ['agent'], usesWaitSeconds: 60, ...extra });
const WIDGETS = { namespace: 'acme', name: 'widgets' };
const GHOST = { namespace: 'ghost', name: 'ghost' };
const SLOW = { namespace: 'acme', name: 'slow' };
const slowConfig = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'slow-config', namespace: 'acme' },
  data: { slow: 'yes' },
};
/** Off waits an hour for uses, then deletes its ConfigMap. */
const slow = declared(SLOW, {
  enable: [
    { task: 'apply-manifests', manifests: [slowConfig] },
    { task: 'wait-for-uses', waitSeconds: 0 },
  ],
  disable: [
    { task: 'wait-for-uses', waitSeconds: 3600 },
    { task: 'delete-objects', apiVersion: 'v1', kind: 'ConfigMap', namespace: 'acme', name: 'slow-config' },
  ],
});
const HOUR = 3_600_000;
/** On waits an hour for uses: a rollout to on sees it TurningOn all that time. */
const LATE = { namespace: 'acme', name: 'late' };
const late = declared(LATE, { default: 'off', enable: [{ task: 'wait-for-uses', waitSeconds: 3600 }] });
const featurePath = (r: FeatureRef) =>
  `/apis/${FEATURE_API_VERSION}/namespaces/${r.namespace}/features/${r.name}`;

describeRealApiserver('waits keep to the world as it is', (server: RealServer) => {
  let runtime: LocalRuntime;
  let store: FeatureStore;
  let client: ClusterClient;
  let clock = Date.UTC(2026, 11, 2, 4, 0, 0);
  // The ghost feature first: its namespace does not exist, and the widgets after it must be mirrored.
  const catalog = new FeatureCatalog([declared(GHOST), declared(WIDGETS), slow, late]);
  const ports = (): ReconcilerPorts => ({
    store,
    catalog,
    connect: async () => client,
    tasks: dynamoTaskStores(runtime.db, runtime.table),
    now: () => clock,
    id: `test/${randomUUID().slice(0, 6)}`,
    heartbeatMs: 0,
  });
  const ok = async (method: string, path: string, body?: unknown) => {
    const r = await server.raw(
      method,
      path,
      body ? { body, ...(method === 'PATCH' ? { contentType: 'application/merge-patch+json' } : {}) } : {},
    );
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
    return r.json;
  };
  /** The agent reads its Feature object and reports a value, echoing the epoch it read. */
  const agentReports = async (value: 'on' | 'off') => {
    const f = await ok('GET', featurePath(WIDGETS));
    const use = { value, time: new Date(clock).toISOString(), epoch: f.status?.usesEpoch };
    await ok('PATCH', `${featurePath(WIDGETS)}/status`, { status: { uses: { agent: use } } });
  };
  const pass = async () => reconcileCluster(ports(), CLUSTER);
  const widgets = async () => (await store.get(CLUSTER, WIDGETS))!;

  beforeAll(async () => {
    runtime = await startLocalRuntime({ retryDelayMs: 5 });
    store = new DynamoFeatureStore(runtime.db, runtime.table);
    client = ClusterClient.fromKubeconfig(server.api().adminKubeconfig, {
      cluster: CLUSTER,
      context: 'envtest',
      retry: { maxAttempts: 1 },
    });
    await ok('POST', '/api/v1/namespaces', { metadata: { name: 'acme' } });
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    await runtime?.stop();
  });

  it('a feature whose namespace does not exist does not stop the mirror of the others', async () => {
    await pass();
    expect((await server.raw('GET', featurePath(WIDGETS))).status).toBe(200);
    const ghost = await store.view(CLUSTER, GHOST);
    expect(ghost.mirror?.error).toMatch(/ghost/);
    expect((await store.view(CLUSTER, WIDGETS)).mirror?.error).toBeUndefined();
  });

  it('turning off: the Feature object deleted while the agent reports on does not end the wait', async () => {
    // On first: the agent uses it.
    for (let i = 0; i < 5 && (await widgets()).state !== 'On'; i++) {
      await agentReports('on');
      clock += 61_000;
      await pass();
    }
    expect((await widgets()).state).toBe('On');
    await setDesired(store, declared(WIDGETS), CLUSTER, 'off', 'test', {}, clock);
    await pass(); // TurningOff: the uses are cleared, a new epoch published
    await agentReports('on'); // still using it, echoing the new epoch
    await ok('DELETE', featurePath(WIDGETS)); // kubectl delete feature widgets -n acme
    clock += 61_000;
    await pass();
    const r = await widgets();
    expect(r.state).toBe('TurningOff');
    expect(r.tasks[0]?.waitingFor).toMatch(/the Feature object acme\/widgets is gone from the cluster/);
    // Written again by that pass; the agent, reading it, still says on: the wait holds.
    await agentReports('on');
    clock += 61_000;
    await pass();
    expect((await widgets()).state).toBe('TurningOff');
    expect((await widgets()).tasks[0]?.waitingFor).toMatch(/still reporting "on": agent/);
    // The agent stops: now it ends.
    await agentReports('off');
    clock += 61_000;
    await pass();
    expect((await widgets()).state).toBe('Off');
  });

  it("a laptop two hours ahead: the wait runs on the cluster's clock, and no time from its future is stored", async () => {
    // The scheduled reconciler, on the right time, turns slow on, then starts turning it off.
    const onTime = (): ReconcilerPorts => ({ ...ports(), now: Date.now });
    for (let i = 0; i < 5 && (await store.get(CLUSTER, SLOW))?.state !== 'On'; i++)
      await reconcileCluster(onTime(), CLUSTER, SLOW);
    expect((await store.get(CLUSTER, SLOW))?.state).toBe('On');
    await setDesired(store, slow, CLUSTER, 'off', 'test', {}, Date.now());
    await reconcileCluster(onTime(), CLUSTER, SLOW);
    expect((await store.get(CLUSTER, SLOW))?.tasks[0]?.title).toBe('wait for uses');
    // `features reconcile` from a laptop whose clock is two hours ahead, three seconds later.
    await new Promise((r) => setTimeout(r, 3000));
    const ahead = () => Date.now() + 2 * HOUR;
    const laptop: ReconcilerPorts = { ...ports(), now: ahead, wallNow: ahead, eager: true };
    await reconcileCluster(laptop, CLUSTER, SLOW);
    const r = (await store.get(CLUSTER, SLOW))!;
    expect(r.state).toBe('TurningOff');
    expect(r.tasks[0]?.waitingFor).toMatch(/(59|60)m left before checking/);
    expect(r.tasks[0]?.stuck).toBeUndefined();
    expect((await server.raw('GET', '/api/v1/namespaces/acme/configmaps/slow-config')).status).toBe(200);
    // Nothing it stored is from its future.
    const times = [r.updatedAt, r.tasks[0]?.claim?.until ?? 0, r.tasks[0]?.notBefore ?? 0];
    expect(Math.max(...times)).toBeLessThan(Date.now() + HOUR + 60_000);
  });

  it("a control plane two hours behind: a rollout's --stuck-after ages the transition on the cluster's clock", async () => {
    const behind = () => Date.now() - 2 * HOUR;
    const registered = { name: CLUSTER, labels: {} } as unknown as RegisteredCluster;
    const rp: RolloutPorts = {
      rollouts: new MemoryRolloutStore(),
      store,
      catalog,
      registry: { list: async () => [registered], getStatus: async () => undefined },
      health: async () => ({ inventory: true, reachable: true }),
      clusterSkew: () => clusterSkew(client, behind),
      now: behind,
    };
    const r = await startRollout(rp, {
      feature: LATE,
      to: 'on',
      waves: '100%',
      pauseMs: 0,
      stuckAfterMs: 5000,
      by: 'test',
    });
    await advanceRollout(rp, r.id); // wave 1 started: desired on
    await reconcileCluster({ ...ports(), now: behind, wallNow: behind }, CLUSTER, LATE);
    const rec = (await store.get(CLUSTER, LATE))!;
    expect(rec.state).toBe('TurningOn');
    // Started on the cluster's clock, not the control plane's.
    expect(Math.abs(rec.transition!.startedAt - Date.now())).toBeLessThan(60_000);
    expect((await advanceRollout(rp, r.id)).rollout?.status).toBe('running');
    await new Promise((done) => setTimeout(done, 6000));
    const { rollout } = await advanceRollout(rp, r.id);
    expect(rollout?.status).toBe('rolling-back');
    expect(rollout?.log.map((l) => l.message).join('\n')).toMatch(/stuck in TurningOn for 0m/);
  });
});
