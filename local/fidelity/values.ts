/**
 * Run-specific values (resourceVersions, UIDs, continue tokens, generated names) differ between the
 * simulator and the real server. Each is learnt when both answers show it at the same place, and
 * requests are rewritten with the real server's before they are sent.
 *
 * A resourceVersion or UID is learnt only where it names the object that carries it (its `metadata`,
 * a list's `metadata`): where it refers to another object (an Event's `involvedObject`, an
 * ownerReference) the answer may only echo what the request said, which is no mapping at all.
 */
import { isGenerated, isObj, type J } from './compare.js';

const TRACKED = ['resourceVersion', 'uid', 'continue'] as const;
type Tracked = (typeof TRACKED)[number];

export class Values {
  private readonly real = new Map<string, string>();

  /** Learns from two answers to the same request (`from`'s values map to `to`'s). */
  learn(from: J, to: J): void {
    if (isObj(from) && isObj(to)) {
      if (isObj(from.metadata) && isObj(to.metadata)) this.identity(from.metadata, to.metadata);
      for (const k of Object.keys(from)) {
        const s = from[k];
        const r = to[k];
        if (typeof s === 'string' && typeof r === 'string' && isGenerated(s) && r)
          this.real.set(`gen:${s}`, r);
        else this.learn(s, r);
      }
    } else if (Array.isArray(from) && Array.isArray(to)) {
      for (const [s, r] of pairs(from, to)) this.learn(s, r);
    }
  }

  private identity(from: J, to: J): void {
    for (const k of TRACKED) {
      const s = from[k];
      const r = to[k];
      if (typeof s === 'string' && typeof r === 'string' && s && r) this.real.set(`${k}:${s}`, r);
    }
  }

  /** The real server's value for a simulator's, or undefined when never seen. */
  of(key: Tracked, sim: string): string | undefined {
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

/**
 * Items of two arrays that stand for the same thing: API objects by namespace and name (each server
 * lists in its own order), anything else by position when the lengths agree.
 */
function pairs(a: J[], b: J[]): [J, J][] {
  const key = (x: J) =>
    isObj(x) && isObj(x.metadata) && typeof x.metadata.name === 'string'
      ? `${x.metadata.namespace ?? ''}/${x.metadata.name}`
      : undefined;
  if (a.length > 0 && a.every((x) => key(x) !== undefined)) {
    const byKey = new Map(b.map((x) => [key(x), x]));
    return a.flatMap((x) => (byKey.has(key(x)) ? [[x, byKey.get(key(x))] as [J, J]] : []));
  }
  return a.length === b.length ? a.map((x, i) => [x, b[i]]) : [];
}
