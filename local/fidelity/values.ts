/**
 * Run-specific values (resourceVersions, UIDs, continue tokens, generated names) differ between the
 * simulator and the real server. Each is learnt when both answers show it at the same place, and
 * requests are rewritten with the real server's before they are sent.
 */
import { isGenerated, isObj, type J } from './compare.js';

const TRACKED = ['resourceVersion', 'uid', 'continue'];

export class Values {
  private readonly real = new Map<string, string>();

  learn(sim: J, real: J): void {
    if (isObj(sim) && isObj(real)) {
      for (const k of Object.keys(sim)) {
        const s = sim[k];
        const r = real[k];
        if (
          typeof s === 'string' &&
          typeof r === 'string' &&
          s &&
          r &&
          (TRACKED.includes(k) || isGenerated(s))
        )
          this.real.set(`${isGenerated(s) ? 'gen' : k}:${s}`, r);
        else this.learn(s, r);
      }
    } else if (Array.isArray(sim) && Array.isArray(real) && sim.length === real.length) {
      sim.forEach((s: J, i: number) => {
        this.learn(s, real[i]);
      });
    }
  }

  /** The real server's value for a simulator's, or undefined when never seen. */
  of(key: 'resourceVersion' | 'uid' | 'continue', sim: string): string | undefined {
    return this.real.get(`${key}:${sim}`);
  }

  rewriteBody(b: J): J {
    if (Array.isArray(b)) return b.map((x) => this.rewriteBody(x));
    if (!isObj(b)) return isGenerated(b) ? (this.real.get(`gen:${b}`) ?? b) : b;
    const out: J = {};
    for (const [k, v] of Object.entries(b)) {
      if (k === 'managedFields') continue;
      if ((k === 'resourceVersion' || k === 'uid') && typeof v === 'string')
        out[k] = this.of(k, v) ?? `unknown:${v}`;
      else out[k] = this.rewriteBody(v);
    }
    return out;
  }

  rewritePath(p: string): string {
    const u = new URL(p, 'https://x');
    for (const key of ['resourceVersion', 'continue'] as const) {
      const v = u.searchParams.get(key);
      if (v && v !== '0') u.searchParams.set(key, this.of(key, v) ?? v);
    }
    return u.pathname + u.search;
  }

  /** A message with the run's values replaced by placeholders, so two servers' messages compare. */
  static normalize(message: string): string {
    return message
      .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uid>')
      .replace(/\b\d{2,}\b/g, '<n>');
  }
}
