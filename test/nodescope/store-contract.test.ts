/**
 * Node scope's store port (shared/nodescope/store.ts), one contract over both adapters: the DynamoDB one
 * on the local DynamoDB-protocol server (dynalite, through the local runtime) and the in-memory one unit
 * tests run on. What a cycle and a fold rely on is here: a head is written only over the version read
 * (VersionConflict otherwise), a chunk and a log entry only once, the applied sizes and a history only
 * over the version read (false: lost the race), lists in key order, and what comes back is a copy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.js';
import { type DsHead, type NodeScopeStore, VersionConflict } from '../../shared/nodescope/store.js';
import { DynamoNodeScopeStore } from '../../shared/nodescope/store-dynamo.js';
import { MemoryNodeScopeStore } from '../../shared/nodescope/store-memory.js';

const NOW = Date.UTC(2026, 10, 2);
const head = (cluster: string, name: string, version: number): DsHead =>
  ({
    cluster,
    namespace: 'monitoring',
    name,
    vpa: { namespace: 'monitoring', name, uid: 'u' },
    updateMode: 'Auto',
    gen: 1,
    chunks: 2,
    foldedThrough: '',
    version,
  }) as unknown as DsHead;
const bytes = (...b: number[]) => Uint8Array.from(b);

let runtime: LocalRuntime;
let n = 0;
/** A cluster name of its own per test: the DynamoDB table is shared by the whole file. */
const fresh = () => `ns-contract-${++n}`;

beforeAll(async () => {
  runtime = await startLocalRuntime({ retryDelayMs: 5 });
});
afterAll(async () => runtime?.stop());

