/**
 * A feature rolled across the fleet in waves (KEP-3920's canarying follow-up), pure: the waves from
 * `--waves 1,10%,50%,100%`, and what a rollout does next given what its current wave's clusters show.
 *
 *   one canary cluster first; a wave starts only when every cluster of the one before reached the final
 *   state and stayed there, reachable, for the pause; the first failed or stuck transition halts the
 *   rollout with the reason, and the clusters of later waves are never touched.
 */
import { type FeatureState, finalOf, inTransition, type Value } from './model.js';

export type WaveSize = { count: number } | { percent: number };

export class RolloutInputError extends Error {
  override name = 'RolloutInputError';
}

/** A rollout refused by the fleet as it is (another one running, no cluster matches): not the input. */
export class RolloutRefusedError extends Error {
  override name = 'RolloutRefusedError';
}

/** No rollout has the id given: not a usage error, as an unknown cluster is not (exit 1). */
export class RolloutNotFoundError extends Error {
  override name = 'RolloutNotFoundError';
}

/** "1,10%,50%,100%": counts or percentages of the selected clusters, cumulative and growing. */
export function parseWaves(text: string): WaveSize[] {
  const parts = text.split(',').map((p) => p.trim());
  if (parts.length === 0 || parts.some((p) => p === ''))
    throw new RolloutInputError(`--waves "${text}": a comma-separated list such as 1,10%,50%,100%`);
  const waves = parts.map((p): WaveSize => {
    const m = /^(\d+)(%?)$/.exec(p);
    if (!m) throw new RolloutInputError(`--waves: "${p}" is neither a number of clusters nor a percentage`);
    const n = Number(m[1]);
    if (m[2] && (n < 1 || n > 100)) throw new RolloutInputError(`--waves: ${p} is not between 1% and 100%`);
    if (!m[2] && n < 1) throw new RolloutInputError(`--waves: a wave has at least 1 cluster, not ${p}`);
    return m[2] ? { percent: n } : { count: n };
  });
  const last = waves.at(-1)!;
  if (!('percent' in last && last.percent === 100))
    throw new RolloutInputError(
      `--waves: the last wave must be 100% (every selected cluster), not ${parts.at(-1)}`,
    );
  return waves;
}

/** "10m", "90s", "2h", "0": a duration in ms. */
export function parseDuration(text: string, flag: string): number {
  const m = /^(\d+)(s|m|h)?$/.exec(text.trim());
  if (!m) throw new RolloutInputError(`${flag} "${text}": a duration such as 90s, 10m or 2h`);
  return Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 's') as 's' | 'm' | 'h'];
}

/** Where each wave ends in the ordered list of n clusters: every wave adds at least one, the last all. */
export function waveBounds(waves: readonly WaveSize[], n: number): number[] {
  const bounds: number[] = [];
  let prev = 0;
  for (const w of waves) {
    if (prev >= n) break;
    const wanted = 'count' in w ? w.count : Math.ceil((w.percent * n) / 100);
    prev = Math.min(n, Math.max(prev + 1, wanted));
    bounds.push(prev);
  }
  return bounds;
}

export interface Rollout {
  id: string;
  namespace: string;
  feature: string;
  to: Value;
  /** As given (--waves), and where each wave ends in `clusters`. */
  waves: string;
  bounds: number[];
  /** The selected clusters in rollout order (the first is the canary). */
  clusters: string[];
  selector?: string;
  pauseMs: number;
  /** A transition older than this halts the rollout (stuck); a task failing this often halts it (failed). */
  stuckAfterMs: number;
  failAfterAttempts: number;
  /**
   * running; halted (an operator, or a failure with --no-rollback); rolling-back (a wave failed: its
   * clusters are set back to their previous values and turn back); rolled-back; completed.
   */
  status: 'running' | 'halted' | 'rolling-back' | 'rolled-back' | 'completed';
  /** A failing wave is rolled back (absent on rollouts stored before rollbacks existed: true). */
  rollback?: boolean;
  /** Each wave after the pause waits for `features rollout approve --id` (approvedWave: the last approved). */
  approval?: boolean;
  approvedWave?: number;
  /** Each started cluster's desired value before its wave set it ("default" when it had none). */
  previous?: Record<string, Value | 'default'>;
  /** Each started cluster's health signals when its wave started: worse than these fails the wave. */
  baseline?: Record<string, Health>;
  reason?: string;
  /** The current wave (0-based), when it started, and when all its clusters reached the final state. */
  wave: number;
  waveStartedAt?: number;
  waveReachedAt?: number;
  resumedAt?: number;
  createdAt: number;
  createdBy: string;
  updatedAt: number;
  version: number;
  log: { at: number; message: string }[];
}

