/**
 * A DaemonSet's decoded base kept in process between cycles (base-cache.ts): used only while the head
 * read names that very base; a base another writer folded since, or one named alike elsewhere, is read
 * from the table; and what a cycle does to its model never reaches the copy kept.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.js';
import { BaseCache, newBaseId } from '../../shared/nodescope/base-cache.js';
import { applyEntry } from '../../shared/nodescope/engine.js';
import { KeptBudget } from '../../shared/nodescope/kept-budget.js';
import type { DsModel, LogEntry } from '../../shared/nodescope/model.js';
import { KeptRequests, type PodRequests } from '../../shared/nodescope/pod-requests.js';
import { loadDs, packBase } from '../../shared/nodescope/state.js';
import type { DsHead, NodeScopeStore } from '../../shared/nodescope/store.js';
import { DynamoNodeScopeStore } from '../../shared/nodescope/store-dynamo.js';
import { encodeState } from '../../shared/recommendation/index.js';

const T0 = Date.UTC(2026, 10, 1);
const DS = 'monitoring/agent';
const NODES = ['ip-10-0-1-1.ec2.internal', 'ip-10-0-1-2.ec2.internal', 'ip-10-0-1-3.ec2.internal'];

let runtime: LocalRuntime;
beforeAll(async () => {
  runtime = await startLocalRuntime({ retryDelayMs: 5 });
});
afterAll(() => runtime.stop());

/** `cycles` cycles of usage scaled by `load`: different loads give different states. */
function model(cycles: number, load: number): DsModel {
  const m: DsModel = { containers: ['a'], nodes: new Map() };
  for (let c = 0; c < cycles; c++) {
    const at = T0 + c * 300_000;
    const e: LogEntry = {
      at,
      gen: 0,
      containers: ['a'],
      samples: NODES.map((node, i) => ({
        node,
        t: at,
        cpu: [load * (10 + i)],
        memory: [load * 2 ** 20 * (i + 1)],
      })),
      ooms: [],
    };
    applyEntry(m, e);
  }
  return m;
}

/** What the states say, decoded or not (the stored bytes of each). */
function statesOf(m: DsModel): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [n, r] of m.nodes) {
    const s = r.states[0];
    const bytes = s ? encodeState(s) : r.raw?.[0];
    out[n] = bytes ? Buffer.from(bytes).toString('base64') : '-';
  }
  return out;
}

/** A fold's base written to the table as a cycle's fold writes it: chunks, then the head on its version. */
async function fold(store: NodeScopeStore, cluster: string, m: DsModel, prev?: DsHead): Promise<DsHead> {
  const gen = (prev?.gen ?? 0) + 1;
  const { chunks } = packBase(m, 64);
  for (let k = 0; k < chunks.length; k++)
    expect(await store.putChunk(cluster, DS, gen, k, chunks[k] as Uint8Array, T0)).toBe(true);
  const head: DsHead = {
    cluster,
    namespace: 'monitoring',
    name: 'agent',
    vpa: { namespace: 'monitoring', name: 'agent', uid: 'u' },
    updateMode: 'Auto',
    digest: 'd',
    containers: ['a'],
    template: [],
    policies: {},
    gen,
    chunks: chunks.length,
    baseAt: T0,
    foldedThrough: '',
    dsWide: {},
    stats: {
      nodes: m.nodes.size,
      eligibleNodes: 0,
      fallbackNodes: 0,
      scopes: 0,
      perNodeCpu: 0,
      perNodeMemory: 0,
      dsWideCpu: 0,
      dsWideMemory: 0,
      lastSampleAt: 0,
    },
    baseId: newBaseId(),
    version: (prev?.version ?? 0) + 1,
  };
  await store.putHead(head, prev?.version ?? 0);
  return head;
}

const load = (store: NodeScopeStore, cluster: string, head: DsHead) =>
  loadDs(store, head, cluster, DS, ['a'], { replay: false });