describe.each([
  ['in memory', () => new MemoryNodeScopeStore() as NodeScopeStore],
  ['DynamoDB (dynalite)', () => new DynamoNodeScopeStore(runtime.db, runtime.table) as NodeScopeStore],
])('the node scope store port, %s', (_, make) => {
  it('knows nothing of a cluster it was never told of', async () => {
    const store = make();
    const c = fresh();
    expect(await store.getCluster(c)).toBeUndefined();
    expect(await store.getHead(c, 'monitoring/agent')).toBeUndefined();
    expect(await store.listHeads(c)).toEqual([]);
    expect(await store.getApply(c, 'monitoring/agent')).toEqual({ records: {}, version: 0 });
    expect(await store.getHistory(c, 'monitoring/agent', 'n1')).toEqual({
      node: 'n1',
      entries: [],
      version: 0,
    });
    expect(await store.listClusterLogs(c)).toEqual(new Map());
  });

  it('writes a head only over the version read: the loser of the race gets VersionConflict', async () => {
    const store = make();
    const c = fresh();
    await store.putHead(head(c, 'b', 1), 0);
    await expect(store.putHead(head(c, 'b', 1), 0)).rejects.toBeInstanceOf(VersionConflict);
    await store.putHead(head(c, 'b', 2), 1);
    await expect(store.putHead(head(c, 'b', 3), 1)).rejects.toBeInstanceOf(VersionConflict);
    await expect(store.putHead(head(c, 'ghost', 2), 1)).rejects.toBeInstanceOf(VersionConflict);
    await store.putHead(head(c, 'a', 1), 0);
    expect((await store.listHeads(c)).map((h) => [h.name, h.version])).toEqual([
      ['a', 1],
      ['b', 2],
    ]);
    const mine = (await store.listAllHeads()).filter((h) => h.cluster === c);
    expect(mine.map((h) => h.name)).toEqual(['a', 'b']);
    await store.deleteHead(c, 'monitoring/a');
    expect(await store.getHead(c, 'monitoring/a')).toBeUndefined();
  });

  it('writes a chunk once, gives a generation back in order, and nothing when one is gone', async () => {
    const store = make();
    const c = fresh();
    expect(await store.putChunk(c, 'm/a', 3, 1, bytes(2), NOW)).toBe(true);
    expect(await store.putChunk(c, 'm/a', 3, 0, bytes(1), NOW)).toBe(true);
    expect(await store.putChunk(c, 'm/a', 3, 0, bytes(9), NOW)).toBe(false);
    expect(await store.getChunks(c, 'm/a', 3, 2)).toEqual([bytes(1), bytes(2)]);
    expect(await store.getChunks(c, 'm/a', 3, 3)).toBeUndefined();
    await store.deleteChunks(c, 'm/a', 3, 2);
    expect(await store.getChunks(c, 'm/a', 3, 1)).toBeUndefined();
  });

  it('appends a cycle’s samples once and lists them in cycle order, by DaemonSet', async () => {
    const store = make();
    const c = fresh();
    expect(await store.putLog(c, 'm/b', '0002', bytes(2), NOW)).toBe(true);
    expect(await store.putLog(c, 'm/b', '0001', bytes(1), NOW)).toBe(true);
    expect(await store.putLog(c, 'm/b', '0001', bytes(7), NOW)).toBe(false);
    expect(await store.putLog(c, 'm/a', '0003', bytes(3), NOW)).toBe(true);
    expect(await store.listLogs(c, 'm/b', '')).toEqual([
      { cycle: '0001', data: bytes(1) },
      { cycle: '0002', data: bytes(2) },
    ]);
    expect(await store.listLogs(c, 'm/b', '0001')).toEqual([{ cycle: '0002', data: bytes(2) }]);
    const all = await store.listClusterLogs(c);
    expect([...all.keys()]).toEqual(['m/a', 'm/b']);
    await store.deleteLogs(c, 'm/b', ['0001']);
    expect((await store.listLogs(c, 'm/b', '')).map((l) => l.cycle)).toEqual(['0002']);
  });

  it('writes the applied sizes and a history only over the version read (false: lost the race)', async () => {
    const store = make();
    const c = fresh();
    const requests = { n1: { agent: { cpu: 100, memory: 2 ** 26 } } };
    expect(await store.putApply(c, 'm/a', { records: {}, requests }, 0)).toBe(true);
    expect(await store.putApply(c, 'm/a', { records: {} }, 0)).toBe(false);
    expect(await store.getApply(c, 'm/a')).toEqual({ records: {}, requests, version: 1 });
    expect(await store.getApplies(c, ['m/a', 'm/none'])).toEqual(
      new Map([
        ['m/a', { records: {}, requests, version: 1 }],
        ['m/none', { records: {}, version: 0 }],
      ]),
    );
    await store.deleteApply(c, 'm/a');
    expect((await store.getApply(c, 'm/a')).version).toBe(0);

    expect(await store.putHistory(c, 'm/a', { node: 'n2', entries: [] }, 0, NOW)).toBe(true);
    expect(await store.putHistory(c, 'm/a', { node: 'n1', entries: [] }, 0, NOW)).toBe(true);
    expect(await store.putHistory(c, 'm/a', { node: 'n1', entries: [] }, 0, NOW)).toBe(false);
    expect(await store.putHistory(c, 'm/a', { node: 'n1', entries: [] }, 1, NOW)).toBe(true);
    expect((await store.listHistory(c, 'm/a')).map((h) => [h.node, h.version])).toEqual([
      ['n1', 2],
      ['n2', 1],
    ]);
  });

  it('gives back copies, and counts what it reads and writes', async () => {
    const store = make();
    const c = fresh();
    const h = head(c, 'a', 1);
    await store.putHead(h, 0);
    h.version = 99;
    const back = (await store.getHead(c, 'monitoring/a')) as DsHead;
    expect(back.version).toBe(1);
    back.version = 42;
    expect((await store.getHead(c, 'monitoring/a'))?.version).toBe(1);
    expect(store.stats.writes).toBe(1);
    expect(store.stats.reads).toBe(2);
    expect(store.stats.writeUnits).toBeGreaterThan(0);
  });
});
