/**
 * Starting, advancing, halting and resuming fleet rollouts. Advancing reads the current wave's Feature
 * records and the clusters' last inventory, asks ./rollout.ts what to do, does it, and stores the rollout
 * conditionally on its version, so the reconciler that owns it, an event-triggered one and a restarted
 * one never advance it twice. A wave starts by setting the desired value of its clusters; the clusters'
 * own reconcilers perform the transitions.
 */
import type { ClusterStatus, RegisteredCluster } from '../fleet/cluster.js';
import { matchesLabels, parseLabelSelector } from '../kernel/label-selector.js';
import type { OutgoingEvent } from '../platform/publisher.js';
import type { FeatureCatalog } from './catalog.js';
import { setDesired, setDesiredInOrder } from './desired.js';
import { type FeatureRef, finalOf, inTransition, refKey, type Value } from './model.js';
import {
  approvalProblem,
  clustersOfWave,
  decideRollout,
  type Health,
  isActive,
  type Observation,
  parseWaves,
  type Rollout,
  RolloutNotFoundError,
  RolloutRefusedError,
  waveBounds,
} from './rollout.js';
import type { RolloutStore } from './rollout-store.js';
import { hashOrder } from './sharding.js';
import type { FeatureStore } from './store.js';

export interface RolloutPorts {
  rollouts: RolloutStore;
  store: FeatureStore;
  catalog: FeatureCatalog;
  registry: {
    list(): Promise<RegisteredCluster[]>;
    getStatus(name: string): Promise<ClusterStatus | undefined>;
    /** The registration (absent: every cluster of the rollout is taken as still registered). */
    get?(name: string): Promise<RegisteredCluster | undefined>;
  };
  publish?(events: OutgoingEvent[]): Promise<void>;
  /** The capabilities' health signals of a cluster (default: the inventory's reachability alone). */
  health?(cluster: string): Promise<Health>;
  /**
   * The cluster's clock minus the control plane's (shared/k8s/cluster-clock.ts), read for a cluster in
   * transition: `--stuck-after` ages a transition on the clock its start was stored on (absent: 0).
   */
  clusterSkew?(cluster: string): Promise<number>;
  now(): number;
}

export interface RolloutInput {
  feature: FeatureRef;
  to: Value;
  waves: string;
  pauseMs: number;
  selector?: string;
  stuckAfterMs?: number;
  failAfterAttempts?: number;
  /** false: a failing wave halts the rollout and stays as it is (--no-rollback). */
  rollback?: boolean;
  /** Each next wave waits for `features rollout approve --id`. */
  approval?: boolean;
  by: string;
}

export async function startRollout(p: RolloutPorts, input: RolloutInput): Promise<Rollout> {
  const spec = p.catalog.need(input.feature);
  const waves = parseWaves(input.waves);
  const reqs = input.selector ? parseLabelSelector(input.selector) : [];
  const selected = (await p.registry.list()).filter((c) => matchesLabels(reqs, c.labels)).map((c) => c.name);
  if (selected.length === 0)
    throw new RolloutRefusedError(
      `no registered cluster matches ${input.selector ? `--selector ${input.selector}` : 'the fleet'}`,
    );
  const now = p.now();
  const id = `${spec.name}-${input.to}-${now.toString(36)}`;
  const clusters = hashOrder(selected, (c) => c, id);
  const rollout: Rollout = {
    id,
    namespace: spec.namespace,
    feature: spec.name,
    to: input.to,
    waves: input.waves,
    bounds: waveBounds(waves, clusters.length),
    clusters,
    ...(input.selector ? { selector: input.selector } : {}),
    pauseMs: input.pauseMs,
    stuckAfterMs: input.stuckAfterMs ?? 30 * 60_000,
    failAfterAttempts: input.failAfterAttempts ?? 3,
    rollback: input.rollback ?? true,
    ...(input.approval ? { approval: true } : {}),
    status: 'running',
    wave: 0,
    createdAt: now,
    createdBy: input.by,
    updatedAt: now,
    version: 1,
    log: [{ at: now, message: `started by ${input.by}: ${clusters.length} cluster(s) in ${input.waves}` }],
  };
  if (!(await p.rollouts.create(rollout))) throw new Error(`rollout ${id} exists already; try again`);
  // Stored, then made the feature's rollout by one conditional write: of two started at once, one runs.
  const holder = await p.rollouts.take(rollout);
  if (holder) {
    await p.rollouts.discard(rollout);
    throw new RolloutRefusedError(`rollout ${holder} of ${refKey(spec)} is running: halt it first`);
  }
  await publish(p, [rolloutEvent(rollout, 'started', 0, [])]);
  return rollout;
}

