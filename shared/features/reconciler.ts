/**
 * The server flow of one cluster (KEP-3920): announce the features the cluster lacks, then for each one
 * take the steps the state machine (./machine.ts) names, each stored with a conditional write on the
 * version read, until the feature is stable or waits; finally mirror what changed into the cluster.
 *
 * A task is claimed (a stored step) before it is performed, so two reconcilers never perform it at the
 * same time; its outcome is stored as the next step. A crash between any two steps leaves the last
 * stored one: the next pass resumes from it (a claim lapses after CLAIM_MS), and every task observes
 * before it writes, so one performed again writes nothing it already wrote.
 */
import type { ClusterClient } from '../k8s/client.js';
import { clusterSkew } from '../k8s/cluster-clock.js';
import { withWriteGuard } from '../k8s/write-guard.js';
import type { OutgoingEvent } from '../platform/publisher.js';
import type { FeatureCatalog } from './catalog.js';
import { ClaimFence } from './claim-fence.js';
import { taskEvent, transitionEvent } from './events.js';
import {
  announced,
  CLAIM_MS,
  claimed,
  finished,
  holds,
  nextStep,
  reasonOf,
  reversed,
  type Step,
  started,
  stuckMarked,
  taskDeadlineMs,
  taskDone,
  taskFailed,
  taskWaiting,
  withDefault,
} from './machine.js';
import { FeatureMirror } from './mirror.js';
import {
  type FeatureRecord,
  type FeatureRef,
  finalOf,
  oldValueOf,
  refKey,
  targetOf,
  type Use,
} from './model.js';
import { ObjectsApi } from './objects.js';
import {
  type FeatureSpec,
  type TaskContext,
  type TaskOutcome,
  type TaskStores,
  type TaskStoresOf,
  tasksOf,
  type UsesPort,
} from './spec.js';
import type { FeatureStore, FeatureView } from './store.js';
import { runTask } from './tasks.js';

export interface StepMark {
  cluster: string;
  feature: string;
  step:
    | 'announced'
    | 'default'
    | 'started'
    | 'reversed'
    | 'finished'
    | 'claimed'
    | 'performed'
    | 'stored'
    /** A cluster write's fence held; the write is about to be sent (onFence only). */
    | 'fenced';
  task?: string;
}

export type FeatureMetric =
  | 'FeatureTransitionsStarted'
  | 'FeatureTransitionsReversed'
  | 'FeatureTransitionsCompleted'
  | 'FeatureTasksDone'
  | 'FeatureTasksWaiting'
  | 'FeatureTasksFailed'
  | 'FeatureStepConflicts'
  | 'FeatureClaimsLost'
  | 'FeatureTransitionsStuck'
  | 'FeatureMirrorErrors'
  | 'FeatureReconcileErrors';

export interface ReconcilerPorts {
  store: FeatureStore;
  catalog: FeatureCatalog;
  /** A client for the cluster; throws when it cannot be reached. */
  connect(cluster: string): Promise<ClusterClient>;
  /** What a task writes besides its record and the cluster, fenced to its claim. */
  tasks: TaskStores;
  publish?(events: OutgoingEvent[]): Promise<void>;
  now(): number;
  /** Names this reconciler in its claims (one per invocation). */
  id: string;
  leaseMs?: number;
  /** Called after every stored step and after each task is performed: tests crash the reconciler here. */
  onStep?(mark: StepMark): void | Promise<void>;
  /** Called when a task's cluster write passed its fence, before it is sent: tests freeze it here. */
  onFence?(mark: StepMark): void | Promise<void>;
  /** How often (real ms) a running task's heartbeat looks at the clock to renew its claim; 0: never. */
  heartbeatMs?: number;
  warn?(message: string, fields: Record<string, unknown>): void;
  count?(metric: FeatureMetric, n: number): void;
  /** Write the records into the cluster as Feature objects (default true). */
  mirror?: boolean;
  /** Look at waiting tasks again now, not at their next poll (`features reconcile`). */
  eager?: boolean;
  /**
   * This machine's wall clock (default Date.now), against which the cluster's clock is read: a pass
   * with something to do runs on `now` moved by the cluster's skew (shared/k8s/cluster-clock.ts).
   */
  wallNow?: () => number;
}

export interface FeatureOutcome {
  feature: string;
  state: FeatureRecord['state'];
  steps: number;
  waitingFor?: string;
  error?: string;
}

