/**
 * What node scope remembers of a DaemonSet's rollout between cycles, stored in its apply item
 * (store-dynamo.ts: `rolloutZ`, JSON, raw DEFLATE): per node the previous size and when it was downsized (what
 * a revert goes back to), the current canary wave, the sizes nodes were reverted from (never asked
 * for again), the hold after a revert, and the last reverts with why (the list, the report, history).
 * Times are the cycle's (the cluster's clock), never this process's.
 */
import { age, amountWords } from '../kernel/units-format.js';
import type { ContainerChange, DesiredResources } from '../resize/index.js';

/** Why a downsized node was reverted (harm.ts). */
export type HarmKind = 'OOMKilled' | 'Restarted' | 'NotReady' | 'Throttled';
export const HARM_KINDS: readonly HarmKind[] = ['OOMKilled', 'Restarted', 'NotReady', 'Throttled'];

/** One node's downsize, kept while a revert may follow it (the policy's revert window). */
export interface NodeDownsize {
  podUid: string;
  /** When it was requested (cycle time, ms). */
  at: number;
  /** What the containers ran with before, and what was asked: the values changed only. */
  before: DesiredResources;
  after: DesiredResources;
  /** The pod's restart count summed over its containers when it was resized. */
  restarts: number;
  /**
   * The resize was seen actuated (the pod's resize no longer pending) and the restart count taken again
   * then: a container whose resize policy is RestartContainer restarts once by design.
   */
  actuated?: true;
  /** The throttled share of CPU periods before, where metrics give one (harm.ts). */
  throttled?: number;
  /** Harm seen but the revert not sent yet (budget, refusal): kept so the next cycle sends it. */
  harm?: { kind: HarmKind; detail: string; at: number };
}

/** A size a node was reverted from: a later downsize never goes back to it (until `until`). */
export interface RevertedFrom {
  at: number;
  until: number;
  reason: HarmKind;
  size: DesiredResources;
}

export interface RevertEntry {
  node: string;
  podUid: string;
  at: number;
  reason: HarmKind;
  detail: string;
  /** The size reverted from, and back to. */
  from: DesiredResources;
  to: DesiredResources;
  /** The revert request reached the apiserver. */
  sent: boolean;
}

export interface CanaryWave {
  startedAt: number;
  canaries: string[];
  /** When the canaries had stayed healthy for the soak time: the rest may follow. */
  releasedAt?: number;
}

export interface Hold {
  /** No downsize of the DaemonSet before this time (ms). */
  until: number;
  /** Reverts in a row without a healthy wave between: the back-off doubles with each. */
  consecutive: number;
  node: string;
  reason: HarmKind;
  at: number;
}

export interface RolloutRecord {
  downsized: Record<string, NodeDownsize>;
  revertedFrom: Record<string, RevertedFrom>;
  wave?: CanaryWave;
  hold?: Hold;
  /** The last reverts, newest last (at most MAX_REVERTS). */
  reverts: RevertEntry[];
}

export const MAX_REVERTS = 20;
/** A reverted-from size is avoided this long; by then upstream's histogram has the harm's samples. */
export const REVERTED_FROM_MS = 8 * 86_400_000;

export const emptyRollout = (): RolloutRecord => ({ downsized: {}, revertedFrom: {}, reverts: [] });

/** Whether a change lowers any request or limit (a downsize, which a canary goes first for). */
export function lowersAny(changes: readonly ContainerChange[]): boolean {
  for (const c of changes)
    for (const kind of ['requests', 'limits'] as const)
      for (const res of ['cpu', 'memory'] as const) {
        const b = c.before[kind]?.[res];
        const a = c.after[kind]?.[res];
        if (a !== undefined && b !== undefined && a < b) return true;
      }
  return false;
}

/** Whether the desired resources lower anything the pod's containers run with now. */
export function desiredLowers(
  desired: DesiredResources,
  current: (container: string, kind: 'requests' | 'limits', res: 'cpu' | 'memory') => number | undefined,
): boolean {
  for (const [name, d] of Object.entries(desired))
    for (const kind of ['requests', 'limits'] as const)
      for (const res of ['cpu', 'memory'] as const) {
        const want = d[kind]?.[res];
        const now = current(name, kind, res);
        if (want !== undefined && now !== undefined && want < now) return true;
      }
  return false;
}