export const clustersOfWave = (r: Rollout, wave: number): string[] =>
  r.clusters.slice(wave === 0 ? 0 : r.bounds[wave - 1], r.bounds[wave]);

/** A rollout still acting on its feature (holding it against another rollout). */
export const isActive = (r: Pick<Rollout, 'status'>) => r.status === 'running' || r.status === 'rolling-back';

/**
 * A cluster's health as a rollout judges it: the inventory (none means not healthy: nothing shows it
 * works) and the capabilities' own signals, counters that must not grow while a wave is out.
 */
export interface Health {
  /** The inventory has a status for it, and the last one reached the API server. */
  inventory: boolean;
  reachable: boolean;
  cycleErrors?: number;
  refusedResizes?: number;
  notReadyNodes?: number;
}

const SIGNALS = [
  ['cycleErrors', 'cycle errors'],
  ['refusedResizes', 'refused resizes'],
  ['notReadyNodes', 'nodes NotReady'],
] as const;

/** Why a cluster is not healthy now, against its health when its wave started (undefined: healthy). */
export function unhealthy(now: Health, base: Health | undefined): string | undefined {
  if (!now.inventory) return 'no inventory (nothing shows the cluster works)';
  if (!now.reachable) return 'unreachable';
  for (const [k, what] of SIGNALS) {
    const was = base?.[k] ?? 0;
    const is = now[k];
    if (is !== undefined && is > was) return `${what} rose from ${was} to ${is}`;
  }
  return undefined;
}

/** What the rollout sees of one cluster of its current wave. */
export interface Observation {
  cluster: string;
  state?: FeatureState;
  desired?: Value;
  desiredBy?: string;
  desiredAt?: number;
  reachable: boolean;
  health?: Health;
  /** The final state of the value it had before the wave (for a rollback). */
  previousFinal?: FeatureState;
  /** On the cluster's clock, as the cluster's pass stored it. */
  transitionStartedAt?: number;
  /** The cluster's clock minus the control plane's, read when the observation was made (0: agree). */
  clusterSkewMs?: number;
  task?: { title: string; attempts: number; lastError?: string; failedAt?: number; waitingFor?: string };
}

export type RolloutAction =
  | { kind: 'none'; why: string }
  | { kind: 'start-wave'; clusters: string[] }
  | { kind: 'reached' }
  | { kind: 'next-wave' }
  | { kind: 'complete' }
  | { kind: 'halt'; reason: string }
  | { kind: 'rollback'; reason: string }
  | { kind: 'rolled-back' };

