/**
 * The server flow's state machine (KEP-3920, "Server flow"), pure: given a Feature record and the time,
 * what the next step is; and each step as a new record. The reconciler stores every new record with a
 * conditional write on the version it read, so two reconcilers never both take a step, and a crash
 * between two steps leaves the last stored one to resume from.
 *
 *   stable, target differs       -> start: TurningOn/TurningOff with the transition's task list
 *   transitional, target flipped -> reverse: the opposite transition starts (not left half done)
 *   first task due, unclaimed    -> claim it (one reconciler), perform it, then store its outcome:
 *                                   done (removed; the last one sets the final state), waiting, failed
 */
import {
  type DesiredOptions,
  type FeatureRecord,
  type Final,
  finalOf,
  HISTORY_LIMIT,
  inTransition,
  type OperatorAction,
  type TaskRecord,
  type TaskSummary,
  type Transition,
  targetOf,
  turningTo,
  type Value,
} from './model.js';
import { type TaskSpec, titleOf } from './task-kinds.js';

export type Step =
  | { kind: 'idle' }
  | { kind: 'start'; to: Final }
  | { kind: 'reverse'; to: Final }
  | { kind: 'perform'; task: TaskRecord }
  | { kind: 'finish' }
  /** The first task is past its deadline: the transition is marked stuck (and goes on trying). */
  | { kind: 'stuck'; reason: string }
  /** Nothing to do before `until`: another reconciler holds the task, or it is backing off or polling. */
  | { kind: 'later'; until: number; why: string };

/** How long a claim on a task holds: longer than any reconciler invocation runs. */
export const CLAIM_MS = 5 * 60_000;
/**
 * How long a task may take (from when it became first) before the transition is shown as stuck, unless
 * its feature declares its own (`taskDeadlineMinutes`: a wait for people's data may need days).
 */
export const TASK_DEADLINE_MS = 60 * 60_000;

/** The task deadline of a feature: its declared one, or the default. */
export const taskDeadlineMs = (spec: { taskDeadlineMinutes?: number }): number =>
  spec.taskDeadlineMinutes !== undefined ? spec.taskDeadlineMinutes * 60_000 : TASK_DEADLINE_MS;
const BACKOFF_BASE_MS = 30_000;
const BACKOFF_MAX_MS = 30 * 60_000;

/** Back-off after the n-th failed attempt: 30 s, 1 min, 2 min, ... at most 30 min. */
export const backoffMs = (attempts: number): number =>
  Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, attempts - 1));

const headingOf = (r: FeatureRecord): Final => (r.state === 'TurningOn' ? 'On' : 'Off');
const liveClaim = (t: TaskRecord | undefined, now: number) =>
  t?.claim && t.claim.until > now ? t.claim : undefined;

/**
 * `eager`: look again at a waiting task now rather than at its next poll (an operator asked); a wait's
 * own window (a wait for uses) is kept by the task itself, and a failure's back-off is always kept.
 */
export function nextStep(
  r: FeatureRecord,
  now: number,
  opts: { eager?: boolean; deadlineMs?: number } = {},
): Step {
  const deadlineMs = opts.deadlineMs ?? TASK_DEADLINE_MS;
  const target = finalOf(targetOf(r));
  if (!inTransition(r.state)) return r.state === target ? { kind: 'idle' } : { kind: 'start', to: target };
  const first = r.tasks[0];
  const claim = liveClaim(first, now);
  if (headingOf(r) !== target)
    // A task being performed finishes first: reversing under it would undo and redo at the same time.
    return claim
      ? { kind: 'later', until: claim.until, why: `reversal waits for "${first!.title}" in progress` }
      : { kind: 'reverse', to: target };
  if (!first) return { kind: 'finish' };
  if (claim) return { kind: 'later', until: claim.until, why: `"${first.title}" in progress (${claim.by})` };
  if (!first.stuck && now >= deadlineOf(first, r, deadlineMs))
    return { kind: 'stuck', reason: stuckReason(first, deadlineMs) };
  const polled = opts.eager && first.waitingFor !== undefined && first.lastError === undefined;
  if (first.notBefore !== undefined && first.notBefore > now && !polled)
    return {
      kind: 'later',
      until: first.notBefore,
      why: first.waitingFor ?? `retry of "${first.title}" after: ${first.lastError ?? 'a failure'}`,
    };
  return { kind: 'perform', task: first };
}

/** When the task should be done by: its deadline runs from when it became first (or was retried). */
export const deadlineOf = (t: TaskRecord, r: FeatureRecord, deadlineMs = TASK_DEADLINE_MS): number =>
  (t.since ?? t.startedAt ?? r.transition?.startedAt ?? r.updatedAt) + deadlineMs;

function stuckReason(t: TaskRecord, deadlineMs: number): string {
  const past = `"${t.title}" not done after ${deadlineMs / 60_000} minutes`;
  if (t.lastError) return `${past}: failing (${t.attempts} attempts): ${t.lastError}`;
  if (t.waitingFor) return `${past}: still waiting for ${t.waitingFor}`;
  return past;
}

