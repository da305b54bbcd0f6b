/** Request counts per cluster, by method and by kind, so tests and the benchmark can count API calls. */
import type { RequestKind, RequestStats } from './types.js';

export class Stats {
  private s: RequestStats = Stats.empty();

  static empty(): RequestStats {
    return { total: 0, byMethod: {}, byKind: {}, byMethodAndKind: {} };
  }

  record(method: string, kind: RequestKind): void {
    const s = this.s;
    s.total++;
    s.byMethod[method] = (s.byMethod[method] ?? 0) + 1;
    s.byKind[kind] = (s.byKind[kind] ?? 0) + 1;
    const k = `${method} ${kind}`;
    s.byMethodAndKind[k] = (s.byMethodAndKind[k] ?? 0) + 1;
  }

  snapshot(): RequestStats {
    return structuredClone(this.s);
  }

  reset(): void {
    this.s = Stats.empty();
  }
}
