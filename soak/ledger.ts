import type { CycleLedger } from './records.js';
/** Which cycles the soak sent for each cluster, and which a runtime reported complete and clean. */

export class Ledger implements CycleLedger {
  private readonly sent = new Map<string, Set<number>>();
  private readonly ok = new Map<string, Set<number>>();

  private static add(m: Map<string, Set<number>>, key: string, cycle: number) {
    const s = m.get(key) ?? new Set<number>();
    m.set(key, s.add(cycle));
  }

  attempt(capability: string, cluster: string, cycle: number): void {
    Ledger.add(this.sent, `${capability}/${cluster}`, cycle);
  }

  complete(capability: string, cluster: string, cycle: number): void {
    Ledger.add(this.ok, `${capability}/${cluster}`, cycle);
  }

  attempted(capability: string, cluster: string): number {
    return this.sent.get(`${capability}/${cluster}`)?.size ?? 0;
  }

  clean(capability: string, cluster: string): number {
    return this.ok.get(`${capability}/${cluster}`)?.size ?? 0;
  }

  /** Completion events a runtime published in a cycle: the nodescope cycles that stored every sample. */
  recordEvents(cycle: number, events: { detailType: string; detail: unknown }[]): void {
    for (const e of events) {
      // biome-ignore lint/suspicious/noExplicitAny: event details as published
      const d = e.detail as any;
      if (
        e.detailType === 'NodeScopeCycleCompleted' &&
        d.metricsApi === 'available' &&
        d.errors?.length === 0
      )
        this.complete('nodescope', d.cluster, cycle);
    }
  }
}
