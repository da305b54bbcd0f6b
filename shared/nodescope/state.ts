/**
 * Loading and saving one DaemonSet's states: the base (packed, compressed chunks of a generation named
 * by the head) plus the log entries written since, replayed in cycle order. A fold writes a new
 * generation and moves the head to it with one conditional write.
 */

import type { DecodedBase } from './base-cache.js';
import {
  type ColumnarLog,
  compress,
  decodeChunkBody,
  decodeLogColumns,
  decompress,
  encodeChunkBody,
  entryOf,
} from './codec.js';
import { applyEntry, noteOoms, remapContainers } from './engine.js';
import type { DsModel, NodeRecord } from './model.js';
import { type DsHead, dsKeyOf, type NodeScopeStore, type StoredLog } from './store.js';

export interface LoadedDs {
  model: DsModel;
  /** The base's node order (log entries refer to nodes by position in it). */
  baseOrder: string[];
  /** Log entries of the base's generation since it, in cycle order (columns), and their cycles. */
  logs: ColumnarLog[];
  logCycles: string[];
  /** Entries of another generation (a racing fold), ignored. */
  skipped: number;
  /** Whether the entries were applied to the states (else only their OOM times were noted). */
  replayed: boolean;
}

export class BaseMovedError extends Error {
  override name = 'BaseMovedError';
}

/**
 * The states as of the last stored cycle, keyed to `containers` (the current template's), or to the
 * head's containers when not given. With replay false the log entries are read but not applied: the
 * states stay as of the base (and undecoded) except for the OOM times; engine.entryFor + applyEntry
 * bring single nodes up to date when needed.
 */
export async function loadDs(
  store: NodeScopeStore,
  head: DsHead | undefined,
  cluster: string,
  ds: string,
  containers?: readonly string[],
  opts: {
    replay?: boolean;
    /** The DaemonSet's log entries, when the cycle has read every DaemonSet's at once; else read here. */
    logs?: readonly StoredLog[];
  } = {},
): Promise<LoadedDs> {
  const replay = opts.replay ?? true;
  let model: DsModel = { containers: [...(containers ?? head?.containers ?? [])], nodes: new Map() };
  const baseOrder: string[] = [];
  if (head && head.gen > 0) {
    const base = await readBase(store, head, cluster, ds);
    const nodes = new Map<string, NodeRecord>();
    for (const n of base.nodes) {
      nodes.set(n.node, n);
      baseOrder.push(n.node);
    }
    model = remapContainers({ containers: base.containers, nodes }, containers ?? base.containers);
  }
  const logCycles: string[] = [];
  const logs: ColumnarLog[] = [];
  let skipped = 0;
  if (head) {
    const gen = head.gen;
    const stored = opts.logs
      ? opts.logs.filter((l) => l.cycle > head.foldedThrough)
      : await store.listLogs(cluster, ds, head.foldedThrough);
    for (const l of stored) {
      const columns = decodeLogColumns(decompress(l.data), baseOrder);
      if (columns.gen !== gen) {
        skipped++;
        continue;
      }
      if (replay) applyEntry(model, entryOf(columns));
      else noteOoms(model, columns);
      logs.push(columns);
      logCycles.push(l.cycle);
    }
  }
  return { model, baseOrder, logs, logCycles, skipped, replayed: replay };
}

/** The base the head names: the copy kept in process if it is that base, else its chunks, read and kept. */
async function readBase(
  store: NodeScopeStore,
  head: DsHead,
  cluster: string,
  ds: string,
): Promise<DecodedBase> {
  const { bases } = store;
  const key = baseKey(cluster, ds);
  const kept = bases.get(key, head);
  if (kept) return kept;
  const chunks = await store.getChunks(cluster, ds, head.gen, head.chunks);
  if (!chunks) throw new BaseMovedError(`the base of ${ds} was replaced while it was being read`);
  const base = decodeBase(head.containers, chunks.map(decompress));
  bases.set(key, head, base.decoded, base.bytes);
  return base.decoded;
}

/** Chunk bodies (decompressed) as one base, in their order. */
export function decodeBase(
  containers: string[],
  bodies: readonly Uint8Array[],
): { decoded: DecodedBase; bytes: number } {
  const nodes: NodeRecord[] = [];
  let bytes = 0;
  for (const b of bodies) {
    const body = decodeChunkBody(b);
    containers = body.containers;
    for (const n of body.nodes) nodes.push(n);
    bytes += b.length;
  }
  return { decoded: { containers, nodes }, bytes };
}

export const baseKey = (cluster: string, ds: string) => `${cluster}\u0000${ds}`;

/** Packs node records (in name order) into compressed chunks of about `rawBytes` each. */
export function packBase(
  model: DsModel,
  rawBytes: number,
): { chunks: Uint8Array[]; bodies: Uint8Array[]; order: string[]; rawSize: number } {
  const names = [...model.nodes.keys()].sort();
  const chunks: Uint8Array[] = [];
  const bodies: Uint8Array[] = [];
  let rawSize = 0;
  let start = 0;
  // Grow a run of nodes until its encoding passes rawBytes (estimated from the previous run's density).
  let perNode = 0;
  while (start < names.length) {
    let count =
      perNode > 0 ? Math.max(1, Math.floor(rawBytes / perNode)) : Math.min(names.length - start, 256);
    count = Math.min(count, names.length - start);
    let body = encodeChunkBody(
      model.containers,
      names.slice(start, start + count).map((n) => model.nodes.get(n) as NodeRecord),
    );
    while (body.length > rawBytes * 1.25 && count > 1) {
      count = Math.max(1, Math.floor(count / 2));
      body = encodeChunkBody(
        model.containers,
        names.slice(start, start + count).map((n) => model.nodes.get(n) as NodeRecord),
      );
    }
    perNode = body.length / count;
    rawSize += body.length;
    chunks.push(compress(body));
    bodies.push(body);
    start += count;
  }
  return { chunks, bodies, order: names, rawSize };
}

export { dsKeyOf };

/**
 * A DaemonSet's head and its states read as a pair that belongs together, for readers outside a cycle
 * (the CLI's views, checkpoint import): its log entries first, then its head. A fold deletes the entries
 * it replayed only after its head write, so the head read second names a base those entries extend, or a
 * newer one that holds them (loadDs drops those by `foldedThrough`). A fold between the head read and
 * the base's chunks deletes them: read again, at most three times.
 */
export async function loadCurrent(
  store: NodeScopeStore,
  cluster: string,
  ds: string,
  opts: { replay?: boolean } = {},
): Promise<{ head: DsHead; loaded: LoadedDs } | undefined> {
  for (let attempt = 1; ; attempt++) {
    const logs = await store.listLogs(cluster, ds, '');
    const head = await store.getHead(cluster, ds);
    if (!head) return undefined;
    try {
      return { head, loaded: await loadDs(store, head, cluster, ds, head.containers, { ...opts, logs }) };
    } catch (err) {
      if (!(err instanceof BaseMovedError) || attempt >= 3) throw err;
    }
  }
}