/** The first task is marked stuck with its reason (shown; the reconciler keeps trying it). */
export const stuckMarked = (r: FeatureRecord, reason: string, now: number): FeatureRecord =>
  replaceFirst(r, now, (t) => ({ ...t, stuck: { at: now, reason } }));

const bump = (r: FeatureRecord, now: number, change: Partial<FeatureRecord>): FeatureRecord => ({
  ...r,
  ...change,
  version: r.version + 1,
  updatedAt: now,
});

const taskRecord = (spec: TaskSpec): TaskRecord => ({ spec, title: titleOf(spec), attempts: 0, writes: 0 });

const withHistory = (r: FeatureRecord, t: Transition): Transition[] =>
  [...r.history, t].slice(-HISTORY_LIMIT);

type Announced = { namespace: string; name: string; default: Value };

/** A feature the cluster has never had, as it stands before anything is done: Off. */
export function blank(cluster: string, spec: Announced, now: number): FeatureRecord {
  return {
    cluster,
    namespace: spec.namespace,
    name: spec.name,
    default: spec.default,
    state: 'Off',
    tasks: [],
    history: [],
    version: 0,
    updatedAt: now,
  };
}

/** A record for a feature the cluster has never had: Off, then at once heading for its default. */
export function announced(
  cluster: string,
  spec: Announced,
  tasksFor: (to: Final) => TaskSpec[],
  now: number,
): FeatureRecord {
  const off = blank(cluster, spec, now);
  return spec.default === 'on' ? started(off, 'On', tasksFor('On'), 'announced, default on', now) : off;
}

export function started(r: FeatureRecord, to: Final, tasks: TaskSpec[], reason: string, now: number) {
  return bump(r, now, {
    state: turningTo(to),
    tasks: tasks.map(taskRecord).map((t, i) => (i === 0 ? { ...t, since: now } : t)),
    transition: { to, startedAt: now, reason, done: [] },
  });
}

/** Why a transition starts, in words. */
export function reasonOf(r: FeatureRecord): string {
  return r.desired
    ? `desired ${r.desired}${r.desiredBy ? ` (set by ${r.desiredBy})` : ''}`
    : `default ${r.default}`;
}

/** The transition in progress is closed as reversed and the opposite one starts from where it stands. */
export function reversed(r: FeatureRecord, to: Final, tasks: TaskSpec[], now: number): FeatureRecord {
  const closed: Transition | undefined = r.transition && {
    ...r.transition,
    endedAt: now,
    outcome: 'reversed',
  };
  const next = started(r, to, tasks, `reverses ${r.state}: ${reasonOf(r)}`, now);
  return { ...next, history: closed ? withHistory(r, closed) : r.history };
}

export function claimed(r: FeatureRecord, by: string, now: number, leaseMs = CLAIM_MS): FeatureRecord {
  const [first, ...rest] = r.tasks;
  if (!first) return r;
  const task: TaskRecord = {
    ...first,
    claim: { by, until: now + leaseMs, token: `${by}@${r.version + 1}` },
    startedAt: first.startedAt ?? now,
  };
  return bump(r, now, { tasks: [task, ...rest] });
}

/** Whether the claim `token` still holds the first task (its outcome may be stored). */
export const holds = (r: FeatureRecord, token: string): boolean => r.tasks[0]?.claim?.token === token;

/** The first task is done: removed; the last one also sets the final state. */
export function taskDone(r: FeatureRecord, writes: number, now: number): FeatureRecord {
  const [first, ...rest] = r.tasks;
  if (!first || !r.transition) return r;
  const summary = {
    title: first.title,
    task: first.spec.task,
    attempts: first.attempts,
    writes: first.writes + writes,
    doneAt: now,
  };
  const transition: Transition = { ...r.transition, done: [...r.transition.done, summary] };
  return rest.length === 0
    ? ended({ ...r, transition }, now)
    : bump(r, now, { tasks: [{ ...rest[0]!, since: now }, ...rest.slice(1)], transition });
}

function ended(r: FeatureRecord, now: number): FeatureRecord {
  const t = r.transition!;
  const done: Transition = { ...t, endedAt: now, outcome: 'completed' };
  const { transition: _t, ...rest } = r;
  return bump(rest as FeatureRecord, now, { state: t.to, tasks: [], history: withHistory(r, done) });
}

/** A transition whose task list is already empty (all done before a crash) ends in its final state. */
export const finished = (r: FeatureRecord, now: number): FeatureRecord => (r.transition ? ended(r, now) : r);

