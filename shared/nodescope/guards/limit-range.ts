/**
 * What a namespace's LimitRanges refuse of a resize. kube-apiserver's LimitRanger admission judges
 * pods/resize as it judges a new pod (1.33 and 1.36 alike, test/nodescope/guards.real.test.ts): every
 * container of the new spec against each `type: Container` item's min, max and maxLimitRequestRatio,
 * refused with a 403. So a resize that one would break is held before it is sent, and said in people's
 * units. (`type: Pod` items, the sum over containers, are not judged here.)
 */

import { parseCpu, parseMemory } from '../../kernel/quantity.js';
import { amountWords } from '../../kernel/units-format.js';
import { type ContainerAmounts, RESOURCES, type Resource } from './resources.js';

type Quantities = Partial<Record<string, string>>;

/** The parts of a LimitRange read here. */
export interface LimitRangeLike {
  metadata?: { name?: string };
  spec?: {
    limits?: { type?: string; min?: Quantities; max?: Quantities; maxLimitRequestRatio?: Quantities }[];
  };
}

/** A rule a resize would break: which object, and what, in people's units. */
export interface GuardViolation {
  /** `LimitRange <name>` or `ResourceQuota <name>`. */
  by: string;
  message: string;
}

const amount = (r: Resource, q: string | undefined): number | undefined => {
  if (q === undefined) return undefined;
  try {
    return r === 'cpu' ? parseCpu(q) : parseMemory(q);
  } catch {
    return undefined;
  }
};

/** Every break of the LimitRanges by the containers as the resize leaves them. */
export function limitRangeViolations(
  ranges: readonly LimitRangeLike[],
  containers: readonly ContainerAmounts[],
): GuardViolation[] {
  const out: GuardViolation[] = [];
  for (const lr of ranges)
    for (const item of lr.spec?.limits ?? []) {
      if (item.type !== 'Container') continue;
      const by = `LimitRange ${lr.metadata?.name ?? ''}`;
      for (const c of containers)
        for (const r of RESOURCES) {
          const problem = breaks(c, r, item);
          if (problem) out.push({ by, message: `container "${c.name}": ${problem}` });
        }
    }
  return out;
}

/** What of one resource of one container breaks the item, as LimitRanger's checks run. */
function breaks(
  c: ContainerAmounts,
  r: Resource,
  item: { min?: Quantities; max?: Quantities; maxLimitRequestRatio?: Quantities },
): string | undefined {
  const req = c.requests[r];
  const lim = c.limits[r];
  const words = (v: number) => amountWords(r, v);
  const min = amount(r, item.min?.[r]);
  if (min !== undefined) {
    if (req !== undefined && req < min) return `${r} request ${words(req)} below the minimum ${words(min)}`;
    if (lim !== undefined && lim < min) return `${r} limit ${words(lim)} below the minimum ${words(min)}`;
  }
  const max = amount(r, item.max?.[r]);
  if (max !== undefined) {
    if (lim === undefined) return `${r} has no limit, and the maximum ${words(max)} needs one`;
    if (lim > max) return `${r} limit ${words(lim)} above the maximum ${words(max)}`;
    if (req !== undefined && req > max) return `${r} request ${words(req)} above the maximum ${words(max)}`;
  }
  const ratioText = item.maxLimitRequestRatio?.[r];
  if (ratioText !== undefined) {
    // A quantity ("3", "1500m"), compared as LimitRanger does, in thousandths.
    const ratio = (amount('cpu', ratioText) ?? Number.NaN) / 1000;
    if (!req) return `${r} has no request, and a limit/request ratio of at most ${ratioText} needs one`;
    if (!lim) return `${r} has no limit, and a limit/request ratio of at most ${ratioText} needs one`;
    if (Number.isFinite(ratio) && lim / req > ratio)
      return `${r} limit/request ratio ${(lim / req).toFixed(2)} (${words(lim)}/${words(req)}) above the maximum ${ratioText}`;
  }
  return undefined;
}