const MAX_STEPS = 40;
/** A stable record is written into the cluster again after this long (someone may have edited it). */
export const MIRROR_RESYNC_MS = 60 * 60_000;
/** A cluster whose Feature objects could not be written is tried again after this long. */
export const MIRROR_RETRY_MS = 15 * 60_000;
const DEFAULT_POLL_MS = 60_000;
/** The heartbeat looks at the feature clock this often and renews a claim a third of the way through. */
const HEARTBEAT_MS = 1000;

/** One cluster's pass: every feature of the catalog, or only `only`. */
export async function reconcileCluster(
  given: ReconcilerPorts,
  cluster: string,
  only?: FeatureRef,
): Promise<FeatureOutcome[]> {
  const access = clusterOf(given, cluster);
  const views = await given.store.clusterViews(cluster);
  const specs = only ? [given.catalog.need(only)] : given.catalog.specs;
  const p = await onClusterTime(given, access, specs, views);
  const outcomes: FeatureOutcome[] = [];
  for (const spec of specs) {
    const view = views.get(refKey(spec)) ?? { uses: [] };
    outcomes.push(
      await isolated(p, cluster, spec, view, () => reconcileFeature(p, access, cluster, spec, view)),
    );
  }
  if (p.mirror !== false) await mirrorCluster(p, access, cluster, specs, views, outcomes);
  return outcomes;
}

/**
 * The ports on the cluster's clock: every wait, claim, deadline and time stored by the pass is the
 * cluster's (its API server's Date, against this machine's wall clock), so a caller whose clock is off
 * (`features reconcile` from a laptop) neither ends a wait early nor writes times from its future. A
 * pass with nothing to do reads no clock of the cluster (and makes no request); one that cannot reach
 * it keeps its own (its tasks fail on the connection anyway).
 */
async function onClusterTime(
  p: ReconcilerPorts,
  access: Access,
  specs: readonly FeatureSpec[],
  views: Map<string, FeatureView>,
): Promise<ReconcilerPorts> {
  const work = specs.some((s) => {
    const r = views.get(refKey(s))?.record;
    return !r || r.tasks.length > 0 || r.default !== s.default || r.state !== finalOf(targetOf(r));
  });
  if (!work) return p;
  let skew = 0;
  try {
    skew = await clusterSkew(await access.client(), p.wallNow ?? Date.now);
  } catch {
    return p;
  }
  if (skew === 0) return p;
  p.warn?.("this machine's clock is off the cluster's: the pass runs on the cluster's", {
    skewMs: skew,
  });
  const now = p.now;
  return { ...p, now: () => now() + skew };
}

/** Errors thrown by onStep (tests crash a pass there): never isolated to one feature. */
const CRASHES = new WeakSet<object>();

/**
 * One feature's steps, whose failure (its record refused by DynamoDB, a bug) is that feature's outcome
 * and never stops the features after it in the catalog, nor the mirror.
 */
async function isolated(
  p: ReconcilerPorts,
  cluster: string,
  spec: FeatureSpec,
  view: FeatureView,
  run: () => Promise<FeatureOutcome>,
): Promise<FeatureOutcome> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof Object && CRASHES.has(err)) throw err;
    const error = String((err as Error)?.message ?? err).slice(0, 512);
    p.count?.('FeatureReconcileErrors', 1);
    p.warn?.('a feature could not be reconciled; the others go on', {
      cluster,
      feature: refKey(spec),
      error,
    });
    return { feature: refKey(spec), state: view.record?.state ?? 'Off', steps: 0, error };
  }
}

/** The cluster's client and objects, connected on first use and shared by every task of the pass. */
function clusterOf(p: ReconcilerPorts, cluster: string) {
  let client: Promise<ClusterClient> | undefined;
  let objects: Promise<ObjectsApi> | undefined;
  const connect = () => {
    client ??= p.connect(cluster);
    client.catch(() => {
      client = undefined; // the next task tries again
      objects = undefined;
    });
    return client;
  };
  return {
    client: connect,
    objects: () => {
      objects ??= connect().then((c) => new ObjectsApi(c));
      return objects;
    },
  };
}
type Access = ReturnType<typeof clusterOf>;

