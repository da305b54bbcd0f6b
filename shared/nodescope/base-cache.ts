/**
 * Each DaemonSet's decoded base kept in process between cycles (a warm Lambda container's module
 * state), so that a cycle that does not fold reads its DaemonSets' chunks only when a fold moved the
 * head since: every cycle reads every head anyway, and a base is immutable once the head names it.
 *
 * A copy is used only when the head now read names the very base it was decoded from: the same base
 * id (random, given by the fold that wrote the base), generation, chunk count and head version (every
 * head write, ours or another invocation's, raises the version). Anything else (another writer
 * folded, the DaemonSet was recreated, a head from before base ids, a cold process) reads the chunks
 * as before. Callers get fresh node records every time (a cycle mutates its model),
 * sharing only what nothing writes: the states' stored bytes and the stored recommendations.
 * Bounded by the decoded bodies' bytes; the least recently used base goes first.
 */
import { randomUUID } from 'node:crypto';
import type { NodeRecord } from './model.js';

/** What names a base: the id its fold gave it, and the head's generation, chunk count and version. */
export interface BaseIdentity {
  baseId?: string;
  gen: number;
  chunks: number;
  version: number;
}

/** A fold's base id: unique, so that no other table, cluster or DaemonSet ever names the same base. */
export const newBaseId = (): string => randomUUID();

export interface DecodedBase {
  containers: string[];
  /** In base order (the chunks' order): log entries refer to nodes by position in it. */
  nodes: readonly NodeRecord[];
}

interface Entry extends BaseIdentity, DecodedBase {
  bytes: number;
}

/** About 10 DaemonSets of 5,000 nodes; a Lambda of 1,769 MB or more holds it easily. */
const DEFAULT_MAX_BYTES = 96 * 2 ** 20;

export class BaseCache {
  private readonly entries = new Map<string, Entry>();
  private total = 0;
  /** Bases used from memory, and bases read from the table (counted for tests and the bench). */
  readonly stats = { hits: 0, misses: 0 };

  constructor(private readonly maxBytes = DEFAULT_MAX_BYTES) {}

  /** Fresh records of the base the head names, or undefined when the copy kept is not that base. */
  get(key: string, head: BaseIdentity): DecodedBase | undefined {
    const e = this.entries.get(key);
    if (!e || !sameBase(e, head)) {
      this.stats.misses++;
      return undefined;
    }
    this.stats.hits++;
    this.entries.delete(key);
    this.entries.set(key, e);
    return { containers: [...e.containers], nodes: e.nodes.map(copyRecord) };
  }

  /**
   * Keeps a base as decoded from its chunks (before anything touched it); `bytes` its bodies' size.
   * The records are copied unless the caller hands them over (`owned`: nothing else holds them).
   */
  set(key: string, head: BaseIdentity, base: DecodedBase, bytes: number, owned = false): void {
    this.delete(key);
    if (head.baseId === undefined || bytes > this.maxBytes) return;
    // Only undecoded states can be shared: a decoded one is written by the cycle that holds it.
    if (base.nodes.some((n) => n.states.some((st) => st !== undefined))) return;
    const nodes = owned ? base.nodes : base.nodes.map(copyRecord);
    const { baseId, gen, chunks, version } = head;
    this.entries.set(key, { baseId, gen, chunks, version, containers: [...base.containers], nodes, bytes });
    this.total += bytes;
    for (const [k, e] of this.entries) {
      if (this.total <= this.maxBytes) break;
      this.entries.delete(k);
      this.total -= e.bytes;
    }
  }

  delete(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.total -= e.bytes;
  }

  clear(): void {
    this.entries.clear();
    this.total = 0;
  }
}

function sameBase(a: BaseIdentity, b: BaseIdentity): boolean {
  return (
    a.baseId !== undefined &&
    a.baseId === b.baseId &&
    a.gen === b.gen &&
    a.chunks === b.chunks &&
    a.version === b.version
  );
}

/**
 * A record's own arrays, fresh (a cycle writes states, OOM times and the recommendation into them);
 * the stored bytes and recommendation are shared, as nothing writes into them.
 */
function copyRecord(n: NodeRecord): NodeRecord {
  return {
    node: n.node,
    states: [...n.states],
    lastOomAt: [...n.lastOomAt],
    ...(n.raw ? { raw: [...n.raw] } : {}),
    ...(n.rec ? { rec: n.rec } : {}),
    ...(n.group !== undefined ? { group: n.group } : {}),
  };
}

/** The process's bases: one per warm container, as the kept lists are. */
export const processBases = new BaseCache();