describe('the bases kept in process', () => {
  it('reads the chunks once, then uses the copy while the head names that base', async () => {
    const store = new DynamoNodeScopeStore(runtime.db, runtime.table, new BaseCache());
    const m = model(20, 1);
    const head = await fold(store, 'warm', m);
    expect(head.chunks).toBeGreaterThan(1);
    const first = await load(store, 'warm', head);
    const reads = store.stats.reads;
    const second = await load(store, 'warm', head);
    expect(store.stats.reads).toBe(reads); // no chunk read
    expect(store.bases.stats).toEqual({ hits: 1, misses: 1 });
    expect(second.baseOrder).toEqual(first.baseOrder);
    expect(statesOf(second.model)).toEqual(statesOf(m));
    expect(statesOf(second.model)).toEqual(statesOf(first.model));
  });

  it('never hands out what a cycle did to its model: states, OOM times, recommendations', async () => {
    const store = new DynamoNodeScopeStore(runtime.db, runtime.table, new BaseCache());
    const m = model(20, 1);
    const head = await fold(store, 'mutate', m);
    const pristine = statesOf((await load(store, 'mutate', head)).model);
    const used = await load(store, 'mutate', head);
    // A cycle applies samples (decoding states), notes an OOM kill and stores recommendations.
    applyEntry(used.model, {
      at: T0 + 86_400_000,
      gen: 1,
      containers: ['a'],
      samples: NODES.map((node) => ({ node, t: T0 + 86_400_000, cpu: [999], memory: [2 ** 30] })),
      ooms: [{ node: NODES[0] as string, container: 0, t: T0 + 86_400_000, request: 2 ** 20 }],
    });
    for (const r of used.model.nodes.values()) r.rec = { source: 'fallback', containers: {} };
    expect(statesOf(used.model)).not.toEqual(pristine);
    const again = await load(store, 'mutate', head);
    expect(store.bases.stats.hits).toBe(2);
    expect(statesOf(again.model)).toEqual(pristine);
    for (const r of again.model.nodes.values()) {
      expect(r.lastOomAt).toEqual([0]);
      expect(r.rec).toBeUndefined();
      expect(r.states).toEqual([undefined]);
    }
  });

  it('detects a base another writer folded since, and reads the new one', async () => {
    const mine = new DynamoNodeScopeStore(runtime.db, runtime.table, new BaseCache());
    const other = new DynamoNodeScopeStore(runtime.db, runtime.table, new BaseCache());
    const head1 = await fold(mine, 'raced', model(20, 1));
    await load(mine, 'raced', head1); // kept
    // Another invocation folds: new chunks (another generation), the head moved on its version.
    const newer = model(30, 7);
    const head2 = await fold(other, 'raced', newer, head1);
    const reads = mine.stats.reads;
    const got = await load(mine, 'raced', head2);
    expect(mine.stats.reads).toBeGreaterThan(reads);
    expect(mine.bases.stats.hits).toBe(0);
    expect(statesOf(got.model)).toEqual(statesOf(newer));
    expect(statesOf(got.model)).not.toEqual(statesOf(model(20, 1)));
  });

  it('does not take a base named alike (generation, chunks, version) in another table or cluster for its own', async () => {
    const bases = new BaseCache();
    const a = new DynamoNodeScopeStore(runtime.db, runtime.table, bases);
    const headA = await fold(a, 'same-a', model(20, 1));
    await load(a, 'same-a', headA);
    // The same cluster and DaemonSet names, generation, chunk count and version, another base id:
    // e.g. the table recreated, or another account's table behind the same process's client.
    const other = model(20, 3);
    const headB = await fold(
      new DynamoNodeScopeStore(runtime.db, runtime.table, new BaseCache()),
      'same-b',
      other,
    );
    const forged: DsHead = { ...headB, cluster: 'same-a' };
    expect([forged.gen, forged.chunks, forged.version]).toEqual([headA.gen, headA.chunks, headA.version]);
    expect(bases.get(`same-a\u0000${DS}`, forged)).toBeUndefined();
    // A head without a base id (written before them) is never matched either.
    const { baseId: _, ...old } = headA;
    expect(bases.get(`same-a\u0000${DS}`, old)).toBeUndefined();
    expect(bases.get(`same-a\u0000${DS}`, headA)).toBeDefined();
  });

  it('keeps nothing over its heap budget: a base larger than all of it is read every time', async () => {
    const bases = new BaseCache(new KeptBudget(1));
    const store = new DynamoNodeScopeStore(runtime.db, runtime.table, bases);
    const head = await fold(store, 'tiny', model(5, 1));
    await load(store, 'tiny', head);
    await load(store, 'tiny', head);
    expect(bases.stats.hits).toBe(0);
    expect(bases.budget.usedBytes).toBe(0);
  });

  it('stays within its heap budget, the least recently used base going first; a base let go is read again, the same', async () => {
    // Each base's heap estimate, as a cache without a tight budget counts it.
    const probe = new DynamoNodeScopeStore(runtime.db, runtime.table, new BaseCache());
    const heads: DsHead[] = [];
    const sizes: number[] = [];
    const first: Record<string, string>[] = [];
    for (const [i, cluster] of ['lru-1', 'lru-2', 'lru-3'].entries()) {
      const head = await fold(probe, cluster, model(20, i + 1));
      const used = probe.bases.budget.usedBytes;
      first.push(statesOf((await load(probe, cluster, head)).model));
      sizes.push(probe.bases.budget.usedBytes - used);
      heads.push(head);
    }
    for (const size of sizes) expect(size).toBeGreaterThan(0);
    // Room for all three but one byte.
    const budget = new KeptBudget(sizes.reduce((a, b) => a + b) - 1);
    const store = new DynamoNodeScopeStore(runtime.db, runtime.table, new BaseCache(budget));
    const [h1, h2, h3] = heads as [DsHead, DsHead, DsHead];
    await load(store, 'lru-1', h1);
    await load(store, 'lru-2', h2);
    await load(store, 'lru-1', h1); // used again: lru-2 is now the least recently used
    expect(store.bases.stats).toEqual({ hits: 1, misses: 2 });
    await load(store, 'lru-3', h3);
    expect(budget.usedBytes).toBe((sizes[0] as number) + (sizes[2] as number));
    expect(budget.usedBytes).toBeLessThanOrEqual(budget.maxBytes);
    let reads = store.stats.reads;
    expect(statesOf((await load(store, 'lru-1', h1)).model)).toEqual(first[0]);
    expect(statesOf((await load(store, 'lru-3', h3)).model)).toEqual(first[2]);
    expect(store.stats.reads).toBe(reads); // both kept
    // lru-2 went: its chunks are read from the table, with the same result as before.
    const again = await load(store, 'lru-2', h2);
    expect(store.stats.reads).toBeGreaterThan(reads);
    expect(statesOf(again.model)).toEqual(first[1]);
    expect(budget.usedBytes).toBeLessThanOrEqual(budget.maxBytes);
    // Kept again, it pushed out the least recently used (lru-1).
    reads = store.stats.reads;
    await load(store, 'lru-3', h3);
    await load(store, 'lru-2', h2);
    expect(store.stats.reads).toBe(reads);
    await load(store, 'lru-1', h1);
    expect(store.stats.reads).toBeGreaterThan(reads);
  });
});

