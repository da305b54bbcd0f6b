/**
 * The features reconciler on the in-memory adapters (issue 32): the feature store, the cluster state and
 * the task stores in process, no DynamoDB-protocol server; the cluster is the simulator's. A feature
 * is announced On, turned off (its clear-state task removes what it kept, fenced to the task's claim),
 * and nothing of it dangles after. A hook gets the capabilities' ports, fenced alike.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSimulator } from '../../local/sim/index.js';
import { MemoryBalloonStore } from '../../shared/balloons/store-memory.js';
import { FeatureCatalog } from '../../shared/features/catalog.js';
import { MemoryClusterState } from '../../shared/features/cluster-state-memory.js';
import { danglingState } from '../../shared/features/dangling.js';
import { type ReconcilerPorts, reconcileCluster } from '../../shared/features/reconciler.js';
import { MemoryFeatureStore } from '../../shared/features/store-memory.js';
import { memoryTaskStores } from '../../shared/features/task-stores-memory.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import { testFeature } from './fixtures.js';

const START = Date.UTC(2026, 10, 2);
const CLUSTER = 'mem';
const spec = testFeature(
  { namespace: 'acme', name: 'widgets' },
  { disable: [{ task: 'clear-state', prefixes: ['acme-widgets#'] }] },
);

let sim: Awaited<ReturnType<typeof startSimulator>>;
let client: ClusterClient;
beforeAll(async () => {
  sim = await startSimulator({ clusters: [{ name: CLUSTER, nodes: 0, seed: 7 }], now: START });
  client = ClusterClient.fromKubeconfig(sim.kubeconfig(), {
    cluster: CLUSTER,
    context: CLUSTER,
    retry: { maxAttempts: 1 },
  });
}, 60_000);
afterAll(async () => {
  await client?.close();
  await sim?.stop();
});

it('turns a feature on and off on the memory adapters; its clear-state removes what it kept', async () => {
  const store = new MemoryFeatureStore();
  const state = new MemoryClusterState();
  state.put(CLUSTER, 'acme-widgets#a');
  state.put(CLUSTER, 'acme-widgets#b');
  state.put(CLUSTER, 'other#c');
  const now = () => sim.clock.now();
  const ports: ReconcilerPorts = {
    store,
    catalog: new FeatureCatalog([spec]),
    connect: async () => client,
    tasks: memoryTaskStores(state),
    now,
    wallNow: now,
    id: 'unit/1',
    mirror: false,
    heartbeatMs: 0,
  };

  const on = await reconcileCluster(ports, CLUSTER);
  expect(on.map((o) => [o.feature, o.error ?? o.state])).toEqual([['acme/widgets', 'On']]);

  const r = (await store.get(CLUSTER, spec))!;
  expect(await store.save({ ...r, desired: 'off', version: r.version + 1 }, r.version)).toBe(true);
  const off = await reconcileCluster(ports, CLUSTER);
  expect(off.map((o) => [o.feature, o.error ?? o.state])).toEqual([['acme/widgets', 'Off']]);

  expect(await state.left(CLUSTER, 'acme-widgets#')).toBe(0);
  expect(await state.left(CLUSTER, 'other#')).toBe(1);
  expect(await danglingState(spec, { cluster: CLUSTER, state })).toEqual([]);
  const record = (await store.get(CLUSTER, spec))!;
  expect(record.tasks).toEqual([]);
  expect(record.history.at(-1)?.done.find((t) => t.task === 'clear-state')?.writes).toBe(2); // the two items, counted
});

it('a stale record write loses the race, and a claim taken over fences the old holder', async () => {
  const store = new MemoryFeatureStore();
  const ports: ReconcilerPorts = {
    store,
    catalog: new FeatureCatalog([spec]),
    connect: async () => client,
    tasks: memoryTaskStores(),
    now: () => sim.clock.now(),
    id: 'unit/2',
    mirror: false,
    heartbeatMs: 0,
  };
  await reconcileCluster(ports, CLUSTER);
  const r = (await store.get(CLUSTER, spec))!;
  expect(await store.save({ ...r, version: r.version + 1 }, r.version)).toBe(true);
  expect(await store.save({ ...r, version: r.version + 1 }, r.version)).toBe(false);
  expect(await store.renewClaim(CLUSTER, spec, 'nobody', sim.clock.now(), sim.clock.now() + 1)).toBe(
    'fenced',
  );
});

it("hands a hook the capabilities' ports, each write passing the task's fence (no table in sight)", async () => {
  const balloons = new MemoryBalloonStore();
  const stores = memoryTaskStores(undefined, balloons);
  const state = { cluster: CLUSTER, at: 1, cycleId: 'c1', nodes: {}, errors: [] };
  const passed: string[] = [];
  const held = stores.fenced(async (op) => void passed.push(op));
  expect(await held.balloons.saveState(state, undefined)).toBe('saved');
  expect(passed).toEqual(['balloon state write']);
  expect(await held.balloons.load(CLUSTER)).toMatchObject({ state: { cycleId: 'c1', version: 1 } });
  expect(passed).toHaveLength(1); // reads pass no fence
  expect(await held.claims.getIdentity(CLUSTER)).toBeUndefined();

  const lost = stores.fenced(async () => {
    throw new Error('fenced: the claim was taken over');
  });
  await expect(lost.balloons.saveState({ ...state, cycleId: 'c2' }, 1)).rejects.toThrow(/fenced/);
  expect((await balloons.state(CLUSTER))?.cycleId).toBe('c1');
});
