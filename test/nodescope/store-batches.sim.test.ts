/**
 * A fold's deletes (the old generation's chunks, the replayed log) go 25 to a request: every item named
 * goes, none other, and each counts as one write as before. A cycle reads every DaemonSet's log in one
 * query, and every DaemonSet's apply item in one batch: each gets what its own read would give.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.js';
import { BaseCache } from '../../shared/nodescope/base-cache.js';
import type { NodeScopeStore } from '../../shared/nodescope/store.js';
import { DynamoNodeScopeStore } from '../../shared/nodescope/store-dynamo.js';
import type { ResizeRecord } from '../../shared/resize/index.js';

const T0 = Date.UTC(2026, 10, 1);
const DS = 'monitoring/agent';
const cycle = (i: number) => new Date(T0 + i * 300_000).toISOString();

let runtime: LocalRuntime;
let store: NodeScopeStore;
beforeAll(async () => {
  runtime = await startLocalRuntime({ retryDelayMs: 5 });
  store = new DynamoNodeScopeStore(runtime.db, runtime.table, new BaseCache());
});
afterAll(() => runtime.stop());

describe("a fold's deletes", () => {
  it('delete exactly the log entries and chunks named, in batches, counted one write each', async () => {
    for (let i = 0; i < 60; i++)
      expect(await store.putLog('c', DS, cycle(i), new Uint8Array([i]), T0)).toBe(true);
    for (let k = 0; k < 30; k++)
      expect(await store.putChunk('c', DS, 1, k, new Uint8Array([k]), T0)).toBe(true);
    for (let k = 0; k < 2; k++)
      expect(await store.putChunk('c', DS, 2, k, new Uint8Array([k]), T0)).toBe(true);
    const writes = store.stats.writes;
    await store.deleteLogs(
      'c',
      DS,
      Array.from({ length: 53 }, (_, i) => cycle(i)),
    );
    await store.deleteChunks('c', DS, 1, 30);
    expect(store.stats.writes - writes).toBe(83);
    expect((await store.listLogs('c', DS, '')).map((l) => l.cycle)).toEqual(
      Array.from({ length: 7 }, (_, i) => cycle(53 + i)),
    );
    expect(await store.getChunks('c', DS, 1, 1)).toBeUndefined();
    expect(await store.getChunks('c', DS, 2, 2)).toEqual([new Uint8Array([0]), new Uint8Array([1])]);
    // Deleting what is gone already is no error (a retried fold).
    await store.deleteChunks('c', DS, 1, 30);
  });
});

describe("a cluster's logs in one query", () => {
  it("give each DaemonSet exactly its own query's entries, in cycle order", async () => {
    const names = ['logging/agent', 'logging/agent-2', 'logging/agent2', 'other/agent'];
    for (const [n, ds] of names.entries())
      for (let i = 0; i < 3 + n; i++)
        expect(await store.putLog('logs', ds, cycle(10 - i), new Uint8Array([n, i]), T0)).toBe(true);
    await store.putLog('logs-other-cluster', names[0] as string, cycle(0), new Uint8Array([9]), T0);
    const all = await store.listClusterLogs('logs');
    expect([...all.keys()].sort()).toEqual(names);
    for (const ds of names) expect(all.get(ds)).toEqual(await store.listLogs('logs', ds, ''));
    expect(all.get('logging/agent-2')?.map((l) => l.cycle)).toEqual(
      [10, 9, 8, 7].map((i) => cycle(i)).sort(),
    );
  });
});

describe("a cluster's apply items in one batch", () => {
  it("give each DaemonSet exactly its own read's item, absent ones as none yet", async () => {
    const requests = { 'node-a': { app: { cpu: 120, memory: 64 * 2 ** 20 } } };
    const records: Record<string, ResizeRecord> = {
      'node-b': { podUid: 'u', desired: 'd', state: 'deferred', since: T0, attempts: 1 },
    };
    expect(await store.putApply('applies', 'a/one', { records: {}, requests }, 0)).toBe(true);
    expect(await store.putApply('applies', 'a/two', { records, requests }, 0)).toBe(true);
    expect(await store.putApply('applies', 'a/two', { records: {}, requests }, 1)).toBe(true);
    const names = ['a/one', 'a/two', 'a/none'];
    const reads = store.stats.reads;
    const all = await store.getApplies('applies', names);
    expect(store.stats.reads - reads).toBe(3); // counted as three reads, sent as one request
    for (const ds of names) expect(all.get(ds)).toEqual(await store.getApply('applies', ds));
    expect(all.get('a/two')?.version).toBe(2);
    expect(all.get('a/none')).toEqual({ records: {}, version: 0 });
  });
});