describe("the apply items' requests kept unpacked", () => {
  it('are under the same budget as the bases; requests let go are read from the table, the same', async () => {
    const requests: PodRequests = Object.fromEntries(
      NODES.map((n, i) => [n, { a: { cpu: 10 * (i + 1), memory: 2 ** 20 * (i + 1) } }]),
    );
    const writer = new DynamoNodeScopeStore(runtime.db, runtime.table, new BaseCache(), new KeptRequests());
    expect(await writer.putApply('requests', DS, { records: {}, requests }, 0)).toBe(true);
    // Kept as written, at twice its JSON's length and more: the next read is not parsed again.
    const sizeOfRequests = writer.requests.budget.usedBytes;
    expect(sizeOfRequests).toBeGreaterThan(2 * JSON.stringify(requests).length);
    expect((await writer.getApply('requests', DS)).requests).toEqual(requests);
    expect(writer.requests.stats).toEqual({ hits: 1, misses: 0 });
    const head = await fold(writer, 'requests', model(20, 1));
    await load(writer, 'requests', head);
    const sizeOfBase = writer.bases.budget.usedBytes; // (its own budget: the writer's caches share none)
    expect(sizeOfBase).toBeGreaterThan(0);
    // A process with room for either, not both.
    const budget = new KeptBudget(sizeOfRequests + sizeOfBase - 1);
    const store = new DynamoNodeScopeStore(
      runtime.db,
      runtime.table,
      new BaseCache(budget),
      new KeptRequests(budget),
    );
    expect((await store.getApply('requests', DS)).requests).toEqual(requests);
    expect(budget.usedBytes).toBe(sizeOfRequests);
    await load(store, 'requests', head); // the base pushes out the requests, used less recently
    expect(budget.usedBytes).toBe(sizeOfBase);
    const reads = store.stats.reads;
    expect((await store.getApply('requests', DS)).requests).toEqual(requests);
    expect(store.requests.stats).toEqual({ hits: 0, misses: 2 });
    expect(store.stats.reads).toBe(reads + 1);
    // and now the requests, read again and kept, push out the base: it is read from the table, the same.
    expect(budget.usedBytes).toBe(sizeOfRequests);
    expect(statesOf((await load(store, 'requests', head)).model)).toEqual(statesOf(model(20, 1)));
    expect(store.bases.stats).toEqual({ hits: 0, misses: 2 });
  });
});
