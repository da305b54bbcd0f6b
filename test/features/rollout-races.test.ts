/**
 * The races of a fleet rollout, each interleaving forced (issue 16, finding 4), over the local
 * DynamoDB: two rollouts of one feature started at the same moment (only one may run), and an
 * operator's halt that lands after a wave was decided but before it was stored (the wave must not write
 * a single desired value). The clusters are only records here: the rollout sets desired values, and
 * the clusters' own reconcilers (not run) would act on them.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.js';
import { builtinFeatures, FeatureCatalog } from '../../shared/features/catalog.js';
import type { Rollout } from '../../shared/features/rollout.js';
import {
  advanceRollout,
  type RolloutPorts,
  setRolloutStatus,
  startRollout,
} from '../../shared/features/rollout-runner.js';
import type { RolloutStore } from '../../shared/features/rollout-store.js';
import { DynamoRolloutStore } from '../../shared/features/rollout-store-dynamo.js';
import { DynamoFeatureStore, FEATURES_PK } from '../../shared/features/store-dynamo.js';
import { keyOf, PK, SK, Table } from '../../shared/platform/dynamo.js';

const BALLOONS = { namespace: 'fleetscope-system', name: 'balloons' };
const CLUSTERS = ['c0', 'c1', 'c2', 'c3'];

let runtime: LocalRuntime;
let t = Date.UTC(2026, 10, 2);
const now = () => (t += 1000);

function ports(rollouts: RolloutStore): RolloutPorts {
  return {
    rollouts,
    store: new DynamoFeatureStore(runtime.db, runtime.table),
    catalog: new FeatureCatalog(builtinFeatures()),
    registry: {
      list: async () => CLUSTERS.map((name) => ({ name, labels: {} }) as never),
      getStatus: async () => ({ reachable: true }) as never,
    },
    now,
  };
}

beforeAll(async () => {
  runtime = await startLocalRuntime({ retryDelayMs: 5 });
}, 60_000);
afterAll(async () => runtime?.stop());
beforeEach(async () => {
  // Each test starts with no rollout and no feature record.
  const table = new Table(runtime.db, runtime.table);
  for (const item of await table.query(FEATURES_PK, undefined))
    await table.delete(keyOf(String(item[PK]), String(item[SK])));
  for (const c of CLUSTERS)
    for (const item of await table.query(`CLUSTER#${c}`, undefined))
      await table.delete(keyOf(String(item[PK]), String(item[SK])));
});

const input = { feature: BALLOONS, to: 'off' as const, waves: '1,50%,100%', pauseMs: 60_000, by: 'test' };

describe('rollout races', () => {
  it('two rollouts of one feature started at the same moment: exactly one runs, the other is refused naming it', async () => {
    // Both get as far as storing their rollout before either goes on: what a plain read then create lets through.
    let arrived = 0;
    let release!: () => void;
    const bothThere = new Promise<void>((r) => {
      release = r;
    });
    class Meeting extends DynamoRolloutStore {
      override async create(r: Rollout) {
        if (++arrived === 2) release();
        await bothThere;
        return super.create(r);
      }
    }
    const store = new Meeting(runtime.db, runtime.table);
    const results = await Promise.allSettled([
      startRollout(ports(store), input),
      startRollout(ports(store), input),
    ]);
    const started = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(started).toHaveLength(1);
    expect(refused).toHaveLength(1);
    const winner = (started[0] as PromiseFulfilledResult<Rollout>).value;
    expect(String(refused[0]!.reason)).toMatch(
      new RegExp(`rollout ${winner.id} of fleetscope-system/balloons is running: halt it first`),
    );
    const running = (await store.list()).filter((r) => r.status === 'running');
    expect(running.map((r) => r.id)).toEqual([winner.id]);
  });

  it('a resume is refused while another rollout of the feature runs', async () => {
    const store = new DynamoRolloutStore(runtime.db, runtime.table);
    const first = await startRollout(ports(store), input);
    await setRolloutStatus(ports(store), first.id, 'halted', 'test');
    const second = await startRollout(ports(store), input);
    await expect(setRolloutStatus(ports(store), first.id, 'running', 'test')).rejects.toThrow(
      new RegExp(`rollout ${second.id} of fleetscope-system/balloons is running`),
    );
    expect((await store.get(first.id))!.status).toBe('halted');
  });

  it('a halt that lands between a wave being decided and stored: the wave writes no desired value', async () => {
    const plain = new DynamoRolloutStore(runtime.db, runtime.table);
    let halted = false;
    class HaltFirst extends DynamoRolloutStore {
      override async save(read: Rollout, change: Partial<Rollout>, message: string, at: number) {
        if (!halted && change.waveStartedAt !== undefined) {
          halted = true;
          await setRolloutStatus(ports(plain), read.id, 'halted', 'operator');
        }
        return super.save(read, change, message, at);
      }
    }
    const r = await startRollout(ports(plain), input);
    await advanceRollout(ports(new HaltFirst(runtime.db, runtime.table)), r.id);
    expect(halted).toBe(true);
    const after = (await plain.get(r.id))!;
    expect(after).toMatchObject({ status: 'halted', reason: 'halted by operator', wave: 0 });
    expect(after.waveStartedAt).toBeUndefined();
    const store = new DynamoFeatureStore(runtime.db, runtime.table);
    for (const c of CLUSTERS) expect((await store.get(c, BALLOONS))?.desired, c).toBeUndefined();
  });

  it("a wave stored as started whose desired values were not all written (a crash) writes them on the next pass, and does not take them for someone else's", async () => {
    const plain = new DynamoRolloutStore(runtime.db, runtime.table);
    const r = await startRollout(ports(plain), input);
    const store = new DynamoFeatureStore(runtime.db, runtime.table);
    class CrashAfterSave extends DynamoFeatureStore {
      override async create(): Promise<boolean> {
        throw new Error('crash: the reconciler died after storing the wave');
      }
    }
    await expect(
      advanceRollout({ ...ports(plain), store: new CrashAfterSave(runtime.db, runtime.table) }, r.id),
    ).rejects.toThrow(/crash/);
    const stored = (await plain.get(r.id))!;
    expect(stored.waveStartedAt).toBeDefined();
    const [canary] = stored.clusters;
    expect(await store.get(canary!, BALLOONS)).toBeUndefined();
    await advanceRollout(ports(plain), r.id);
    expect((await plain.get(r.id))!.status).toBe('running');
    expect(await store.get(canary!, BALLOONS)).toMatchObject({
      desired: 'off',
      desiredBy: `rollout/${r.id}`,
    });
  });

  it('a running rollout that does not hold its feature takes it, or is halted naming the one that holds it', async () => {
    const plain = new DynamoRolloutStore(runtime.db, runtime.table);
    const table = new Table(runtime.db, runtime.table);
    const unlock = async () =>
      table.delete({ pk: FEATURES_PK, [SK]: 'rollout-lock#fleetscope-system/balloons' } as never);
    // Stored before pointers existed: no pointer at all. The next pass takes it and starts the wave.
    const old = await startRollout(ports(plain), input);
    await unlock();
    await advanceRollout(ports(plain), old.id);
    expect(await plain.holds((await plain.get(old.id))!)).toBe(true);
    expect((await plain.get(old.id))!.waveStartedAt).toBeDefined();
    // Another running rollout of the feature (its start stopped before taking the pointer): halted, naming the holder.
    const stray: Rollout = {
      ...(await plain.get(old.id))!,
      id: 'stray',
      version: 1,
      waveStartedAt: undefined,
      log: [],
    };
    expect(await plain.create(stray)).toBe(true);
    await advanceRollout(ports(plain), 'stray');
    expect(await plain.get('stray')).toMatchObject({
      status: 'halted',
      reason: `rollout ${old.id} of fleetscope-system/balloons is running`,
    });
  });
});
