/**
 * Canary first: a DaemonSet's downsizes go to a small share of its pods (the canaries, chosen by a
 * hash of the node name so the choice is stable and spread), and to the rest only once the canaries
 * stayed healthy for the soak time, measured on the cycle's clock. A wave is one round of downsizes: it
 * starts when a downsize is due and none is open, is released once soaked, and ends when a cycle after
 * its release has no downsize left or a fold brought new recommendations (a fold's worth of changes
 * gets its own canaries). A revert ends it too, and holds every downsize for a back-off (revert.ts).
 * Increases never wait: a pod short of resources is not made to wait for a canary.
 */
import { createHash } from 'node:crypto';
import type { ContainerDesired, DesiredResources } from '../resize/index.js';
import type { CanaryWave, RevertedFrom, RolloutPath, RolloutRecord } from './rollout.js';
import type { RolloutPolicy } from './rollout-policy.js';

/** A decision as the gate sees it: the node, whether it lowers anything, what it asks for. */
export interface GateItem {
  node: string;
  downsize: boolean;
  desired: DesiredResources;
}

/** Why a downsize was held back this cycle. */
export type HeldWhy = 'canary' | 'soak' | 'hold';

export interface GateResult<T extends GateItem> {
  allowed: T[];
  held: { item: T; why: HeldWhy }[];
  wave: CanaryWave | undefined;
  /** What happened to the wave this cycle (the property test counts each). */
  paths: GatePath[];
}

export type GatePath = Exclude<RolloutPath, `revert-${string}`>;

/** How many canaries a wave of a DaemonSet with `pods` pods takes: the share, at least one. */
export function canaryCount(share: number, pods: number): number {
  if (share <= 0) return pods;
  return Math.max(1, Math.ceil(share * pods));
}

/**
 * Which decisions go now. `pods` is the DaemonSet's pod count (the share's base), `folded` whether this
 * cycle's recommendations come from a fold.
 */
export function gate<T extends GateItem>(
  items: readonly T[],
  c: { rollout: RolloutRecord; policy: RolloutPolicy; pods: number; now: number; folded: boolean },
): GateResult<T> {
  const paths: GatePath[] = [];
  const downs = items.filter((i) => i.downsize);
  const allowed = items.filter((i) => !i.downsize);
  const held: GateResult<T>['held'] = [];
  const hold = c.rollout.hold;
  if (hold && c.now < hold.until) {
    for (const item of downs) held.push({ item, why: 'hold' });
    if (downs.length > 0) paths.push('held-on-backoff');
    return { allowed, held, wave: undefined, paths };
  }
  let wave = c.rollout.wave;
  if (wave?.releasedAt !== undefined && (c.folded || downs.length === 0)) {
    wave = undefined;
    paths.push('wave-ended');
  }
  if (downs.length === 0) return { allowed, held, wave, paths };
  if (c.policy.canaryShare <= 0 || c.policy.canaryShare >= 1) {
    // No canary: every pod at once, still watched for harm.
    return { allowed: [...allowed, ...downs], held, wave, paths };
  }
  if (!wave) {
    const k = canaryCount(c.policy.canaryShare, c.pods);
    const chosen = new Set(
      [...downs]
        .sort(byHash)
        .slice(0, k)
        .map((i) => i.node),
    );
    wave = { startedAt: c.now, canaries: [...chosen].sort() };
    paths.push('canary-sent');
  } else if (wave.releasedAt === undefined && c.now - wave.startedAt >= c.policy.soakMs) {
    wave = { ...wave, releasedAt: c.now };
    paths.push('rest-after-soak');
  }
  const canaries = new Set(wave.canaries);
  for (const item of downs) {
    if (wave.releasedAt !== undefined || canaries.has(item.node)) allowed.push(item);
    else held.push({ item, why: paths.includes('canary-sent') ? 'canary' : 'soak' });
  }
  if (wave.releasedAt === undefined && held.length > 0 && !paths.includes('canary-sent'))
    paths.push('soak-waited');
  return { allowed, held, wave, paths };
}

const hashOf = (node: string) => createHash('sha256').update(node).digest().readUInt32BE(0);
const byHash = (a: GateItem, b: GateItem) => hashOf(a.node) - hashOf(b.node) || (a.node < b.node ? -1 : 1);

/**
 * The desired resources without the values that would take a node back down to (or below) a size it
 * was reverted from; undefined when nothing is left to ask for.
 */
export function avoidRevertedFrom(
  desired: DesiredResources,
  from: RevertedFrom | undefined,
): DesiredResources | undefined {
  if (!from) return desired;
  const out: DesiredResources = {};
  for (const [name, d] of Object.entries(desired)) {
    const bad = from.size[name];
    // A resource going back down is left as it runs, request and limit together (never one without the other).
    const back = (res: 'cpu' | 'memory') =>
      (['requests', 'limits'] as const).some((kind) => {
        const want = d[kind]?.[res];
        const was = bad?.[kind]?.[res];
        return want !== undefined && was !== undefined && want <= was;
      });
    const drop = (['cpu', 'memory'] as const).filter(back);
    const keep: ContainerDesired = {};
    for (const kind of ['requests', 'limits'] as const) {
      const pair = { ...d[kind] };
      for (const res of drop) delete pair[res];
      if (Object.keys(pair).length > 0) keep[kind] = pair;
    }
    if (keep.requests || keep.limits) out[name] = keep;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}
