/**
 * The packed forms nodescope stores in DynamoDB Binary attributes, each compressed with raw DEFLATE.
 *
 * Base chunk (version 2; version 1, without groups, is still read): the full state of a run of nodes,
 * as of a fold.
 *   u8 version | containers: n, names | nodes: n, then per node:
 *     name | u8 flags (1: recommendation stored, 2: it is a fallback, 4: it is its group's,
 *     8: a group follows) | if 8: the node's scope value of the group label
 *     per container: lastOomAt (s, 0 none) | state bytes (length 0: no state yet)
 *                    | if stored: u8 present, then target, lowerBound, upperBound, uncappedTarget, limits
 *                      as (cpu+1, memory+1) varint pairs (0: absent)
 *   States are shared/recommendation's lossless encoding, so a restart recommends exactly as before;
 *   they are decoded only when needed, and written back as they were when not touched.
 *
 * Log entry (version 2; version 1, without groups, is still read): one cycle's samples and OOM kills,
 * applied on top of the base in key order, and the scope values of nodes the base has none for.
 *   u8 version | at (ms) | gen | containers: n, names | base nodes n | presence bitmap over the base's
 *   node order | extra (new) node names | then columns over the present nodes, base order then extras:
 *   time (s, relative to at, zigzag) | per container cpu+1 | per container memory (2·KiB, or 2·bytes+1)
 *   | OOMs: n, (node position, container, t s, request bytes) | groups: n, (node name, scope value)
 *   Columns of like values compress better than rows.
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { encodeState } from '../recommendation/index.js';
import { ByteReader, ByteWriter, DecodeError } from './bytes.js';
import type { Amounts, ContainerRec, LogEntry, NodeRec, NodeRecord, NodeSamples, OomEvent } from './model.js';

const CHUNK_VERSION = 2;
const LOG_VERSION = 2;
const LEVEL = 6;

export const compress = (b: Uint8Array): Uint8Array => deflateRawSync(b, { level: LEVEL });
export const decompress = (b: Uint8Array): Uint8Array => inflateRawSync(b);

function writeAmounts(w: ByteWriter, a: Amounts | undefined): void {
  w.varint(a?.cpu === undefined ? 0 : a.cpu + 1);
  w.varint(a?.memory === undefined ? 0 : a.memory + 1);
}

function readAmounts(r: ByteReader): Amounts | undefined {
  const cpu = r.varint();
  const memory = r.varint();
  if (cpu === 0 && memory === 0) return undefined;
  const out: Amounts = {};
  if (cpu !== 0) out.cpu = cpu - 1;
  if (memory !== 0) out.memory = memory - 1;
  return out;
}

/** Encodes nodes' records as one uncompressed chunk body (compress it for storage). */
export function encodeChunkBody(containers: readonly string[], nodes: readonly NodeRecord[]): Uint8Array {
  const w = new ByteWriter(64 * 1024);
  w.u8(CHUNK_VERSION);
  w.varint(containers.length);
  for (const c of containers) w.string(c);
  w.varint(nodes.length);
  for (const n of nodes) {
    w.string(n.node);
    const flags =
      (n.rec ? 1 : 0) |
      (n.rec?.source === 'fallback' ? 2 : 0) |
      (n.rec?.source === 'group' ? 4 : 0) |
      (n.group !== undefined ? 8 : 0);
    w.u8(flags);
    if (n.group !== undefined) w.string(n.group);
    containers.forEach((name, i) => {
      w.varint(Math.floor((n.lastOomAt[i] ?? 0) / 1000));
      const s = n.states[i];
      const raw = n.raw?.[i];
      if (s) w.bytes(encodeState(s));
      else if (raw) w.bytes(raw);
      else w.varint(0);
      if (n.rec) {
        const rec = n.rec.containers[name];
        w.u8(rec ? 1 : 0);
        if (rec) {
          writeAmounts(w, rec.target);
          writeAmounts(w, rec.lowerBound);
          writeAmounts(w, rec.upperBound);
          writeAmounts(w, rec.uncappedTarget);
          writeAmounts(w, rec.limits);
        }
      }
    });
  }
  return w.finish();
}

