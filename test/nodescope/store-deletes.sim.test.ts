/**
 * A fold's deletes (the old generation's chunks, the replayed log) go 25 to a request: every item named
 * goes, none other, and each counts as one write as before.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.js';
import { BaseCache } from '../../shared/nodescope/base-cache.js';
import { NodeScopeStore } from '../../shared/nodescope/store.js';

const T0 = Date.UTC(2026, 10, 1);
const DS = 'monitoring/agent';
const cycle = (i: number) => new Date(T0 + i * 300_000).toISOString();

let runtime: LocalRuntime;
let store: NodeScopeStore;
beforeAll(async () => {
  runtime = await startLocalRuntime({ retryDelayMs: 5 });
  store = new NodeScopeStore(runtime.db, runtime.table, new BaseCache());
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