async function reconcileFeature(
  p: ReconcilerPorts,
  access: Access,
  cluster: string,
  spec: FeatureSpec,
  view: FeatureView,
): Promise<FeatureOutcome> {
  const key = refKey(spec);
  let record = view.record ?? (await announce(p, cluster, spec));
  let steps = 0;
  for (; steps < MAX_STEPS; steps++) {
    // A new fleetscope (or a re-registered file) may change a feature's default: adopted first, then
    // the state machine sees the new target.
    const step: Step | 'default' =
      record.default !== spec.default
        ? 'default'
        : nextStep(record, p.now(), {
            eager: p.eager === true && steps === 0,
            deadlineMs: taskDeadlineMs(spec),
          });
    if (step !== 'default' && (step.kind === 'idle' || step.kind === 'later')) break;
    const result =
      step === 'default'
        ? await adoptDefault(p, spec, record)
        : step.kind === 'perform'
          ? await perform(p, access, spec, record)
          : step.kind === 'stuck'
            ? await markStuck(p, access, record, step.reason)
            : await transition(p, spec, record, step);
    record = result ?? (await p.store.get(cluster, spec))!;
  }
  const first = record.tasks[0];
  return {
    feature: key,
    state: record.state,
    steps,
    ...(first?.waitingFor ? { waitingFor: first.waitingFor } : {}),
    ...(first?.lastError ? { error: first.lastError } : {}),
  };
}

async function announce(p: ReconcilerPorts, cluster: string, spec: FeatureSpec): Promise<FeatureRecord> {
  const record = announced(cluster, spec, (to) => tasksOf(spec, to), p.now());
  if (!(await p.store.create(record))) return (await p.store.get(cluster, spec))!;
  if (record.transition) {
    await publish(p, [transitionEvent(record, 'started')]);
    p.count?.('FeatureTransitionsStarted', 1);
  }
  await mark(p, record, 'announced');
  return record;
}

async function adoptDefault(p: ReconcilerPorts, spec: FeatureSpec, record: FeatureRecord) {
  const next = withDefault(record, spec.default, p.now());
  if (!(await save(p, next, record))) return undefined;
  await mark(p, next, 'default');
  return next;
}

/** A step that is one write: start, reverse, finish. Returns undefined on a lost race. */
async function transition(
  p: ReconcilerPorts,
  spec: FeatureSpec,
  record: FeatureRecord,
  step: Extract<Step, { kind: 'start' | 'reverse' | 'finish' }>,
): Promise<FeatureRecord | undefined> {
  const now = p.now();
  const [next, phase, name]: [FeatureRecord, 'started' | 'reversed' | 'completed', StepMark['step']] =
    step.kind === 'start'
      ? [started(record, step.to, tasksOf(spec, step.to), reasonOf(record), now), 'started', 'started']
      : step.kind === 'reverse'
        ? [reversed(record, step.to, tasksOf(spec, step.to), now), 'reversed', 'reversed']
        : [finished(record, now), 'completed', 'finished'];
  if (!(await save(p, next, record))) return undefined;
  await publish(p, [transitionEvent(next, phase)]);
  p.count?.(
    phase === 'started'
      ? 'FeatureTransitionsStarted'
      : phase === 'reversed'
        ? 'FeatureTransitionsReversed'
        : 'FeatureTransitionsCompleted',
    1,
  );
  await mark(p, next, name);
  return next;
}

/**
 * A task past its deadline: the transition is marked stuck with the reason (one write), announced
 * (FeatureTransitionChanged phase stuck, the FeatureTransitionsStuck metric, a Warning Event on the
 * Feature object in the cluster), and shown by `features list` until the task is done or an operator
 * retries, skips or abandons it. The reconciler keeps trying it meanwhile.
 */
async function markStuck(p: ReconcilerPorts, access: Access, record: FeatureRecord, reason: string) {
  const next = stuckMarked(record, reason, p.now());
  if (!(await save(p, next, record))) return undefined;
  p.count?.('FeatureTransitionsStuck', 1);
  p.warn?.('a feature transition is stuck', { cluster: record.cluster, feature: refKey(record), reason });
  await publish(p, [transitionEvent(next, 'stuck', reason)]);
  try {
    await new FeatureMirror(await access.objects()).recordEvent(next, 'TransitionStuck', reason, p.now());
  } catch (err) {
    // Visibility only, like the mirror: the record, the bus event and the metric say it already.
    p.warn?.('could not record the stuck transition as an Event', { error: String(err).slice(0, 256) });
  }
  return next;
}

async function save(p: ReconcilerPorts, next: FeatureRecord, read: FeatureRecord): Promise<boolean> {
  const ok = await p.store.save(next, read.version);
  if (!ok) p.count?.('FeatureStepConflicts', 1);
  return ok;
}

/**
 * Claims the first task, performs it under its claim (renewed by a heartbeat; every cluster write fenced
 * to it and counted in the record as it is made: ./claim-fence.ts), and stores its outcome on a fresh
 * read, as long as the claim is still ours. A claim lost meanwhile stores nothing: the holder's is what
 * counts, and this attempt's writes are already in the record.
 */
