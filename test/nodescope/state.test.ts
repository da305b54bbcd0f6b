import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compress,
  decodeChunkBody,
  decodeLog,
  decodeLogColumns,
  decompress,
  encodeChunkBody,
  encodeLog,
  entryOf,
  positionsIn,
} from '../../shared/nodescope/codec.js';
import {
  applyEntry,
  collectGarbage,
  entryFor,
  nodeRecommendation,
  recommendDsWide,
} from '../../shared/nodescope/engine.js';
import type { DsModel, LogEntry, NodeRecord } from '../../shared/nodescope/model.js';
import { packBase } from '../../shared/nodescope/state.js';
import { type NodeScopeTarget, scopeOf } from '../../shared/nodescope/targets.js';
import { encodeState } from '../../shared/recommendation/index.js';

const T0 = Date.UTC(2026, 10, 1);
const MIN = 60_000;

function rng(seed: number) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

const target: NodeScopeTarget = {
  vpa: { namespace: 'm', name: 'v', uid: 'u' },
  ds: { namespace: 'm', name: 'd', uid: 'u' },
  selector: 'app=d',
  placement: { tolerations: [] },
  scope: scopeOf('node', undefined),
  containers: [
    {
      name: 'a',
      requests: { cpu: 100 as never, memory: 134217728 as never },
      limits: { memory: 268435456 as never },
    },
    { name: 'b', requests: { cpu: 50 as never }, limits: {} },
  ],
  updateMode: 'Auto',
  apply: 'inplace',
  policies: {},
  via: 'spec',
  digest: 'x',
};

/** Cycles of random usage on `nodes` nodes (load differing per node), with OOMs now and then. */
function entries(nodes: string[], cycles: number, seed: number, gen = 0): LogEntry[] {
  const r = rng(seed);
  const out: LogEntry[] = [];
  for (let c = 0; c < cycles; c++) {
    const at = T0 + c * 5 * MIN;
    const e: LogEntry = { at, gen, containers: ['a', 'b'], samples: [], ooms: [] };
    nodes.forEach((node, i) => {
      if (r() < 0.05) return; // a missed scrape
      const t = Math.floor((at - r() * 30_000) / 1000) * 1000;
      const f = 1 + i;
      e.samples.push({
        node,
        t,
        cpu: [Math.round(20 * f * (1 + 0.3 * r())), r() < 0.02 ? undefined : Math.round(5 * f * (1 + r()))],
        memory: [
          Math.floor((64 + 10 * f * r()) * 2 ** 20),
          (r() < 0.5 ? 1024 : 1) * Math.floor(30_000 * f * (1 + r())),
        ],
      });
      if (r() < 0.01) e.ooms.push({ node, container: 0, t: t - 1000, request: 134217728 });
    });
    out.push(e);
  }
  return out;
}

const emptyModel = (): DsModel => ({ containers: ['a', 'b'], nodes: new Map() });

function snapshot(model: DsModel): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [n, rec] of model.nodes)
    out[n] = rec.states
      .map((s) => (s ? Buffer.from(encodeState(s)).toString('base64') : '-'))
      .concat(rec.lastOomAt.map(String));
  return out;
}