/** Advances a rollout as far as it can go now; returns it as stored, and what happened last. */
export async function advanceRollout(
  p: RolloutPorts,
  id: string,
): Promise<{ rollout?: Rollout; last: string }> {
  let last = 'nothing to do';
  for (let i = 0; i < 10; i++) {
    const r = await p.rollouts.get(id);
    if (!r) return { last: `no rollout ${id}` };
    const now = p.now();
    if (isActive(r) && !(await p.rollouts.holds(r))) {
      const stopped = await unheld(p, r, now);
      if (stopped) return stopped;
    }
    const action = decideRollout(r, await finishWave(p, r, await observe(p, r), now), now);
    if (action.kind === 'none') return { rollout: r, last: action.why };
    const stored = await act(p, r, action, now);
    if (!stored) continue; // another reconciler advanced it: look again
    last = action.kind;
    if (action.kind !== 'start-wave' && action.kind !== 'next-wave') return { rollout: stored, last };
  }
  return { rollout: await p.rollouts.get(id), last };
}

async function act(
  p: RolloutPorts,
  r: Rollout,
  a: Exclude<ReturnType<typeof decideRollout>, { kind: 'none' }>,
  now: number,
) {
  const wave = r.wave + 1;
  switch (a.kind) {
    case 'start-wave':
      return startWave(p, r, a.clusters, now);
    case 'reached': {
      const s = await p.rollouts.save(
        r,
        { waveReachedAt: now },
        `wave ${wave} reached ${r.to}; pausing`,
        now,
      );
      if (s) await publish(p, [rolloutEvent(s, 'wave-reached', wave, clustersOfWave(r, r.wave))]);
      return s;
    }
    case 'next-wave':
      return p.rollouts.save(
        r,
        { wave: r.wave + 1, waveStartedAt: undefined, waveReachedAt: undefined, resumedAt: undefined },
        `wave ${wave} stayed healthy for the pause`,
        now,
      );
    case 'complete': {
      const s = await p.rollouts.save(
        r,
        { status: 'completed', waveReachedAt: now },
        `completed: every cluster is ${r.to}`,
        now,
      );
      if (s) await publish(p, [rolloutEvent(s, 'completed', wave, clustersOfWave(r, r.wave))]);
      return s;
    }
    case 'halt':
      return halt(p, r, a.reason, now);
    case 'rollback':
      return rollBack(p, r, a.reason, now);
    case 'rolled-back': {
      const s = await p.rollouts.save(r, { status: 'rolled-back' }, `wave ${wave} rolled back`, now);
      if (s) await publish(p, [rolloutEvent(s, 'rolled-back', wave, clustersOfWave(r, r.wave), r.reason)]);
      return s;
    }
  }
}

/**
 * A failed wave: stored as rolling back first (so no later wave can start), then each of its clusters
 * the rollout set is set back to the value it had before; their reconcilers turn them back.
 */
async function rollBack(p: RolloutPorts, r: Rollout, reason: string, now: number) {
  const s = await p.rollouts.save(r, { status: 'rolling-back', reason }, `rolling back: ${reason}`, now);
  if (!s) return undefined;
  const events = await setBack(p, s, await observe(p, s), now);
  await publish(p, [
    ...events,
    rolloutEvent(s, 'rolling-back', s.wave + 1, clustersOfWave(s, s.wave), reason),
  ]);
  return s;
}