export function decideRollout(r: Rollout, seen: readonly Observation[], now: number): RolloutAction {
  if (r.status === 'rolling-back') {
    // Only the clusters this rollout set (and sets back): one whose value someone else set meanwhile is
    // left as it is, so it is not waited for either (it may never return to its previous state).
    const mine = (o: Observation) =>
      o.desiredBy === `rollout/${r.id}` || o.desiredBy === `rollout/${r.id}/rollback`;
    const back = seen.filter((o) => mine(o) && o.state !== o.previousFinal);
    if (back.length)
      return {
        kind: 'none',
        why: `rolling back: ${back.map((o) => `${o.cluster} (${o.state})`).join(', ')}`,
      };
    return { kind: 'rolled-back' };
  }
  if (r.status !== 'running') return { kind: 'none', why: r.status };
  if (r.waveStartedAt === undefined) return { kind: 'start-wave', clusters: clustersOfWave(r, r.wave) };
  const final = finalOf(r.to);
  for (const o of seen) {
    const problem = problemOf(r, o, now);
    if (problem) {
      const reason = `cluster ${o.cluster}: ${problem}`;
      return r.rollback === false ? { kind: 'halt', reason } : { kind: 'rollback', reason };
    }
  }
  const behind = seen.filter((o) => o.state !== final);
  if (behind.length) {
    if (r.waveReachedAt === undefined)
      return {
        kind: 'none',
        why: `waiting for ${behind.map((o) => `${o.cluster} (${o.state ?? 'unannounced'})`).join(', ')}`,
      };
    return {
      kind: 'halt',
      reason: `cluster ${behind[0]!.cluster}: left ${final} during the pause (now ${behind[0]!.state})`,
    };
  }
  const last = r.wave >= r.bounds.length - 1;
  if (r.waveReachedAt === undefined) return last ? { kind: 'complete' } : { kind: 'reached' };
  if (now - r.waveReachedAt < r.pauseMs)
    return { kind: 'none', why: `pause until ${new Date(r.waveReachedAt + r.pauseMs).toISOString()}` };
  if (r.approval && (r.approvedWave ?? -1) < r.wave)
    return {
      kind: 'none',
      why: `waiting for approval of wave ${r.wave + 2}: fleetscope features rollout approve --id ${r.id} --wave ${r.wave + 2}`,
    };
  return { kind: 'next-wave' };
}

/**
 * Why an approval of wave `wave` (1-based, as `rollout status` names it) cannot be given now: an
 * approval names the wave that was reviewed, and only the gate being shown can be opened (the current
 * wave reached its state and its pause is over). Not the one after it, not one before it started.
 */
export function approvalProblem(r: Rollout, wave: number | undefined, now: number): string | undefined {
  const next = r.wave + 2;
  if (wave === undefined || !Number.isInteger(wave))
    return `an approval names the wave it approves: --wave ${next} (rollout status shows "waiting for approval of wave N")`;
  if (wave !== next)
    return `wave ${wave} is not the one waiting: the next wave is ${next}${wave < next ? ` (wave ${wave} already started)` : ''}`;
  if (r.waveReachedAt === undefined || now - r.waveReachedAt < r.pauseMs)
    return `wave ${next} is not waiting for approval yet: wave ${r.wave + 1} has not reached its state and its pause (rollout status shows the gate once it has)`;
  return undefined;
}

/** Why one cluster of the wave halts the rollout, if it does. */
function problemOf(r: Rollout, o: Observation, now: number): string | undefined {
  const since = r.resumedAt ?? r.waveStartedAt ?? 0;
  // Set by someone else since the wave started (a value the wave has not written yet is not a problem).
  if (o.desired !== r.to && (o.desiredAt ?? 0) > (r.waveStartedAt ?? 0))
    return `its desired value is ${o.desired ?? 'the default'}${o.desiredBy ? ` (set by ${o.desiredBy})` : ''}, not the rollout's ${r.to}`;
  const sick = o.health
    ? unhealthy(o.health, r.baseline?.[o.cluster])
    : o.reachable
      ? undefined
      : 'unreachable';
  if (sick) return `${sick}${r.waveReachedAt !== undefined ? ' during the pause' : ''}`;
  const t = o.task;
  if (t && t.attempts >= r.failAfterAttempts && (t.failedAt ?? 0) > since)
    return `task "${t.title}" failed ${t.attempts} times: ${t.lastError ?? 'unknown error'}`;
  if (o.state && inTransition(o.state) && o.transitionStartedAt !== undefined) {
    // The transition's age on the cluster's clock (its start is on it), no older than the wave's on ours.
    const onCluster = now + (o.clusterSkewMs ?? 0);
    const age = Math.min(onCluster - o.transitionStartedAt, now - since);
    if (age > r.stuckAfterMs)
      return `stuck in ${o.state} for ${Math.round(age / 60_000)}m${t?.waitingFor ? `, waiting for: ${t.waitingFor}` : t ? ` at "${t.title}"` : ''}`;
  }
  return undefined;
}
