/**
 * A task's claim while it runs (finding 1 of issue 16: a step must not run twice at once). Three
 * things, all on the feature clock:
 *
 *  - heartbeat: the claim is renewed while the task runs (every third of the claim), so a slow task
 *    keeps it and nobody else starts the same step;
 *  - fence: every cluster write of the task first renews the claim with a conditional write on its
 *    token; a holder whose claim lapsed and was taken over is refused before it writes, and knows it
 *    lost. Between that check and the write landing, the object's own resourceVersion precondition
 *    (./objects.ts) refuses a write on an object the new holder already changed;
 *  - count: each write the cluster accepted (and each DynamoDB write the task reports) is added to the
 *    task's writes in the record at once, so a killed attempt's writes stay in the history.
 *
 * The stores a task writes pass the same fence (`before`), through the task stores' adapters
 * (./task-stores-dynamo.ts wraps the table's client).
 */
import { ClusterAccessError } from '../k8s/errors.js';
import type { WriteGuard } from '../k8s/write-guard.js';
import type { FeatureRecord } from './model.js';
import type { FeatureStore } from './store.js';

export interface FencePorts {
  store: FeatureStore;
  now(): number;
  leaseMs: number;
  /** How often (real ms) the heartbeat looks at the feature clock; 0: no heartbeat (a frozen process). */
  heartbeatMs: number;
  /** Called once a write's fence held, before it is sent (tests freeze the reconciler there). */
  onFenced?(operation: string): void | Promise<void>;
}

export class ClaimLostError extends ClusterAccessError {
  override name = 'ClaimLostError';
}

export class ClaimFence implements WriteGuard {
  /** The claim lapsed and someone else's (or nobody's) is on the task: nothing more may be written. */
  lost = false;
  private renewedAt: number;
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly pending: Promise<unknown>[] = [];
  private readonly token: string;

  constructor(
    private readonly p: FencePorts,
    private readonly record: FeatureRecord,
  ) {
    const claim = record.tasks[0]?.claim;
    if (!claim) throw new Error(`${record.cluster} ${record.name}: no claim to fence`);
    this.token = claim.token;
    this.renewedAt = p.now();
  }

  /** Starts the heartbeat. */
  start(): this {
    if (this.p.heartbeatMs > 0) {
      this.timer = setInterval(() => {
        if (this.p.now() - this.renewedAt >= this.p.leaseMs / 3)
          this.pending.push(this.renew().catch(() => {}));
      }, this.p.heartbeatMs);
      this.timer.unref?.();
    }
    return this;
  }

  /** Stops the heartbeat and waits for the counts and renewals in flight. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await Promise.allSettled(this.pending);
  }

  async before(operation: string): Promise<void> {
    if (this.lost || !(await this.renew())) throw this.refusal(operation);
    await this.p.onFenced?.(operation);
  }

  async after(): Promise<void> {
    await this.count(1);
  }

  /**
   * A create that landed: it stays while the claim is still ours, or when the feature still heads where
   * this task's transition went (the new holder wants the object too); not when it has turned the other
   * way meanwhile (turned off again, its objects already deleted).
   */
  async confirm(): Promise<boolean> {
    if (!this.lost && (await this.renew())) return true;
    const r = this.record;
    const to = r.transition?.to;
    const now = await this.p.store.get(r.cluster, r);
    return to !== undefined && (now?.state === to || now?.transition?.to === to);
  }

  /** Counts writes the task made other than to the cluster (DynamoDB). */
  wrote(n: number): void {
    if (n > 0) this.pending.push(this.count(n));
  }

  private async count(n: number): Promise<void> {
    const r = this.record;
    await this.p.store.countWrites(r.cluster, r, this.token, n, this.p.now());
  }

  private async renew(): Promise<boolean> {
    const now = this.p.now();
    const r = this.record;
    const ok =
      (await this.p.store.renewClaim(r.cluster, r, this.token, now, now + this.p.leaseMs)) === 'held';
    if (ok) this.renewedAt = now;
    else this.lost = true;
    return ok;
  }

  private refusal(operation: string): ClaimLostError {
    return new ClaimLostError({
      cluster: this.record.cluster,
      operation,
      kind: 'aborted',
      retryable: false,
      detail: `the claim on "${this.record.tasks[0]!.title}" lapsed and another reconciler may hold it: not written`,
    });
  }
}