/** Sets back the clusters of the wave that still carry the rollout's value (someone else's is left). */
async function setBack(
  p: RolloutPorts,
  r: Rollout,
  seen: Observation[],
  now: number,
): Promise<OutgoingEvent[]> {
  const spec = p.catalog.need({ namespace: r.namespace, name: r.feature });
  const events: OutgoingEvent[] = [];
  for (const o of seen.filter((x) => x.desiredBy === `rollout/${r.id}` && x.desired === r.to)) {
    const was = r.previous?.[o.cluster] ?? 'default';
    const value = was === 'default' ? undefined : was;
    const set = await setDesired(p.store, spec, o.cluster, value, `rollout/${r.id}/rollback`, {}, now);
    if (set.changed) events.push(desiredEvent({ ...r, to: value ?? spec.default }, o.cluster, now));
  }
  return events;
}

/**
 * Records the wave as started, then sets its clusters to the rollout's value: a halt stored before the
 * wave lands makes the save fail, and no cluster is touched. A crash after the save leaves values unset
 * that the next pass sets (finishWave).
 */
async function startWave(p: RolloutPorts, r: Rollout, waveClusters: string[], now: number) {
  const wave = r.wave + 1;
  const clusters = await stillRegistered(p, waveClusters);
  const gone = waveClusters.filter((c) => !clusters.includes(c));
  const ref = { namespace: r.namespace, name: r.feature };
  const previous = { ...r.previous };
  const baseline = { ...r.baseline };
  for (const c of clusters) {
    const [rec, health] = await Promise.all([p.store.get(c, ref), healthOf(p, c)]);
    previous[c] = rec?.desired ?? 'default';
    baseline[c] = health;
  }
  const s = await p.rollouts.save(
    r,
    { waveStartedAt: now, previous, baseline },
    `wave ${wave} started: ${clusters.join(', ') || 'no cluster'}${gone.length ? ` (${gone.join(', ')} deregistered: left out)` : ''}`,
    now,
  );
  if (!s) return undefined;
  const events = await setWave(p, s, clusters, now);
  await publish(p, [...events, rolloutEvent(s, 'wave-started', wave, clusters)]);
  return s;
}

async function setWave(
  p: RolloutPorts,
  r: Rollout,
  clusters: string[],
  now: number,
): Promise<OutgoingEvent[]> {
  const spec = p.catalog.need({ namespace: r.namespace, name: r.feature });
  const events: OutgoingEvent[] = [];
  for (const cluster of clusters) {
    const set = await setDesiredInOrder(p.store, p.catalog, spec, cluster, r.to, `rollout/${r.id}`, {}, now);
    for (const c of set)
      if (c.change.changed)
        events.push(
          desiredEvent(
            { ...r, namespace: c.spec.namespace, feature: c.spec.name, to: c.change.record.desired ?? r.to },
            cluster,
            now,
          ),
        );
  }
  return events;
}

/**
 * The clusters of a started wave whose value nobody set since it started (the wave's own writes cut
 * short by a crash) are set now; one that someone else set since is left for decideRollout to halt on.
 */
async function finishWave(
  p: RolloutPorts,
  r: Rollout,
  seen: Observation[],
  now: number,
): Promise<Observation[]> {
  if (r.status !== 'running' || r.waveStartedAt === undefined) return seen;
  const unset = seen.filter((o) => o.desired !== r.to && (o.desiredAt ?? 0) <= r.waveStartedAt!);
  if (unset.length === 0) return seen;
  await publish(
    p,
    await setWave(
      p,
      r,
      unset.map((o) => o.cluster),
      now,
    ),
  );
  return observe(p, r);
}

/**
 * An active rollout that does not hold its feature (stored before pointers existed, or its start
 * stopped between storing it and taking the feature) takes it now, unless another active one holds it:
 * then it is halted naming that one. Either way at most one acts.
 */