async function perform(
  p: ReconcilerPorts,
  access: Access,
  spec: FeatureSpec,
  record: FeatureRecord,
): Promise<FeatureRecord | undefined> {
  const leaseMs = p.leaseMs ?? CLAIM_MS;
  const mine = claimed(record, p.id, p.now(), leaseMs);
  if (!(await save(p, mine, record))) return undefined;
  const task = mine.tasks[0]!;
  await mark(p, mine, 'claimed', task.title);

  const fence = new ClaimFence(
    {
      store: p.store,
      now: p.now,
      leaseMs,
      heartbeatMs: p.heartbeatMs ?? HEARTBEAT_MS,
      ...(p.onFence ? { onFenced: () => p.onFence!(stepMark(mine, 'fenced', task.title)) } : {}),
    },
    mine,
  ).start();
  let outcome: TaskOutcome | undefined;
  let error: string | undefined;
  try {
    const stores = p.tasks.fenced((operation) => fence.before(operation));
    const ctx = taskContext(p, stores, access, spec, mine, p.now(), (n) => fence.wrote(n));
    outcome = await withWriteGuard(fence, () => runTask(spec, task.spec, ctx));
  } catch (err) {
    error = err instanceof Error ? err.message : String(err);
  } finally {
    await fence.stop();
  }
  await mark(p, mine, 'performed', task.title);
  return storeOutcome(p, mine, fence.lost, { error, outcome });
}

/** Stores a performed task's outcome while its claim holds; undefined when it was lost. */
async function storeOutcome(
  p: ReconcilerPorts,
  mine: FeatureRecord,
  lost: boolean,
  r: { error: string | undefined; outcome: TaskOutcome | undefined },
): Promise<FeatureRecord | undefined> {
  const token = mine.tasks[0]!.claim!.token;
  for (;;) {
    // Fresh: the heartbeat and the counted writes changed the record since the claim.
    const current = lost ? undefined : await p.store.get(mine.cluster, mine);
    if (!current || !holds(current, token)) {
      p.count?.('FeatureClaimsLost', 1);
      p.warn?.('a task outlived its claim; another reconciler holds it', {
        cluster: mine.cluster,
        feature: refKey(mine),
        task: mine.tasks[0]!.title,
      });
      return undefined;
    }
    const now = p.now();
    const next = r.error
      ? taskFailed(current, r.error, 0, now)
      : r.outcome!.done
        ? taskDone(current, 0, now)
        : taskWaiting(current, r.outcome!, 0, DEFAULT_POLL_MS, now);
    if (await save(p, next, current)) {
      await reportTask(p, current, next, { ...r, writes: current.tasks[0]!.writes });
      await mark(p, next, 'stored', current.tasks[0]!.title);
      return next;
    }
  }
}

function taskContext(
  p: ReconcilerPorts,
  stores: TaskStoresOf,
  access: Access,
  spec: FeatureSpec,
  record: FeatureRecord,
  now: number,
  wrote: (n: number) => void,
): TaskContext {
  const to = record.transition!.to;
  return {
    cluster: record.cluster,
    feature: { namespace: record.namespace, name: record.name },
    to,
    old: oldValueOf(to),
    now,
    options: record.options ?? {},
    progress: record.tasks[0]?.progress,
    client: access.client,
    objects: access.objects,
    wrote,
    features: p.store,
    ...stores,
    uses: usesPort(p, access, record),
    usesWaitSeconds: spec.usesWaitSeconds,
  };
}

/**
 * The uses fleetscope's workers stored and those in-cluster components wrote into the Feature object.
 * A clearing issues the next epoch in the record (fenced to the task's claim), then forgets the uses
 * that do not echo it, in DynamoDB and in the Feature status (which publishes the epoch).
 */
function usesPort(p: ReconcilerPorts, access: Access, ref: FeatureRecord): UsesPort {
  const inCluster = async () => new FeatureMirror(await access.objects());
  const stored = async () => (await p.store.view(ref.cluster, ref)).uses;
  const observe = async () => {
    const view = await p.store.view(ref.cluster, ref);
    const seen = await (await inCluster()).observeUses(ref);
    const uses = [...view.uses, ...seen.uses];
    if (seen.uid) return { uses, objectUid: seen.uid };
    // Written once (the mirror's marker names a version) and not there now: someone deleted it.
    if (view.mirror && view.mirror.version > 0)
      return {
        uses,
        missing: `the Feature object ${refKey(ref)} is gone from the cluster (deleted?): in-cluster components' uses cannot be read until it is written again`,
      };
    return { uses };
  };
  return {
    list: async (): Promise<Use[]> => (await observe()).uses,
    observe,
    // The in-cluster clear's writes are counted by the task's fence; DynamoDB's are returned.
    clear: async () => {
      const token = ref.tasks[0]?.claim?.token ?? '';
      const epoch = await p.store.issueEpoch(ref.cluster, ref, token, ref.usesEpoch, p.now());
      if (epoch === 'fenced')
        throw new Error(`the claim on "${ref.tasks[0]?.title}" was lost: no uses epoch issued`);
      const cleared = await p.store.clearUses(ref.cluster, ref, await stored(), epoch);
      await (await inCluster()).clearUses(ref, epoch);
      return { epoch, writes: cleared + 1 };
    },
    published: async (epoch) => (await inCluster()).publishEpoch(ref, epoch),
  };
}

