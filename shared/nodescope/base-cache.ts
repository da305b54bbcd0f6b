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
 * Bounded, with the apply items' unpacked requests, by one heap budget (kept-budget.ts), each base
 * counted at what it holds in the heap (baseHeapBytes); the least recently used goes first.
 */
import { randomUUID } from 'node:crypto';
import { KeptBudget, type KeptEntry, keptBudgetBytes, processKept } from './kept-budget.js';
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

interface Entry extends BaseIdentity, DecodedBase, KeptEntry {}

export class BaseCache {
  private readonly entries = new Map<string, Entry>();
  /** Bases used from memory, and bases read from the table (counted for tests and the bench). */
  readonly stats = { hits: 0, misses: 0 };

  /** @param budget shared with the process's other copies by default; a test gives its own. */
  constructor(readonly budget: KeptBudget = new KeptBudget(keptBudgetBytes())) {}

  /** Fresh records of the base the head names, or undefined when the copy kept is not that base. */
  get(key: string, head: BaseIdentity): DecodedBase | undefined {
    const e = this.entries.get(key);
    if (!e || !sameBase(e, head)) {
      this.stats.misses++;
      return undefined;
    }
    this.stats.hits++;
    this.budget.touch(e);
    return { containers: [...e.containers], nodes: e.nodes.map(copyRecord) };
  }

  /**
   * Keeps a base as decoded from its chunks (before anything touched it); `bytes` its bodies' size
   * (decompressed). The records are copied unless the caller hands them over (`owned`: nothing else
   * holds them). Not kept when it alone is over the budget.
   */
  set(key: string, head: BaseIdentity, base: DecodedBase, bytes: number, owned = false): void {
    this.delete(key);
    if (head.baseId === undefined) return;
    // Only undecoded states can be shared: a decoded one is written by the cycle that holds it.
    if (base.nodes.some((n) => n.states.some((st) => st !== undefined))) return;
    const nodes = owned ? base.nodes : base.nodes.map(copyRecord);
    const { baseId, gen, chunks, version } = head;
    const entry: Entry = {
      baseId,
      gen,
      chunks,
      version,
      containers: [...base.containers],
      nodes,
      bytes: baseHeapBytes(base, bytes),
      evicted: () => {
        if (this.entries.get(key) === entry) this.entries.delete(key);
      },
    };
    if (this.budget.admit(entry)) this.entries.set(key, entry);
  }

  delete(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.budget.release(e);
  }

  clear(): void {
    for (const key of [...this.entries.keys()]) this.delete(key);
  }
}

/**
 * What a decoded base holds in the heap, estimated: its chunk bodies (`bodyBytes`, decompressed: its
 * states' stored bytes are views into them) twice over, as the buffers behind them can be up to that
 * (a fold's own base keeps its encoder's buffers, grown by doubling; a read's small chunk is a slice of
 * zlib's 64 KiB output buffer), and per node its record, name, arrays, views and stored recommendation.
 * The per-node constants are measured (Node 24, decodeBase of 2,000 and 5,000 nodes of 1, 2 and 4
 * containers, with and without recommendations; heap and array buffers after a full GC): 650 B + 120 B
 * per container, and 150 B + 330 B per container with a recommendation, within 5%. A 5,000-node base of
 * two containers: about 11 MB measured, 14 MB estimated, for 2.8 MB of bodies (0.7 MB compressed), what
 * the bound by the bodies' bytes undercounted fourfold.
 */
export function baseHeapBytes(base: DecodedBase, bodyBytes: number): number {
  const c = base.containers.length;
  let bytes = 2 * bodyBytes;
  for (const n of base.nodes) {
    bytes += PER_NODE + PER_CONTAINER * c + n.node.length + (n.group?.length ?? 0);
    if (n.rec) bytes += PER_REC + PER_REC_CONTAINER * c;
  }
  return bytes;
}

const PER_NODE = 650;
const PER_CONTAINER = 120;
const PER_REC = 150;
const PER_REC_CONTAINER = 330;

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

/** The process's bases: one per warm container, as the kept lists are; under the process's budget. */
export const processBases = new BaseCache(processKept);
