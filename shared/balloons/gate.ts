/**
 * Whether a cycle has anything to do: a cluster nothing asks balloons of is not read further (no pod
 * list, no DaemonSet), and a cluster without pods/resize is reported and left alone.
 */

import type { BalloonNode } from './cluster-read.js';
import { type CompiledPolicy, compilePolicies, HOST_ID_LABEL } from './desired.js';
import type { BalloonCycleResult, CycleLedger } from './ledger.js';
import type { BalloonItems } from './store.js';
import { summarize } from './summary-model.js';

/** Whether anything asks for balloons in this cluster (otherwise the cycle reads no pod at all). */
export function wanted(items: BalloonItems, nodes: readonly BalloonNode[]): boolean {
  return (
    items.policies.length > 0 ||
    items.requests.length > 0 ||
    Object.keys(items.state?.nodes ?? {}).length > 0 ||
    nodes.some((n) => n.labels[HOST_ID_LABEL] !== undefined)
  );
}

export function idleResult(l: CycleLedger): BalloonCycleResult {
  return {
    cluster: l.ctx.cluster,
    at: l.now,
    managed: false,
    summary: summarize([], l.now),
    decisions: [],
    reports: [],
    reverts: [],
    dropped: [],
    errors: l.errors,
    unsound: [],
    impostors: [],
    repairs: [],
  };
}

const UNSUPPORTED =
  'the API server has no pods/resize subresource (Kubernetes before 1.32, or InPlacePodVerticalScaling off): balloons cannot be resized, so none are created';

/**
 * A cluster without pods/resize is reported and left alone: asked once (discovery) before the first
 * DaemonSet is created, and again only after the recheck interval.
 */
export async function resizeUnsupported(l: CycleLedger, items: BalloonItems): Promise<string | undefined> {
  const s = items.state;
  if (s?.unsupported && s.unsupportedUntil !== undefined && l.now < s.unsupportedUntil) return s.unsupported;
  if (s && !s.unsupported) return undefined;
  return (await l.ctx.objects.resizeSupported()) ? undefined : UNSUPPORTED;
}

export async function unsupportedResult(
  l: CycleLedger,
  items: BalloonItems,
  why: string,
): Promise<BalloonCycleResult> {
  l.errors.push(why);
  const s = items.state;
  if (!s?.unsupported || s.unsupportedUntil === undefined || l.now >= s.unsupportedUntil)
    await l.ctx.store.saveState(
      {
        cluster: l.ctx.cluster,
        at: l.now,
        cycleId: l.ctx.cycleId,
        nodes: {},
        errors: l.errors,
        unsupported: why,
        unsupportedUntil: l.now + l.settings.unsupportedRecheckMs,
      },
      s?.version,
    );
  return idleResult(l);
}

export function compile(items: BalloonItems, errors: string[]): CompiledPolicy[] {
  const ok: CompiledPolicy[] = [];
  for (const p of items.policies) {
    try {
      ok.push(...compilePolicies([p]));
    } catch (err) {
      errors.push(`policy ${p.name}: ${(err as Error).message}`);
    }
  }
  return ok.sort((a, b) => a.policy.name.localeCompare(b.policy.name));
}