export function taskWaiting(
  r: FeatureRecord,
  outcome: { waitingFor: string; progress?: Record<string, number | string>; pollMs?: number },
  writes: number,
  defaultPollMs: number,
  now: number,
): FeatureRecord {
  return replaceFirst(r, now, (t) => ({
    ...t,
    waitingFor: outcome.waitingFor,
    notBefore: now + (outcome.pollMs ?? defaultPollMs),
    writes: t.writes + writes,
    ...(outcome.progress ? { progress: outcome.progress } : {}),
  }));
}

/** A failed attempt: counted, shown with its error, retried after a back-off; never skipped. */
export function taskFailed(r: FeatureRecord, error: string, writes: number, now: number): FeatureRecord {
  return replaceFirst(r, now, (t) => ({
    ...t,
    attempts: t.attempts + 1,
    lastError: error.slice(0, 1024),
    failedAt: now,
    notBefore: now + backoffMs(t.attempts + 1),
    writes: t.writes + writes,
  }));
}

function replaceFirst(r: FeatureRecord, now: number, f: (t: TaskRecord) => TaskRecord): FeatureRecord {
  const [first, ...rest] = r.tasks;
  if (!first) return r;
  const { claim: _c, ...unclaimed } = first;
  return bump(r, now, { tasks: [f(unclaimed), ...rest] });
}

/** An operator's verb recorded in the transition in progress. */
const withAction = (t: Transition, a: OperatorAction): Transition => ({
  ...t,
  actions: [...(t.actions ?? []), a],
});

/** retry: the first task is looked at again now, its back-off and deadline starting over. */
export function retried(r: FeatureRecord, a: OperatorAction, now: number): FeatureRecord {
  const next = replaceFirst(r, now, (t) => {
    const { notBefore: _n, stuck: _s, ...rest } = t;
    return { ...rest, since: now };
  });
  return { ...next, transition: withAction(r.transition!, a) };
}

/** skip: the first task is recorded as skipped, not performed; the transition goes on with the next. */
export function skipped(r: FeatureRecord, a: OperatorAction, now: number): FeatureRecord {
  const first = r.tasks[0]!;
  const summary: TaskSummary = {
    title: first.title,
    task: first.spec.task,
    attempts: first.attempts,
    writes: first.writes,
    doneAt: now,
    skipped: true,
  };
  return withSummary(taskDone({ ...r, transition: withAction(r.transition!, a) }, 0, now), summary);
}

/** Replaces the summary taskDone just added (the last done task, in progress or in history) by `s`. */
function withSummary(r: FeatureRecord, s: TaskSummary): FeatureRecord {
  const fix = (t: Transition): Transition => ({ ...t, done: [...t.done.slice(0, -1), s] });
  if (r.transition) return { ...r, transition: fix(r.transition) };
  return { ...r, history: [...r.history.slice(0, -1), fix(r.history.at(-1)!)] };
}

/**
 * abandon: the transition is given up and closed as abandoned; the operator's desired value becomes the
 * value it came from, and the opposite transition starts from where the cluster stands.
 */
export function abandoned(
  r: FeatureRecord,
  a: OperatorAction,
  tasks: TaskSpec[],
  now: number,
): FeatureRecord {
  const to: Final = r.transition!.to === 'On' ? 'Off' : 'On';
  const back = withDesired(r, to === 'On' ? 'on' : 'off', a.by, r.options ?? {}, now);
  const closed: Transition = { ...withAction(r.transition!, a), endedAt: now, outcome: 'abandoned' };
  const next = started(back, to, tasks, `abandoned ${r.state} by ${a.by}: ${a.reason}`, now);
  return { ...next, version: r.version + 1, history: withHistory(r, closed) };
}

/** The feature's default as this fleetscope (or the latest registration) declares it. */
export const withDefault = (r: FeatureRecord, value: Value, now: number): FeatureRecord =>
  bump(r, now, { default: value });

/** The operator's desired value (undefined: back to the default). */
export function withDesired(
  r: FeatureRecord,
  desired: Value | undefined,
  by: string,
  options: DesiredOptions,
  now: number,
): FeatureRecord {
  const { desired: _d, desiredBy: _b, desiredAt: _a, options: _o, ...rest } = r;
  return bump(rest as FeatureRecord, now, {
    ...(desired ? { desired } : {}),
    desiredBy: by,
    desiredAt: now,
    ...(Object.keys(options).length ? { options } : {}),
  });
}

/**
 * What a component may do, from the record alone (the client flow's rule): On -> on; TurningOn -> on
 * once only waits for uses are left (what the feature needs is in place); Off, TurningOff -> off; no
 * record yet -> the default.
 */
export function valueFor(record: FeatureRecord | undefined, fallback: Value): Value {
  if (!record) return fallback;
  if (record.state === 'On') return 'on';
  if (record.state === 'TurningOn')
    return record.tasks.every((t) => t.spec.task === 'wait-for-uses') ? 'on' : 'off';
  // Turning off, held until the features that require it are off: nothing is stopped yet, they still use it.
  if (record.state === 'TurningOff' && record.tasks[0]?.spec.task === 'wait-for-features') return 'on';
  return 'off';
}
