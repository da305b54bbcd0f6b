/**
 * One heap budget for node scope's copies kept in process (kept-budget.ts): the decoded bases and the
 * apply items' unpacked requests count at their heap estimates against it, the total never passes it,
 * and the least recently used entry, of either cache, goes first.
 */
import { describe, expect, it } from 'vitest';
import { BaseCache, baseHeapBytes, newBaseId } from '../../shared/nodescope/base-cache.js';
import { decompress } from '../../shared/nodescope/codec.js';
import { applyEntry } from '../../shared/nodescope/engine.js';
import {
  KeptBudget,
  type KeptEntry,
  keptBudgetBytes,
  processKept,
} from '../../shared/nodescope/kept-budget.js';
import type { DsModel } from '../../shared/nodescope/model.js';
import { KeptRequests, type PodRequests } from '../../shared/nodescope/pod-requests.js';
import { decodeBase, packBase } from '../../shared/nodescope/state.js';

const MIB = 2 ** 20;
const T0 = Date.UTC(2026, 10, 1);

/** Entries of known size, recording their eviction. */
function entries(sizes: Record<string, number>, evicted: string[]): Record<string, KeptEntry> {
  return Object.fromEntries(
    Object.entries(sizes).map(([name, bytes]) => [name, { bytes, evicted: () => evicted.push(name) }]),
  );
}

describe('the heap budget', () => {
  it('never holds more than its bytes, evicting the least recently used first', () => {
    const budget = new KeptBudget(100);
    const evicted: string[] = [];
    const e = entries({ a: 40, b: 30, c: 20, d: 50, e: 100, huge: 101 }, evicted);
    for (const n of ['a', 'b', 'c'] as const) expect(budget.admit(e[n] as KeptEntry)).toBe(true);
    expect(budget.usedBytes).toBe(90);
    budget.touch(e.a as KeptEntry); // a used again: b is now the least recently used
    expect(budget.admit(e.d as KeptEntry)).toBe(true);
    expect(evicted).toEqual(['b', 'c']);
    expect(budget.usedBytes).toBe(90);
    // Larger than the whole budget: not kept, and nothing evicted for it.
    expect(budget.admit(e.huge as KeptEntry)).toBe(false);
    expect(evicted).toEqual(['b', 'c']);
    expect(budget.usedBytes).toBe(90);
    // Exactly the budget: everything else goes, least recently used first.
    expect(budget.admit(e.e as KeptEntry)).toBe(true);
    expect(evicted).toEqual(['b', 'c', 'a', 'd']);
    expect(budget.usedBytes).toBe(100);
    budget.release(e.e as KeptEntry);
    budget.release(e.e as KeptEntry); // twice: counted once
    expect(budget.usedBytes).toBe(0);
  });

  it('is a tenth of the function’s memory', () => {
    expect(keptBudgetBytes({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '1769' })).toBe(Math.floor((1769 * MIB) / 10));
    expect(keptBudgetBytes({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '512' })).toBe(Math.floor((512 * MIB) / 10));
    // Outside Lambda: the cycle function's 1,769 MB.
    expect(keptBudgetBytes({})).toBe(Math.floor((1769 * MIB) / 10));
    expect(processKept.maxBytes).toBe(keptBudgetBytes());
  });
});

/** A decoded base of `nodes` nodes of two containers, with stored recommendations, as a read gives it. */
function base(nodes: number, load: number) {
  const m: DsModel = { containers: ['a', 'b'], nodes: new Map() };
  for (let c = 0; c < 10; c++)
    applyEntry(m, {
      at: T0 + c * 300_000,
      gen: 0,
      containers: ['a', 'b'],
      samples: Array.from({ length: nodes }, (_, i) => ({
        node: `node-${i}`,
        t: T0 + c * 300_000,
        cpu: [load * (10 + i), 5],
        memory: [load * MIB * (i + 1), MIB],
      })),
      ooms: [],
    });
  const target = { cpu: 100, memory: MIB };
  for (const r of m.nodes.values())
    r.rec = {
      source: 'node',
      containers: { a: { target, lowerBound: target, upperBound: target, uncappedTarget: target } },
    };
  const { chunks } = packBase(m, 1024);
  return decodeBase(m.containers, chunks.map(decompress));
}

const head = () => ({ baseId: newBaseId(), gen: 1, chunks: 1, version: 1 });

describe('the bases and the unpacked requests under one budget', () => {
  it('count at their heap estimates, and the least recently used of either goes first', () => {
    const [one, two] = [base(50, 1), base(50, 2)];
    const sizes = [one, two].map((b) => baseHeapBytes(b.decoded, b.bytes));
    // The estimate is of the decoded records, several times their bodies' bytes.
    for (const [i, b] of [one, two].entries()) expect(sizes[i]).toBeGreaterThan(2 * b.bytes);
    const requests: PodRequests = { 'node-0': { a: { cpu: 100, memory: MIB } } };
    const json = Buffer.from(JSON.stringify(requests));
    const z = new Uint8Array([1, 2, 3, 4]);
    const requestsBytes = 2 * json.length + z.length;
    const budget = new KeptBudget((sizes[0] as number) + (sizes[1] as number) + requestsBytes - 1);
    const bases = new BaseCache(budget);
    const kept = new KeptRequests(budget);
    const [h1, h2] = [head(), head()];
    bases.set('one', h1, one.decoded, one.bytes);
    kept.keep(z, requests, json.length);
    expect(budget.usedBytes).toBe((sizes[0] as number) + requestsBytes);
    expect(bases.get('one', h1)).toBeDefined(); // the base used again: the requests are the oldest use
    bases.set('two', h2, two.decoded, two.bytes);
    expect(budget.usedBytes).toBe((sizes[0] as number) + (sizes[1] as number));
    expect(budget.usedBytes).toBeLessThanOrEqual(budget.maxBytes);
    expect(kept.get(z)).toBeUndefined();
    expect(bases.get('one', h1)).toBeDefined();
    expect(bases.get('two', h2)).toBeDefined();
    // Kept again, the requests push out the least recently used base (one).
    expect(kept.keep(z, structuredClone(requests), json.length)).toEqual(requests);
    expect(bases.get('one', h1)).toBeUndefined();
    expect(bases.get('two', h2)).toBeDefined();
    expect(kept.get(z)).toEqual(requests);
    expect(budget.usedBytes).toBe((sizes[1] as number) + requestsBytes);
    // Replaced and cleared entries give their bytes back.
    bases.set('two', h2, one.decoded, one.bytes);
    expect(budget.usedBytes).toBe((sizes[0] as number) + requestsBytes);
    bases.clear();
    expect(budget.usedBytes).toBe(requestsBytes);
  });

  it('count a base’s bodies twice over (the buffers behind them), and every node and recommendation', () => {
    const [b, more] = [base(20, 1), base(40, 1)];
    expect(baseHeapBytes(b.decoded, b.bytes) - baseHeapBytes(b.decoded, 0)).toBe(2 * b.bytes);
    const perNode = (baseHeapBytes(more.decoded, 0) - baseHeapBytes(b.decoded, 0)) / 20;
    // Two containers, each with a stored recommendation: 650 + 2·120 + 150 + 2·330, plus the name.
    expect(perNode).toBeGreaterThanOrEqual(650 + 240 + 150 + 660 + 'node-0'.length);
    const bare = { containers: b.decoded.containers, nodes: b.decoded.nodes.map(({ rec: _, ...n }) => n) };
    expect(baseHeapBytes(b.decoded, 0) - baseHeapBytes(bare, 0)).toBe(20 * (150 + 660));
  });
});