/** The before and after of a resize's changes, as desired resources. */
export function sidesOf(changes: readonly ContainerChange[]): {
  before: DesiredResources;
  after: DesiredResources;
} {
  const before: DesiredResources = {};
  const after: DesiredResources = {};
  for (const c of changes) {
    before[c.name] = c.before;
    after[c.name] = c.after;
  }
  return { before, after };
}

/** The record without what has lapsed by `now`: downsizes past the window, reverted-from sizes, a hold. */
export function pruned(r: RolloutRecord, now: number, windowMs: number): RolloutRecord {
  const downsized: Record<string, NodeDownsize> = {};
  for (const [node, d] of Object.entries(r.downsized))
    if (d.harm || now - d.at <= windowMs) downsized[node] = d;
  const revertedFrom: Record<string, RevertedFrom> = {};
  for (const [node, f] of Object.entries(r.revertedFrom)) if (now < f.until) revertedFrom[node] = f;
  return { ...r, downsized, revertedFrom };
}

/** What the rollout did in one DaemonSet's cycle (DsOutcome.rollout). */
export interface RolloutOutcome {
  /** Downsizes sent to canaries (the wave not released yet), and sent after a released wave. */
  canariesSent: number;
  restSent: number;
  /** Downsizes held: not a canary of the new wave, waiting for the canaries' soak, on back-off. */
  heldForCanary: number;
  heldForSoak: number;
  heldOnBackoff: number;
  /** Values left as they run: they would have gone back to a size the node was reverted from. */
  revertedFromAvoided: number;
  /** Reverts sent this cycle. */
  reverts: RevertEntry[];
  /** Harm seen this cycle whose revert could not be sent yet (budget, refusal back-off). */
  revertsPending: number;
  paths: RolloutPath[];
  wave?: CanaryWave;
  hold?: Hold;
}

export type RolloutPath =
  | 'canary-sent'
  | 'soak-waited'
  | 'rest-after-soak'
  | 'held-on-backoff'
  | 'wave-ended'
  | `revert-${HarmKind}`;

/**
 * The rollout in a few words, for `recommendations list` and the report: "held, lifts in 45m (OOMKilled
 * on node-4)", "canary 2 nodes, started 12m ago", "rest after soak", "-"; with the reverts counted.
 */
export function rolloutPhrase(r: RolloutRecord | undefined, now: number): string {
  if (!r) return '-';
  const parts: string[] = [];
  const { hold, wave } = r;
  const plural = (n: number, w: string) => `${n} ${w}${n === 1 ? '' : 's'}`;
  if (hold && now < hold.until)
    parts.push(`held, lifts ${age(hold.until, now)} (${hold.reason} on ${hold.node})`);
  else if (wave && wave.releasedAt === undefined)
    parts.push(`canary ${plural(wave.canaries.length, 'node')}, started ${age(wave.startedAt, now)}`);
  else if (wave) parts.push('rest after soak');
  if (r.reverts.length > 0) parts.push(plural(r.reverts.length, 'revert'));
  return parts.length > 0 ? parts.join(', ') : '-';
}

/** "collector memory request 512Mi → 256Mi": each value a revert takes back, with its unit. */
export function sizeChangeWords(from: DesiredResources, to: DesiredResources): string {
  const parts: string[] = [];
  for (const [name, f] of Object.entries(from))
    for (const kind of ['requests', 'limits'] as const)
      for (const res of ['cpu', 'memory'] as const) {
        const a = f[kind]?.[res];
        const b = to[name]?.[kind]?.[res];
        if (a === undefined || b === undefined || a === b) continue;
        parts.push(
          `${name} ${res} ${kind === 'requests' ? 'request' : 'limit'} ${amountWords(res, a)} → ${amountWords(res, b)}`,
        );
      }
  return parts.join(', ');
}