async function reportTask(
  p: ReconcilerPorts,
  before: FeatureRecord,
  after: FeatureRecord,
  r: { error: string | undefined; outcome: TaskOutcome | undefined; writes: number },
): Promise<void> {
  const task = before.tasks[0]!;
  const outcome = r.error ? 'failed' : r.outcome?.done ? 'done' : 'waiting';
  p.count?.(
    outcome === 'failed'
      ? 'FeatureTasksFailed'
      : outcome === 'done'
        ? 'FeatureTasksDone'
        : 'FeatureTasksWaiting',
    1,
  );
  const events: OutgoingEvent[] = [];
  // A wait is announced when it starts waiting or its reason changes, not at every look.
  const next = after.tasks[0];
  if (outcome !== 'waiting' || next?.waitingFor !== task.waitingFor)
    events.push(taskEvent(before, after, outcome, r.writes));
  if (after.state !== before.state) events.push(transitionEvent(after, 'completed'));
  if (after.state !== before.state) p.count?.('FeatureTransitionsCompleted', 1);
  await publish(p, events);
}

async function publish(p: ReconcilerPorts, events: OutgoingEvent[]): Promise<void> {
  if (events.length === 0 || !p.publish) return;
  // An event lost is a notice lost; the record is the truth, and the step is already stored.
  await p
    .publish(events)
    .catch((err) => p.warn?.('could not publish feature events', { error: String(err) }));
}

const stepMark = (r: FeatureRecord, step: StepMark['step'], task?: string): StepMark => ({
  cluster: r.cluster,
  feature: refKey(r),
  step,
  ...(task ? { task } : {}),
});

async function mark(p: ReconcilerPorts, r: FeatureRecord, step: StepMark['step'], task?: string) {
  try {
    await p.onStep?.(stepMark(r, step, task));
  } catch (err) {
    // A test's crash at this step: the whole pass dies, as a killed process would.
    if (err instanceof Object) CRASHES.add(err);
    throw err;
  }
}

/** Writes the records that changed (or were not written for an hour) into the cluster. */
async function mirrorCluster(
  p: ReconcilerPorts,
  access: Access,
  cluster: string,
  specs: readonly FeatureSpec[],
  before: Map<string, FeatureView>,
  outcomes: FeatureOutcome[],
): Promise<void> {
  const now = p.now();
  const due = specs.filter((s, i) => {
    const v = before.get(refKey(s));
    if (!v?.mirror || outcomes[i]!.steps > 0) return true;
    // A cluster that could not be written is tried again after a while, not at every pass.
    if (v.mirror.error) return now - v.mirror.at > MIRROR_RETRY_MS;
    return v.mirror.version !== v.record?.version || now - v.mirror.at > MIRROR_RESYNC_MS;
  });
  if (due.length === 0) return;
  const failed = async (specs: readonly FeatureSpec[], err: unknown) => {
    // Visibility only: a transition never waits on its mirror; it is written again later.
    const error = String((err as Error)?.message ?? err).slice(0, 512);
    p.count?.('FeatureMirrorErrors', 1);
    p.warn?.('could not write the Feature objects into the cluster', { cluster, error });
    for (const spec of specs)
      await p.store.putMirror(cluster, spec, {
        version: before.get(refKey(spec))?.mirror?.version ?? 0,
        at: now,
        error,
      });
  };
  let mirror: FeatureMirror;
  try {
    mirror = new FeatureMirror(await access.objects());
  } catch (err) {
    return failed(due, err);
  }
  // One feature's object that cannot be written (its namespace does not exist) is that feature's error.
  for (const spec of due) {
    try {
      const view = await p.store.view(cluster, spec);
      if (!view.record) continue;
      const dangling =
        view.record.state === 'Off'
          ? view.uses.filter((u) => u.value === 'on').map((u) => `use: ${u.component} reports on`)
          : [];
      await mirror.write(view.record, spec, view.uses, dangling);
      await p.store.putMirror(cluster, spec, { version: view.record.version, at: now });
    } catch (err) {
      await failed([spec], err);
    }
  }
}
