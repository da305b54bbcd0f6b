/**
 * How far back a watch can start, per resource, as kube-apiserver's watch cache decides it
 * (k8s.io/apiserver storage/cacher/watch_cache.go): a ring of the resource's recent events whose capacity
 * starts at 100, doubles while the cache is full and its oldest event is younger than 75 s (up to
 * 100 * 1024), and halves when even the event a quarter from the newest is older than 75 s. A watch from
 * a resourceVersion older than the oldest event kept, minus one, is answered `too old resource version`
 * (410 Expired); until the first event is evicted, the cache reaches back to the revision it was filled
 * at (the simulator's start-up load). Times are the simulated clock's, so a test moves history out of
 * reach by advancing the clock and writing, as 75 s of a real server's wall time would.
 */

const LOWER_CAPACITY = 100;
const UPPER_CAPACITY = 100 * 1024;
/** eventFreshDuration: a bookmark's period (1 min) plus a margin. */
export const EVENT_FRESH_MS = 75_000;

export class WatchCacheWindow {
  private capacity = LOWER_CAPACITY;
  /** The events' revisions and record times, oldest first; those before `start` are evicted. */
  private rvs: number[] = [];
  private times: number[] = [];
  private start = 0;
  private evicted = false;

  constructor(
    /** The revision the cache was filled at (its initial list). */
    private readonly listRv: number,
  ) {}

  private get size(): number {
    return this.rvs.length - this.start;
  }

  record(rv: number, at: number): void {
    this.resize(at);
    if (this.size >= this.capacity) this.drop(this.size - this.capacity + 1);
    this.rvs.push(rv);
    this.times.push(at);
  }

  /** The newest revision a watch can no longer start from: a watch from below it is too old. */
  floor(): number {
    if (!this.evicted) return this.listRv;
    return (this.rvs[this.start] ?? this.listRv + 1) - 1;
  }

  /** The newest event's revision (0 before any). */
  newest(): number {
    return this.rvs[this.rvs.length - 1] ?? 0;
  }

  private resize(at: number): void {
    if (this.size < this.capacity) return;
    if (at - (this.times[this.start] as number) < EVENT_FRESH_MS) {
      this.capacity = Math.min(this.capacity * 2, UPPER_CAPACITY);
      return;
    }
    const quarter = this.times[this.rvs.length - this.capacity / 4] as number;
    if (at - quarter > EVENT_FRESH_MS && this.capacity > LOWER_CAPACITY) {
      this.capacity = Math.max(this.capacity / 2, LOWER_CAPACITY);
      if (this.size > this.capacity) this.drop(this.size - this.capacity);
    }
  }

  /** Evicts the `n` oldest; the arrays are cut down only now and then (a shift per event is quadratic). */
  private drop(n: number): void {
    if (n <= 0) return;
    this.start += n;
    this.evicted = true;
    if (this.start > this.capacity) {
      this.rvs = this.rvs.slice(this.start);
      this.times = this.times.slice(this.start);
      this.start = 0;
    }
  }
}

/** How often a watcher that asked for bookmarks is offered one (the cacher's bookmarkFrequency). */
const BOOKMARK_EVERY_MS = 60_000;

/**
 * A watcher's bookmark offers, timed as the cacher's nextBookmarkTime does: every minute, and 2 s
 * before the watch's deadline; none once that moment has passed (a watch of 2 s or less gets none).
 * `offer` decides whether a bookmark is sent (the cacher sends one only when its revision has moved
 * past the watcher's starting point). Timed on wall time, as the watch's own timeout is (`wallScale`:
 * ClusterState.watchWallScale). Returns a cancel function.
 */
export function offerBookmarks(timeoutMs: number, offer: () => void, wallScale = 1): () => void {
  const deadline = Date.now() + timeoutMs * wallScale;
  let timer: NodeJS.Timeout | undefined;
  const schedule = () => {
    const now = Date.now();
    const at = Math.min(now + BOOKMARK_EVERY_MS * wallScale, deadline - 2_000 * wallScale);
    if (at <= now) return;
    timer = setTimeout(() => {
      offer();
      schedule();
    }, at - now);
  };
  schedule();
  return () => clearTimeout(timer);
}
