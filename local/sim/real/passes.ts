/**
 * Passes of the simulated components over a real apiserver, one at a time: send the queued writes,
 * read the server, let the controllers react, until nothing changes.
 */
import type { ClusterState } from '../cluster.js';
import type { ApiMirror } from './mirror.js';
import type { RealApiWrites } from './writes.js';

/** A pass stops after this many rounds even if the components keep writing (a loop between them). */
const MAX_ROUNDS = 50;

export class Passes {
  private chain: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly cluster: ClusterState,
    private readonly writes: RealApiWrites,
    private readonly mirror: ApiMirror,
  ) {}

  /** Runs a pass after the one in progress, if any. */
  sync(): Promise<void> {
    const next = this.chain.then(() => this.pass());
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** Also a pass every `ms` of wall-clock time (skipped while one runs). */
  every(ms: number): void {
    let busy = false;
    this.timer = setInterval(() => {
      if (busy) return;
      busy = true;
      this.sync()
        .catch((err) => this.writes.report(`pass failed: ${(err as Error).message}`))
        .finally(() => {
          busy = false;
        });
    }, ms);
  }

  /** No new pass starts; the one in progress ends. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.chain;
  }

  private async pass(): Promise<void> {
    // Resizes the server has shown as in progress since the last pass are actuated now (in process
    // the kubelet does it on the next read): each stays visible for one pass.
    this.cluster.kubelet.beforeRequest();
    this.cluster.settle();
    try {
      for (let round = 0; round < MAX_ROUNDS; round++) {
        const sent = await this.writes.flush((c, k, o) => this.mirror.remember(c, k, o));
        this.cluster.settle();
        const changed = await this.mirror.read();
        this.cluster.settle();
        if (sent === 0 && !changed && this.writes.pending === 0) return;
      }
    } finally {
      this.cluster.kubelet.markObserved();
    }
  }
}
