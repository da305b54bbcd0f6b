/**
 * One heap budget for the copies node scope keeps in a warm process between cycles: the decoded bases
 * (base-cache.ts) and the apply items' unpacked requests (pod-requests.ts KeptRequests). Each entry
 * counts at an estimate of what it holds in the heap (each cache documents its own, measured), not at
 * its stored or compressed size, and when the total passes the budget the least recently used entries,
 * of either cache, go first. The updater's decisions (resize-pods.ts) live on the pod views and go with
 * them, so they need no budget of their own.
 *
 * The process's budget is a tenth of the function's memory: beside the kept lists (about 1 GiB at 5,000
 * nodes) a long-lived instance must not run out of memory for copies that only save CPU.
 */

/** An entry of a cache under the budget. */
export interface KeptEntry {
  /** What the entry holds in the heap, estimated. */
  readonly bytes: number;
  /** Called when the budget evicts the entry: the cache forgets it. */
  evicted(): void;
}

export class KeptBudget {
  /** In use order, least recently used first. */
  private readonly lru = new Set<KeptEntry>();
  private used = 0;

  constructor(readonly maxBytes: number) {}

  get usedBytes(): number {
    return this.used;
  }

  /**
   * Counts a new entry, evicting the least recently used others until the total fits; false (and
   * nothing evicted) when the entry alone is larger than the budget: it is not kept.
   */
  admit(entry: KeptEntry): boolean {
    if (entry.bytes > this.maxBytes) return false;
    this.release(entry);
    this.lru.add(entry);
    this.used += entry.bytes;
    for (const old of this.lru) {
      if (this.used <= this.maxBytes) break;
      this.release(old);
      old.evicted();
    }
    return true;
  }

  /** The entry was just used: it goes last. */
  touch(entry: KeptEntry): void {
    if (this.lru.delete(entry)) this.lru.add(entry);
  }

  /** The cache dropped the entry itself (replaced, cleared). */
  release(entry: KeptEntry): void {
    if (this.lru.delete(entry)) this.used -= entry.bytes;
  }
}

const MIB = 2 ** 20;
/** The cycle function's memory (shared/cycle/capability.ts memoryMb), where Lambda does not say it. */
const FUNCTION_MEMORY_MB = 1769;

/** A tenth of the function's memory (Lambda's AWS_LAMBDA_FUNCTION_MEMORY_SIZE, in MiB): 177 MiB at 1,769. */
export function keptBudgetBytes(env: NodeJS.ProcessEnv = process.env): number {
  const mb = Number(env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE);
  return Math.floor(((Number.isFinite(mb) && mb > 0 ? mb : FUNCTION_MEMORY_MB) * MIB) / 10);
}

/** The process's budget, shared by its decoded bases and unpacked requests. */
export const processKept = new KeptBudget(keptBudgetBytes());