async function unheld(
  p: RolloutPorts,
  r: Rollout,
  now: number,
): Promise<{ rollout?: Rollout; last: string } | undefined> {
  const holder = await p.rollouts.take(r);
  if (!holder) return undefined;
  const s = await halt(p, r, `rollout ${holder} of ${r.namespace}/${r.feature} is running`, now);
  return { ...(s ? { rollout: s } : {}), last: 'halt' };
}

async function halt(p: RolloutPorts, r: Rollout, reason: string, now: number) {
  const s = await p.rollouts.save(r, { status: 'halted', reason }, `halted: ${reason}`, now);
  if (s) await publish(p, [rolloutEvent(s, 'halted', r.wave + 1, clustersOfWave(r, r.wave), reason)]);
  return s;
}

/** The operator's halt and resume (conditional like every other rollout write; retried on a race). */
export async function setRolloutStatus(p: RolloutPorts, id: string, to: 'halted' | 'running', by: string) {
  for (let i = 0; i < 5; i++) {
    const r = await p.rollouts.get(id);
    if (!r)
      throw new RolloutNotFoundError(`no rollout "${id}" (fleetscope features rollout status lists them)`);
    if (r.status === 'completed' || r.status === 'rolled-back')
      throw new RolloutRefusedError(
        `rollout ${id} has ${r.status === 'completed' ? 'completed' : 'been rolled back'}`,
      );
    if (r.status === to) return r;
    const now = p.now();
    const s =
      to === 'halted'
        ? await halt(p, r, `halted by ${by}`, now)
        : await p.rollouts.save(
            r,
            { status: 'running', reason: undefined, resumedAt: now },
            `resumed by ${by}`,
            now,
          );
    if (s && to === 'running') {
      const holder = await p.rollouts.take(s);
      if (holder) {
        const why = `rollout ${holder} of ${r.namespace}/${r.feature} is running: halt it first`;
        await halt(p, s, `resume refused: ${why}`, now);
        throw new RolloutRefusedError(why);
      }
      await publish(p, [rolloutEvent(s, 'resumed', s.wave + 1, clustersOfWave(s, s.wave))]);
    }
    if (s) return s;
  }
  throw new Error(`rollout ${id} kept changing; try again`);
}

/** A cluster whose clock cannot be read (unreachable: its health says so) is taken on ours. */
async function skewOf(p: RolloutPorts, cluster: string): Promise<number> {
  try {
    return (await p.clusterSkew?.(cluster)) ?? 0;
  } catch {
    return 0;
  }
}

/** The port's signals, or what the inventory says (no status: not healthy). */
async function healthOf(p: RolloutPorts, cluster: string): Promise<Health> {
  if (p.health) return p.health(cluster);
  const status = await p.registry.getStatus(cluster);
  return { inventory: status !== undefined, reachable: status?.reachable ?? false };
}

/** The operator's approval of the next wave (rollouts started with approval gates). */
export async function approveWave(p: RolloutPorts, id: string, by: string, wave?: number): Promise<Rollout> {
  for (let i = 0; i < 5; i++) {
    const r = await p.rollouts.get(id);
    if (!r)
      throw new RolloutNotFoundError(`no rollout "${id}" (fleetscope features rollout status lists them)`);
    if (!r.approval) throw new RolloutRefusedError(`rollout ${id} was started without approval gates`);
    if (r.status !== 'running') throw new RolloutRefusedError(`rollout ${id} is ${r.status}, not running`);
    if (r.wave >= r.bounds.length - 1) throw new RolloutRefusedError(`rollout ${id} is in its last wave`);
    if ((r.approvedWave ?? -1) >= r.wave && wave === r.wave + 2) return r;
    const now = p.now();
    const problem = approvalProblem(r, wave, now);
    if (problem) throw new RolloutRefusedError(`rollout ${id}: ${problem}`);
    const s = await p.rollouts.save(r, { approvedWave: r.wave }, `wave ${r.wave + 2} approved by ${by}`, now);
    if (s) {
      await publish(p, [rolloutEvent(s, 'approved', r.wave + 2, clustersOfWave(s, r.wave + 1))]);
      return s;
    }
  }
  throw new Error(`rollout ${id} kept changing; try again`);
}

