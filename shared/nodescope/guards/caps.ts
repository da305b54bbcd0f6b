/**
 * Caps per resize on how far one step may go, asymmetric: an increase at most `maxIncrease` above what
 * the container has now, a decrease at most `maxDecrease` below it (fractions: 1 = 100%). A target
 * further away is reached over several resizes, one per cycle at most, each judged again by the
 * updater's rules. Limits move with their requests, capped alike, so a request never passes its limit.
 */
import type { PodView } from '../../cycle/views.js';
import type { ContainerDesired, DesiredResources } from '../../resize/index.js';
import { RESOURCES, type Resource } from './resources.js';

export interface ResizeCaps {
  /** Fraction of the current amount an increase may add; undefined: no cap. */
  maxIncrease?: number;
  /** Fraction of the current amount a decrease may take off (below 1); undefined: no cap. */
  maxDecrease?: number;
}

/** The defaults: none, as upstream's updater, so a VPA without the annotations resizes as before. */
export const DEFAULT_CAPS: Readonly<ResizeCaps> = Object.freeze({});

/** A cap's annotation value: `25%`, or `none`; throws naming the value otherwise. */
export function parseCap(value: string, what: 'increase' | 'decrease'): number | undefined {
  const v = value.trim();
  if (v === 'none') return undefined;
  const m = /^(\d+(?:\.\d+)?)%$/.exec(v);
  const p = m ? Number(m[1]) : Number.NaN;
  if (!(p > 0)) throw new Error(`"${value}" is not a percentage above 0% (e.g. 25%) or none`);
  if (what === 'decrease' && p >= 100)
    throw new Error(`"${value}": a decrease takes off less than 100% of what a container has (or none)`);
  return p / 100;
}

/** One amount moved toward `want` from `now`, at most as far as the caps let it. */
function capped(now: number | undefined, want: number, caps: ResizeCaps): number {
  if (now === undefined || now <= 0) return want;
  if (want > now && caps.maxIncrease !== undefined)
    return Math.min(want, Math.floor(now * (1 + caps.maxIncrease)));
  if (want < now && caps.maxDecrease !== undefined)
    return Math.max(want, Math.ceil(now * (1 - caps.maxDecrease)));
  return want;
}

const current = (pod: PodView, name: string, of: 'req' | 'lim', r: Resource): number | undefined => {
  const c = pod.containers.find((x) => x.name === name);
  if (!c) return undefined;
  if (of === 'req') return r === 'cpu' ? c.reqCpu : c.reqMem;
  return r === 'cpu' ? c.limCpu : c.limMem;
};

/** The desired resources within the caps, and what was capped (`container "x" memory request`). */
export function capDesired(
  desired: DesiredResources,
  pod: PodView,
  caps: ResizeCaps,
): { desired: DesiredResources; capped: string[] } {
  if (caps.maxIncrease === undefined && caps.maxDecrease === undefined) return { desired, capped: [] };
  const out: DesiredResources = {};
  const what: string[] = [];
  for (const [name, d] of Object.entries(desired)) {
    const next: ContainerDesired = {};
    for (const [of, key] of [
      ['req', 'requests'],
      ['lim', 'limits'],
    ] as const) {
      const want = d[key];
      if (!want) continue;
      const pair: ContainerDesired['requests'] = {};
      for (const r of RESOURCES) {
        const w = want[r];
        if (w === undefined) continue;
        pair[r] = capped(current(pod, name, of, r), w, caps);
        if (pair[r] !== w) what.push(`container "${name}" ${r} ${of === 'req' ? 'request' : 'limit'}`);
      }
      next[key] = pair;
    }
    out[name] = next;
  }
  return { desired: out, capped: what };
}