export function decodeChunkBody(body: Uint8Array): { containers: string[]; nodes: NodeRecord[] } {
  const r = new ByteReader(body);
  const version = r.u8();
  if (version !== CHUNK_VERSION && version !== 1)
    throw new DecodeError(`unsupported chunk version ${version}`);
  const containers: string[] = [];
  for (let i = r.varint(); i > 0; i--) containers.push(r.string());
  const nodes: NodeRecord[] = [];
  for (let k = r.varint(); k > 0; k--) {
    const node = r.string();
    const flags = r.u8();
    const record: NodeRecord = { node, states: [], lastOomAt: [], raw: [] };
    if (flags & 8) record.group = r.string();
    const recContainers: Record<string, ContainerRec> = {};
    for (const name of containers) {
      record.lastOomAt.push(r.varint() * 1000);
      // Decoded on demand (engine.materialize): a cycle that does not fold reads few of them.
      const bytes = r.bytes();
      record.states.push(undefined);
      record.raw?.push(bytes.length > 0 ? bytes : undefined);
      if (flags & 1 && r.u8() === 1) {
        const target = readAmounts(r) ?? {};
        const lowerBound = readAmounts(r) ?? {};
        const upperBound = readAmounts(r) ?? {};
        const uncappedTarget = readAmounts(r) ?? {};
        const limits = readAmounts(r);
        recContainers[name] = {
          target,
          lowerBound,
          upperBound,
          uncappedTarget,
          ...(limits ? { limits } : {}),
        };
      }
    }
    if (flags & 1) record.rec = recOf(flags, record.group, recContainers);
    nodes.push(record);
  }
  if (!r.done) throw new DecodeError('trailing bytes in chunk');
  return { containers, nodes };
}

function recOf(flags: number, group: string | undefined, containers: Record<string, ContainerRec>): NodeRec {
  if (flags & 2) return { source: 'fallback', containers };
  if (flags & 4) return { source: 'group', ...(group !== undefined ? { group } : {}), containers };
  return { source: 'node', containers };
}

const memCode = (b: number): number => (b % 1024 === 0 ? (b / 1024) * 2 : b * 2 + 1);
const memDecode = (v: number): number => (v % 2 === 0 ? (v / 2) * 1024 : (v - 1) / 2);

/**
 * Encodes a cycle's entry; `baseOrder` is the node order of the base generation it extends (nodes not
 * in it are written by name).
 */
export function encodeLog(entry: LogEntry, baseOrder: readonly string[]): Uint8Array {
  const w = new ByteWriter(16 * 1024);
  w.u8(LOG_VERSION);
  w.varint(entry.at);
  w.varint(entry.gen);
  w.varint(entry.containers.length);
  for (const c of entry.containers) w.string(c);
  const ordered = writePresence(w, entry.samples, baseOrder);
  const atS = Math.floor(entry.at / 1000);
  for (const s of ordered) w.svarint(Math.floor(s.t / 1000) - atS);
  const c = entry.containers.length;
  for (let k = 0; k < c; k++)
    for (const s of ordered) w.varint(s.cpu[k] === undefined ? 0 : (s.cpu[k] as number) + 1);
  for (let k = 0; k < c; k++)
    for (const s of ordered) w.varint(s.memory[k] === undefined ? 0 : memCode(s.memory[k] as number) + 1);
  writeOoms(w, entry.ooms, ordered);
  const groups = entry.groups ?? [];
  w.varint(groups.length);
  for (const [node, value] of groups) {
    w.string(node);
    w.string(value);
  }
  return w.finish();
}

/**
 * Which nodes have samples: a bitmap over the base's order, then the names of nodes not in it. Returns
 * the samples in the order the columns are written (base order, then the extras).
 */
function writePresence(w: ByteWriter, samples: readonly NodeSamples[], baseOrder: readonly string[]) {
  const index = new Map<string, number>();
  baseOrder.forEach((n, i) => {
    index.set(n, i);
  });
  const inBase: (NodeSamples | undefined)[] = new Array(baseOrder.length);
  const extras: NodeSamples[] = [];
  for (const s of samples) {
    const i = index.get(s.node);
    if (i === undefined) extras.push(s);
    else inBase[i] = s;
  }
  w.varint(baseOrder.length);
  const bitmap = new Uint8Array(Math.ceil(baseOrder.length / 8));
  for (let i = 0; i < baseOrder.length; i++)
    if (inBase[i]) bitmap[i >> 3] = (bitmap[i >> 3] as number) | (1 << (i & 7));
  w.raw(bitmap);
  w.varint(extras.length);
  for (const s of extras) w.string(s.node);
  return [...inBase.filter((s): s is NodeSamples => s !== undefined), ...extras];
}

/** OOM kills by their node's position among the samples (or by name for a node without samples). */
function writeOoms(w: ByteWriter, ooms: readonly OomEvent[], ordered: readonly NodeSamples[]): void {
  const position = new Map<string, number>();
  ordered.forEach((s, i) => {
    position.set(s.node, i);
  });
  w.varint(ooms.length);
  for (const o of ooms) {
    const p = position.get(o.node);
    if (p === undefined) {
      w.varint(0);
      w.string(o.node);
    } else w.varint(p + 1);
    w.varint(o.container);
    w.varint(Math.floor(o.t / 1000));
    w.varint(o.request);
  }
}

/**
 * A log entry decoded into columns (typed arrays, no object per node): what a cycle that does not fold
 * keeps of the entries since the base. `entryOf` makes sample objects for the nodes that need them.
 */