/**
 * The clusters still registered (and not being deregistered): a cluster deregistered mid-rollout is
 * left out of its wave, neither given a record nor judged for health (it has no inventory any more).
 */
async function stillRegistered(p: RolloutPorts, clusters: string[]): Promise<string[]> {
  const get = p.registry.get?.bind(p.registry);
  if (!get) return clusters;
  const live = await Promise.all(
    clusters.map(async (c) => {
      const registered = await get(c);
      return registered && !registered.deregistering ? c : undefined;
    }),
  );
  return live.filter((c): c is string => c !== undefined);
}

async function observe(p: RolloutPorts, r: Rollout): Promise<Observation[]> {
  if (r.waveStartedAt === undefined) return [];
  const ref = { namespace: r.namespace, name: r.feature };
  return Promise.all(
    (await stillRegistered(p, clustersOfWave(r, r.wave))).map(async (cluster): Promise<Observation> => {
      const [rec, health] = await Promise.all([p.store.get(cluster, ref), healthOf(p, cluster)]);
      const t = rec?.tasks[0];
      const was = r.previous?.[cluster];
      // Unreachable: judged so before its age, and no clock to read.
      const skew = rec && inTransition(rec.state) && health.reachable ? await skewOf(p, cluster) : 0;
      return {
        cluster,
        reachable: health.reachable,
        health,
        ...(skew ? { clusterSkewMs: skew } : {}),
        ...(rec && was ? { previousFinal: finalOf(was === 'default' ? rec.default : was) } : {}),
        ...(rec ? { state: rec.state } : {}),
        ...(rec?.desired ? { desired: rec.desired } : {}),
        ...(rec?.desiredBy ? { desiredBy: rec.desiredBy } : {}),
        ...(rec?.desiredAt ? { desiredAt: rec.desiredAt } : {}),
        ...(rec?.transition ? { transitionStartedAt: rec.transition.startedAt } : {}),
        ...(t
          ? {
              task: {
                title: t.title,
                attempts: t.attempts,
                ...(t.lastError ? { lastError: t.lastError } : {}),
                ...(t.failedAt ? { failedAt: t.failedAt } : {}),
                ...(t.waitingFor ? { waitingFor: t.waitingFor } : {}),
              },
            }
          : {}),
      };
    }),
  );
}

function rolloutEvent(
  r: Rollout,
  phase:
    | 'started'
    | 'wave-started'
    | 'wave-reached'
    | 'approved'
    | 'halted'
    | 'resumed'
    | 'rolling-back'
    | 'rolled-back'
    | 'completed',
  wave: number,
  clusters: string[],
  reason?: string,
): OutgoingEvent<'FeatureRolloutChanged'> {
  return {
    detailType: 'FeatureRolloutChanged',
    detail: {
      rollout: r.id,
      namespace: r.namespace,
      feature: r.feature,
      to: r.to,
      phase,
      wave,
      waves: r.bounds.length,
      clusters: clusters.slice(0, 100),
      ...(reason ? { reason: reason.slice(0, 1024) } : {}),
      at: new Date(r.updatedAt).toISOString(),
    },
    resources: [`rollout/${r.id}`],
  };
}

export function desiredEvent(
  r: { id: string; namespace: string; feature: string; to: Value },
  cluster: string,
  now: number,
): OutgoingEvent<'FeatureDesiredChanged'> {
  return {
    detailType: 'FeatureDesiredChanged',
    detail: {
      cluster,
      namespace: r.namespace,
      feature: r.feature,
      desired: r.to,
      by: `rollout/${r.id}`,
      at: new Date(now).toISOString(),
    },
    resources: [`cluster/${cluster}`],
  };
}

async function publish(p: RolloutPorts, events: OutgoingEvent[]): Promise<void> {
  if (events.length && p.publish) await p.publish(events).catch(() => undefined);
}
