/**
 * What a busy real cluster does late, each off by default and timed on the simulator's manual clock:
 * a kubelet admitting a pod some time after the scheduler bound it, a kubelet answering a resize some
 * time after the apiserver took it, a DaemonSet controller recreating a daemon pod some time after it
 * went. With every lag at zero (the default) each happens at once, as the simulator always did.
 */

export interface SimLags {
  /** The kubelet admits (or rejects, OutOfcpu) a pod bound at run time this long after the binding. */
  admitMs?: number;
  /** The kubelet answers a resize (accept, Deferred, Infeasible) this long after the spec changed. */
  resizeMs?: number;
  /** The DaemonSet controller creates a missing daemon pod this long after it noticed it missing. */
  daemonSetMs?: number;
}

export function validateLags(cluster: string, lags: SimLags | undefined): void {
  for (const [k, v] of Object.entries(lags ?? {}))
    if (!['admitMs', 'resizeMs', 'daemonSetMs'].includes(k) || !Number.isFinite(v) || (v as number) < 0)
      throw new Error(`cluster ${cluster}: lags.${k} must be admitMs, resizeMs or daemonSetMs, in ms >= 0`);
}

/**
 * Work due at a time on the simulated clock, taken in due order and, at the same time, in the order it
 * was queued (one kubelet's watch keeps the order of its events). Queuing a key already waiting keeps
 * its first due time: the late component answers what the object is when it gets to it.
 */
export class DueQueue<T> {
  private readonly due = new Map<string, { at: number; seq: number; item: T }>();
  private seq = 0;

  add(key: string, at: number, item: T): void {
    if (!this.due.has(key)) this.due.set(key, { at, seq: this.seq++, item });
  }

  has(key: string): boolean {
    return this.due.has(key);
  }

  /** When `key` is due, if it waits. */
  at(key: string): number | undefined {
    return this.due.get(key)?.at;
  }

  delete(key: string): void {
    this.due.delete(key);
  }

  /** Removes and returns what is due at `now`, in order. */
  take(now: number): { key: string; item: T }[] {
    const ready = [...this.due.entries()]
      .filter(([, v]) => v.at <= now)
      .sort(([, a], [, b]) => a.at - b.at || a.seq - b.seq);
    for (const [k] of ready) this.due.delete(k);
    return ready.map(([key, v]) => ({ key, item: v.item }));
  }
}
