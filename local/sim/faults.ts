/**
 * Fault injection: rules match requests by cluster, method, path fragment and kind, and add latency,
 * answer with a status code (429 with Retry-After as APF does, in plain text; other codes as a JSON
 * Status), reset the connection, or never answer. Rules can be limited to a number of requests, and
 * to a fraction of them (`probability`, for soaks that fault a share of all traffic).
 */
import type { Fault, FaultInjector, FaultRule, RequestKind } from './types.js';

interface ActiveRule extends FaultRule {
  id: string;
  remaining: number;
}

export class Faults implements FaultInjector {
  private rules: ActiveRule[] = [];
  private next = 1;

  inject(f: FaultRule): string {
    if (!f || typeof f !== 'object' || !f.fault || typeof f.fault !== 'object')
      throw new TypeError('fault rule needs a fault');
    const t = f.fault.type;
    if (!['latency', 'status', 'reset', 'hang'].includes(t))
      throw new TypeError(`unknown fault type ${JSON.stringify(t)}`);
    if (t === 'status' && !(Number.isInteger(f.fault.code) && f.fault.code >= 100 && f.fault.code <= 599))
      throw new TypeError('a status fault needs an HTTP code');
    if (t === 'latency' && !(typeof f.fault.ms === 'number' && f.fault.ms >= 0))
      throw new TypeError('a latency fault needs ms >= 0');
    if (f.probability !== undefined && !(f.probability >= 0 && f.probability <= 1))
      throw new TypeError('probability must be from 0 to 1');
    const id = `fault-${this.next++}`;
    this.rules.push({ ...f, id, remaining: f.times ?? Number.POSITIVE_INFINITY });
    return id;
  }

  clear(id?: string): void {
    this.rules = id === undefined ? [] : this.rules.filter((r) => r.id !== id);
  }

  /** Clears the rules of one cluster (its HTTP endpoint's DELETE /_sim/faults). */
  clearCluster(cluster: string): void {
    this.rules = this.rules.filter((r) => r.cluster !== cluster);
  }

  list(): { id: string; rule: FaultRule; remaining: number }[] {
    return this.rules.map(({ id, remaining, ...rule }) => ({ id, rule, remaining }));
  }

  /** The faults to apply to a request, in rule order (latency can combine with one terminal fault). */
  take(cluster: string, method: string, path: string, kind: RequestKind): Fault[] {
    const out: Fault[] = [];
    for (const r of this.rules) {
      if (r.remaining <= 0) continue;
      if (r.cluster && r.cluster !== cluster) continue;
      const m = r.match ?? {};
      if (m.method && m.method.toUpperCase() !== method.toUpperCase()) continue;
      if (m.pathIncludes && !path.includes(m.pathIncludes)) continue;
      if (m.kind && m.kind !== 'any' && m.kind !== kind) continue;
      if (out.some((f) => f.type !== 'latency') && r.fault.type !== 'latency') continue;
      if (r.probability !== undefined && Math.random() >= r.probability) continue;
      r.remaining--;
      out.push(r.fault);
    }
    this.rules = this.rules.filter((r) => r.remaining > 0);
    return out;
  }
}
