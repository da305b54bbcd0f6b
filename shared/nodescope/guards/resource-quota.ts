/**
 * What a namespace's ResourceQuotas refuse of a resize. kube-apiserver's ResourceQuota admission
 * charges a pods/resize with what it adds (the new spec's requests and limits less the old's, 1.33 and
 * 1.36 alike: test/nodescope/guards.real.test.ts) and refuses it with a 403 when the quota's used plus
 * that would pass its hard limit; a resize that frees resources always passes. Several resizes in one
 * namespace in one cycle add up: the caller charges each one it sent (`QuotaLedger.charge`).
 */

import { parseCpu, parseMemory } from '../../kernel/quantity.js';
import { amountWords } from '../../kernel/units-format.js';
import type { GuardViolation } from './limit-range.js';
import type { ContainerAmounts, Resource } from './resources.js';

type Quantities = Partial<Record<string, string>>;

export interface ResourceQuotaLike {
  metadata?: { name?: string };
  spec?: { hard?: Quantities; scopes?: string[]; scopeSelector?: unknown };
  status?: { hard?: Quantities; used?: Quantities };
}

/** The quota names that count a pod's cpu and memory, and what of the pod each counts. */
const TRACKED: readonly { key: string; of: 'requests' | 'limits'; r: Resource }[] = [
  { key: 'requests.cpu', of: 'requests', r: 'cpu' },
  { key: 'cpu', of: 'requests', r: 'cpu' },
  { key: 'requests.memory', of: 'requests', r: 'memory' },
  { key: 'memory', of: 'requests', r: 'memory' },
  { key: 'limits.cpu', of: 'limits', r: 'cpu' },
  { key: 'limits.memory', of: 'limits', r: 'memory' },
];

/** What a resize adds per quota name (negative: frees). */
export type QuotaDelta = Record<string, number>;

const sum = (cs: readonly ContainerAmounts[], of: 'requests' | 'limits', r: Resource) =>
  cs.reduce((n, c) => n + (c[of][r] ?? 0), 0);

/** What the resize adds to each tracked quota name, from the containers before and after. */
export function quotaDelta(
  before: readonly ContainerAmounts[],
  after: readonly ContainerAmounts[],
): QuotaDelta {
  const out: QuotaDelta = {};
  for (const t of TRACKED) out[t.key] = sum(after, t.of, t.r) - sum(before, t.of, t.r);
  return out;
}

/**
 * Whether the quota counts a running DaemonSet pod with requests: a Terminating (activeDeadlineSeconds)
 * or BestEffort scope does not; any other scope or a scopeSelector (PriorityClass) is taken to count
 * it, the safe side: a resize it would refuse is held rather than sent.
 */
const countsThePod = (q: ResourceQuotaLike) =>
  !(q.spec?.scopes ?? []).some((s) => s === 'Terminating' || s === 'BestEffort');

const amount = (r: Resource, v: string | undefined): number | undefined => {
  if (v === undefined) return undefined;
  try {
    return r === 'cpu' ? parseCpu(v) : parseMemory(v);
  } catch {
    return undefined;
  }
};

/** Every quota the resize would pass, with what was already charged this cycle (`charged`, per quota). */
export function quotaViolations(
  quotas: readonly ResourceQuotaLike[],
  delta: QuotaDelta,
  charged: ReadonlyMap<string, QuotaDelta> = new Map(),
): GuardViolation[] {
  const out: GuardViolation[] = [];
  for (const q of quotas) {
    if (!countsThePod(q)) continue;
    const name = q.metadata?.name ?? '';
    const by = `ResourceQuota ${name}`;
    for (const t of TRACKED) {
      const add = delta[t.key] ?? 0;
      if (!(t.key in (q.spec?.hard ?? {})) || add <= 0) continue;
      const hard = amount(t.r, q.status?.hard?.[t.key]);
      const used = amount(t.r, q.status?.used?.[t.key]);
      if (hard === undefined || used === undefined) {
        out.push({
          by,
          message: `${t.key}: its usage is not counted yet (no status), so the apiserver refuses any increase`,
        });
        continue;
      }
      const before = used + (charged.get(name)?.[t.key] ?? 0);
      if (before + add > hard)
        out.push({
          by,
          message: `${t.key}: ${amountWords(t.r, before)} used + ${amountWords(t.r, add)} would pass the hard limit ${amountWords(t.r, hard)}`,
        });
    }
  }
  return out;
}

/** What this cycle's sent resizes charged to each quota of a namespace. */
export class QuotaLedger {
  readonly charged = new Map<string, QuotaDelta>();
  charge(quotas: readonly ResourceQuotaLike[], delta: QuotaDelta): void {
    for (const q of quotas) {
      if (!countsThePod(q)) continue;
      const name = q.metadata?.name ?? '';
      const c = this.charged.get(name) ?? {};
      for (const [k, v] of Object.entries(delta)) if (v > 0) c[k] = (c[k] ?? 0) + v;
      this.charged.set(name, c);
    }
  }
}
