/**
 * The simulated clock. Timestamps, metrics, load profiles and the kubelet's time-driven work
 * (OOM kills, retried resizes) read this clock, never the wall clock, so tests are repeatable.
 */
export interface SimClock {
  now(): number;
  advance(ms: number): void;
  set(ms: number): void;
}

export class ManualClock implements SimClock {
  private listeners: ((now: number) => void)[] = [];

  constructor(private current: number) {}

  now(): number {
    return this.current;
  }

  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0)
      throw new RangeError(`clock.advance: ${ms} is not a non-negative duration`);
    this.set(this.current + ms);
  }

  set(ms: number): void {
    if (!Number.isFinite(ms)) throw new RangeError(`clock.set: ${ms} is not a time`);
    this.current = Math.trunc(ms);
    for (const l of this.listeners) l(this.current);
  }

  /** Called after every change; the clusters use it to run their kubelets. */
  onChange(listener: (now: number) => void): void {
    this.listeners.push(listener);
  }
}

const rfcCache = new Map<number, string>();

/** RFC 3339 with second precision, as metav1.Time marshals (memoised: start-up formats the same few times 100,000 times). */
export function rfc3339(ms: number): string {
  const sec = Math.floor(ms / 1000);
  let s = rfcCache.get(sec);
  if (s === undefined) {
    s = `${new Date(sec * 1000).toISOString().slice(0, 19)}Z`;
    if (rfcCache.size > 50_000) rfcCache.clear();
    rfcCache.set(sec, s);
  }
  return s;
}

/** Go's time.Duration.String() for a millisecond duration: "15s", "15.012s", "1m0s", "1h2m3s". */
export function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  const neg = ms < 0;
  let rest = Math.abs(Math.round(ms));
  if (rest < 1000) return `${neg ? '-' : ''}${rest}ms`;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = Math.floor(rest / 1000);
  const frac = rest % 1000;
  const secs = frac ? `${s}.${String(frac).padStart(3, '0').replace(/0+$/, '')}s` : `${s}s`;
  const out = h ? `${h}h${m}m${secs}` : m ? `${m}m${secs}` : secs;
  return neg ? `-${out}` : out;
}