describe('stored states', () => {
  const nodes = [
    'ip-10-0-1-1.ec2.internal',
    'ip-10-0-1-2.ec2.internal',
    'ip-10-0-1-3.ec2.internal',
    'ip-10-0-2-9.ec2.internal',
  ];

  it("keeps a log entry's scope values of nodes the base does not know, and still reads version 1 entries", () => {
    const e: LogEntry = {
      ...(entries(nodes, 1, 3)[0] as LogEntry),
      groups: [
        ['ip-10-0-9-1.ec2.internal', 'gpu'],
        ['ip-10-0-9-2.ec2.internal', ''],
        ['ip-10-0-9-3.ec2.internal', '__absent__'],
      ],
    };
    const body = encodeLog(e, nodes);
    expect(decodeLogColumns(body, nodes).groups).toEqual(e.groups);
    // Version 1: the same bytes without the groups' count (an empty list is one 0 byte at the end).
    const v1 = encodeLog({ ...e, groups: [] }, nodes).slice(0, -1);
    v1[0] = 1;
    const old = decodeLogColumns(v1, nodes);
    expect(old.groups).toEqual([]);
    expect(old.names).toEqual(decodeLogColumns(body, nodes).names);
  });

  it('replaying the log over the base gives the very states and recommendations of the live cycles', () => {
    const all = entries(nodes, 120, 7);
    // Live: every cycle applied in memory.
    const live = emptyModel();
    for (const e of all) applyEntry(live, e);
    // Stored: a fold after 60 cycles (base), the rest as encoded log entries replayed over the decoded base.
    const folded = emptyModel();
    for (const e of all.slice(0, 60)) applyEntry(folded, e);
    const packed = packBase(folded, 400);
    expect(packed.chunks.length).toBeGreaterThan(1);
    const restored: DsModel = { containers: ['a', 'b'], nodes: new Map() };
    const order: string[] = [];
    for (const c of packed.chunks)
      for (const n of decodeChunkBody(decompress(c)).nodes) {
        restored.nodes.set(n.node, n);
        order.push(n.node);
      }
    expect(order).toEqual(packed.order);
    // A node that joins after the fold is written by name.
    const late = entries([...nodes, 'ip-10-0-3-1.ec2.internal'], 60, 8, 1).map((e) => ({
      ...e,
      at: e.at + 60 * 5 * MIN,
    }));
    for (const e of all.slice(60)) {
      applyEntry(restored, decodeLog(decompress(compress(encodeLog({ ...e, gen: 1 }, order))), order));
    }
    expect(snapshot(restored)).toEqual(snapshot(live));
    for (const e of late) {
      applyEntry(live, e);
      applyEntry(restored, decodeLog(decompress(compress(encodeLog(e, order))), order));
    }
    expect(snapshot(restored)).toEqual(snapshot(live));
    const wideLive = recommendDsWide(target, live);
    expect(recommendDsWide(target, restored)).toEqual(wideLive);
    for (const n of live.nodes.keys())
      expect(nodeRecommendation(target, restored.nodes.get(n), { dsWide: wideLive })).toEqual(
        nodeRecommendation(target, live.nodes.get(n), { dsWide: wideLive }),
      );
  });

  it('a redelivered cycle changes nothing (samples are not after the last ones)', () => {
    const all = entries(nodes, 30, 3);
    const once = emptyModel();
    const twice = emptyModel();
    for (const e of all) {
      applyEntry(once, e);
      applyEntry(twice, e);
      applyEntry(twice, e);
    }
    expect(snapshot(twice)).toEqual(snapshot(once));
  });

  it('chunks keep recommendations, fallback and group marks, groups and OOM times', () => {
    const m = emptyModel();
    for (const e of entries(nodes.slice(0, 2), 20, 5)) applyEntry(m, e);
    const wide = recommendDsWide(target, m);
    const recs = [...m.nodes.values()];
    (recs[0] as NodeRecord).rec = nodeRecommendation(target, recs[0], { dsWide: wide });
    (recs[0] as NodeRecord).group = '';
    const fresh: NodeRecord = { node: 'new', states: [undefined, undefined], lastOomAt: [0, 0] };
    fresh.rec = nodeRecommendation(target, fresh, { dsWide: wide });
    const grouped: NodeRecord = { node: 'g', states: [undefined, undefined], lastOomAt: [0, 0], group: 'm5' };
    grouped.rec = nodeRecommendation(target, grouped, {
      group: { value: 'm5', containers: recs[0]!.rec!.containers },
      dsWide: wide,
    });
    expect(grouped.rec).toMatchObject({ source: 'group', group: 'm5' });
    (recs[1] as NodeRecord).lastOomAt[0] = T0 + 1000;
    const body = encodeChunkBody(['a', 'b'], [...recs, fresh, grouped]);
    const back = decodeChunkBody(body);
    expect(back.nodes[0]?.rec).toEqual(recs[0]?.rec);
    expect(back.nodes[0]?.group).toBe('');
    expect(back.nodes[1]?.group).toBeUndefined();
    expect(back.nodes[2]?.rec?.source).toBe('fallback');
    expect(back.nodes[3]?.rec).toEqual(grouped.rec);
    expect(back.nodes[3]?.group).toBe('m5');
    expect(back.nodes[2]?.rec?.containers).toEqual(wide);
    expect(back.nodes[1]?.lastOomAt[0]).toBe(T0 + 1000);
    expect(Buffer.from(encodeChunkBody(['a', 'b'], back.nodes))).toEqual(Buffer.from(body));
  });

  it('garbage-collects as upstream: expired states go, live nodes and nodes the DaemonSet can run on stay', () => {
    const m = emptyModel();
    for (const e of entries(nodes, 3, 9)) applyEntry(m, e);
    const now = T0 + 7 * 86_400_000;
    expect(collectGarbage(m, now, new Set(), new Set(nodes))).toEqual({ states: 0, nodes: 0 });
    const later = T0 + 8 * 86_400_000 + 3 * 5 * MIN;
    const gone = collectGarbage(m, later, new Set([nodes[0] as string]), new Set([nodes[1] as string]));
    expect(gone.nodes).toBe(3);
    expect([...m.nodes.keys()].sort()).toEqual([nodes[1]]);
  });
});

describe('single nodes picked out of a cycle', () => {
  it('positionsIn finds, in order, what a scan finds, looked up (few names) or scanned (many)', () => {
    let lookedUp = 0;
    let scanned = 0;
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'), { maxLength: 60 }),
        fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'x'), { maxLength: 4 }),
        (names, picked) => {
          const only = new Set<string>(picked);
          const scan = names.flatMap((n, i) => (only.has(n) ? [i] : []));
          if (only.size * 16 < names.length) lookedUp++;
          else scanned++;
          expect(positionsIn(names, only)).toEqual(scan);
          expect(positionsIn(names, only)).toEqual(scan); // the index, once built
        },
      ),
      { numRuns: 400 },
    );
    expect(lookedUp).toBeGreaterThan(0);
    expect(scanned).toBeGreaterThan(0);
  });

  it("entryFor and entryOf restricted to some nodes equal the whole cycle's filtered", () => {
    const nodes = Array.from({ length: 40 }, (_, i) => `ip-10-0-0-${i}.ec2.internal`);
    const [e] = entries(nodes, 1, 11);
    const entry = e as LogEntry;
    const order = nodes.slice(0, 30);
    const columns = decodeLogColumns(encodeLog(entry, order), order);
    for (const picked of [[nodes[3]], [nodes[35]], [nodes[1], nodes[33], 'absent'], nodes]) {
      const only = new Set(picked as string[]);
      expect(entryFor(entry, only).samples).toEqual(entry.samples.filter((s) => only.has(s.node)));
      const all = entryOf(columns);
      expect(entryOf(columns, only).samples).toEqual(all.samples.filter((s) => only.has(s.node)));
    }
  });
});
