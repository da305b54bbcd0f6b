/**
 * A cluster deregistered mid-rollout (issue 34, defect 11): the next wave neither writes a feature record
 * for it (a record that would outlive its registration) nor rolls back on its "no inventory" (it has
 * none any more: it left the fleet, it did not fail). The rollout leaves it out and says so in its log.
 */
import { expect, it } from 'vitest';
import { builtinFeatures, FeatureCatalog } from '../../shared/features/catalog.js';
import { clustersOfWave } from '../../shared/features/rollout.js';
import { advanceRollout, type RolloutPorts, startRollout } from '../../shared/features/rollout-runner.js';
import { MemoryRolloutStore } from '../../shared/features/rollout-store-memory.js';
import { MemoryFeatureStore } from '../../shared/features/store-memory.js';
import type { RegisteredCluster } from '../../shared/fleet/cluster.js';

const BALLOONS = { namespace: 'fleetscope-system', name: 'balloons' };
const CLUSTERS = ['d0', 'd1', 'd2', 'd3'];

// The in-memory adapters: the runner's unit test needs no DynamoDB-protocol server.
const rollouts = new MemoryRolloutStore();
const features = new MemoryFeatureStore();
let t = Date.UTC(2026, 11, 2);
const now = () => (t += 1000);
const registered = new Map<string, RegisteredCluster>(
  CLUSTERS.map((name) => [name, { name, labels: {} } as unknown as RegisteredCluster]),
);

function ports(): RolloutPorts {
  return {
    rollouts,
    store: features,
    catalog: new FeatureCatalog(builtinFeatures()),
    registry: {
      list: async () => [...registered.values()],
      get: async (name) => registered.get(name),
      // An inventory only for what is registered: a deregistered cluster's status went with it.
      getStatus: async (name) => (registered.has(name) ? ({ reachable: true } as never) : undefined),
    },
    now,
  };
}

it('the next wave leaves a deregistered cluster out: no record written, no rollback', async () => {
  const r = await startRollout(ports(), {
    feature: BALLOONS,
    to: 'off',
    waves: '2,100%',
    pauseMs: 60_000,
    by: 'test',
  });
  const [gone, kept] = clustersOfWave(r, 0);
  // One being deregistered, marked; one whose registration is already removed.
  registered.set(kept!, { ...registered.get(kept!)!, deregistering: new Date(t).toISOString() });
  registered.delete(gone!);
  const { rollout } = await advanceRollout(ports(), r.id);
  expect(rollout?.status).toBe('running');
  expect(rollout?.waveStartedAt).toBeDefined();
  const store = features;
  expect(await store.get(gone!, BALLOONS)).toBeUndefined();
  expect(await store.get(kept!, BALLOONS)).toBeUndefined();
  expect(rollout?.log.map((l) => l.message)).toContainEqual(
    `wave 1 started: no cluster (${gone}, ${kept} deregistered: left out)`,
  );
  // Passes later still neither write for them nor judge them.
  const again = await advanceRollout(ports(), r.id);
  expect(again.rollout?.status).toBe('running');
  expect(await store.get(gone!, BALLOONS)).toBeUndefined();
});