export interface ColumnarLog {
  at: number;
  gen: number;
  containers: string[];
  /** The present nodes in entry order. */
  names: string[];
  /** Per present node: the sample time (ms). */
  times: Float64Array;
  /** Per container, per present node: millicores / bytes, NaN when not reported. */
  cpu: Float64Array[];
  memory: Float64Array[];
  ooms: OomEvent[];
  /** The entry's scope values of nodes the base has none for (version 1: none). */
  groups: [string, string][];
}

export function decodeLogColumns(body: Uint8Array, baseOrder: readonly string[]): ColumnarLog {
  const r = new ByteReader(body);
  const version = r.u8();
  if (version !== LOG_VERSION && version !== 1) throw new DecodeError(`unsupported log version ${version}`);
  const at = r.varint();
  const gen = r.varint();
  const containers: string[] = [];
  for (let i = r.varint(); i > 0; i--) containers.push(r.string());
  const n = r.varint();
  if (n !== baseOrder.length)
    throw new DecodeError(`log written over ${n} base nodes, the base has ${baseOrder.length}`);
  const bitmap = r.raw(Math.ceil(n / 8));
  const names: string[] = [];
  for (let i = 0; i < n; i++)
    if ((bitmap[i >> 3] as number) & (1 << (i & 7))) names.push(baseOrder[i] as string);
  for (let i = r.varint(); i > 0; i--) names.push(r.string());
  const atS = Math.floor(at / 1000);
  const count = names.length;
  const times = new Float64Array(count);
  for (let i = 0; i < count; i++) times[i] = (atS + r.svarint()) * 1000;
  const cpu = containers.map(() => {
    const col = new Float64Array(count);
    for (let i = 0; i < count; i++) {
      const v = r.varint();
      col[i] = v === 0 ? Number.NaN : v - 1;
    }
    return col;
  });
  const memory = containers.map(() => {
    const col = new Float64Array(count);
    for (let i = 0; i < count; i++) {
      const v = r.varint();
      col[i] = v === 0 ? Number.NaN : memDecode(v - 1);
    }
    return col;
  });
  const ooms: OomEvent[] = [];
  for (let i = r.varint(); i > 0; i--) {
    const p = r.varint();
    const node = p === 0 ? r.string() : (names[p - 1] as string);
    ooms.push({ node, container: r.varint(), t: r.varint() * 1000, request: r.varint() });
  }
  const groups: [string, string][] = [];
  if (version >= 2) for (let i = r.varint(); i > 0; i--) groups.push([r.string(), r.string()]);
  if (!r.done) throw new DecodeError('trailing bytes in log entry');
  return { at, gen, containers, names, times, cpu, memory, ooms, groups };
}

const opt = (v: number | undefined): number | undefined =>
  v === undefined || Number.isNaN(v) ? undefined : v;

/** The entry as sample objects: all nodes, or only `only` (given by position lookup, no scan). */
/**
 * Each name list's positions by name, built once: a cycle picks single nodes out of it many times
 * (built again should the list have grown).
 */
const positionsByName = new WeakMap<readonly string[], { length: number; index: Map<string, number[]> }>();

/**
 * The positions in `names` of the names in `only`, in ascending order (as a scan would find them). A
 * few names (a node refreshed before its resize) are looked up; many are scanned for.
 */
export function positionsIn(names: readonly string[], only: ReadonlySet<string>): number[] {
  const out: number[] = [];
  if (only.size * 16 >= names.length) {
    for (let i = 0; i < names.length; i++) if (only.has(names[i] as string)) out.push(i);
    return out;
  }
  const kept = positionsByName.get(names);
  let index = kept?.length === names.length ? kept.index : undefined;
  if (!index) {
    index = new Map();
    for (let i = 0; i < names.length; i++) {
      const name = names[i] as string;
      const at = index.get(name);
      if (at) at.push(i);
      else index.set(name, [i]);
    }
    positionsByName.set(names, { length: names.length, index });
  }
  for (const name of only) for (const i of index.get(name) ?? []) out.push(i);
  return out.sort((a, b) => a - b);
}

export function entryOf(c: ColumnarLog, only?: ReadonlySet<string>): LogEntry {
  const samples: NodeSamples[] = [];
  const take = (i: number) =>
    samples.push({
      node: c.names[i] as string,
      t: c.times[i] as number,
      cpu: c.cpu.map((col) => opt(col[i])),
      memory: c.memory.map((col) => opt(col[i])),
    });
  if (only) for (const i of positionsIn(c.names, only)) take(i);
  else for (let i = 0; i < c.names.length; i++) take(i);
  return {
    at: c.at,
    gen: c.gen,
    containers: c.containers,
    samples,
    ooms: only ? c.ooms.filter((o) => only.has(o.node)) : c.ooms,
  };
}

export function decodeLog(body: Uint8Array, baseOrder: readonly string[]): LogEntry {
  return entryOf(decodeLogColumns(body, baseOrder));
}
