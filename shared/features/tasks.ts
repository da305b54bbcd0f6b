/**
 * The built-in tasks, as small adapters over the cluster (./objects.ts), the stores and the uses. Each
 * observes before it writes, so performing it again after a crash writes nothing already done, and each
 * either finishes, says what it waits for, or throws (a failure the reconciler retries with back-off).
 */
import { parseRef, type Use } from './model.js';
import { fieldAt, type KObject, removalPatch } from './objects.js';
import { OwnedObjects, type TaskObjects } from './owned.js';
import type { FeatureSpec, TaskContext, TaskOutcome } from './spec.js';
import { describeObjects, type TaskOf, type TaskSpec } from './task-kinds.js';

/** The objects a task may write: a declared feature's own only (./owned.ts), fleetscope's as they are. */
export function taskObjects(
  spec: FeatureSpec,
  ctx: Pick<TaskContext, 'objects'>,
): () => Promise<TaskObjects> {
  if (!isDeclared(spec)) return ctx.objects;
  return async () => new OwnedObjects(await ctx.objects(), spec, spec.allowKinds);
}

export const isDeclared = (spec: Pick<FeatureSpec, 'origin'>) => 'file' in spec.origin;

export async function runTask(spec: FeatureSpec, task: TaskSpec, ctx: TaskContext): Promise<TaskOutcome> {
  const objects = taskObjects(spec, ctx);
  switch (task.task) {
    case 'wait-for-uses':
      return waitForUses(task, ctx);
    case 'wait-for-no-objects':
      return waitForNoObjects(task, ctx);
    case 'clear-field':
      return clearField(task, await objects());
    case 'delete-objects':
      return deleteObjects(task, await objects());
    case 'apply-manifests':
      return applyManifests(task, await objects());
    case 'clear-state':
      return clearState(task, ctx);
    case 'wait-for-features':
      return waitForFeatures(task, ctx);
    case 'hook': {
      const hook = spec.hooks?.[task.hook];
      if (!hook) throw new Error(`feature ${spec.namespace}/${spec.name} has no hook "${task.hook}"`);
      return hook.run(ctx);
    }
  }
}

const minutes = (ms: number) => (ms >= 60_000 ? `${Math.round(ms / 60_000)}m` : `${Math.round(ms / 1000)}s`);
const at = (ms: number) => new Date(ms).toISOString();
const namesOf = (items: { metadata?: { name?: string; namespace?: string } }[]) =>
  items
    .slice(0, 5)
    .map((o) => (o.metadata?.namespace ? `${o.metadata.namespace}/` : '') + (o.metadata?.name ?? '?'))
    .join(', ') + (items.length > 5 ? `, ... (${items.length} in all)` : '');

/**
 * KEP-3920's wait for uses: clear the uses (a new epoch), wait, then done when no component reported the
 * old value echoing that epoch. A component still reporting it has its uses cleared again (another
 * epoch) and the wait starts over.
 */
async function waitForUses(t: TaskOf<'wait-for-uses'>, ctx: TaskContext): Promise<TaskOutcome> {
  const waitMs = (t.waitSeconds ?? ctx.usesWaitSeconds) * 1000;
  const clearedAt = Number(ctx.progress?.clearedAt);
  const epoch = Number(ctx.progress?.epoch);
  const objectAt = ctx.progress?.object;
  const restart = async (why: string): Promise<TaskOutcome> => {
    const cleared = await ctx.uses.clear();
    ctx.wrote(cleared.writes);
    // Which Feature object the epoch was published in: a wait that sees another one starts over.
    const { objectUid } = await ctx.uses.observe();
    return {
      done: false,
      waitingFor: `${why}uses cleared at ${at(ctx.now)} (epoch ${cleared.epoch}); waiting ${minutes(waitMs)} for components to report`,
      progress: { clearedAt: ctx.now, epoch: cleared.epoch, ...(objectUid ? { object: objectUid } : {}) },
      pollMs: waitMs,
    };
  };
  // A wait begun before epochs (an upgrade mid-transition) starts over with one.
  if (!Number.isFinite(clearedAt) || !Number.isFinite(epoch)) return restart('');
  await ctx.uses.published(epoch);
  if (ctx.now < clearedAt + waitMs)
    return {
      done: false,
      waitingFor: `uses cleared at ${at(clearedAt)} (epoch ${epoch}); ${minutes(clearedAt + waitMs - ctx.now)} left before checking`,
      progress: ctx.progress!,
      pollMs: clearedAt + waitMs - ctx.now,
    };
  // The control plane's clock times the wait; whether a use is since the clearing is its epoch, never
  // the time a component wrote (its clock may be anywhere). A wait never ends on the absence of what it
  // reads: a Feature object deleted (or deleted and written again) since the clearing starts it over.
  const seen = await ctx.uses.observe();
  if (seen.missing) return restart(`${seen.missing}; `);
  if (objectAt !== undefined && seen.objectUid !== objectAt)
    return restart('the Feature object was replaced since the clearing (its uses went with it); ');
  const stale = seen.uses.filter((u: Use) => u.epoch === epoch && u.value === ctx.old);
  if (stale.length === 0) return { done: true };
  return restart(
    `still reporting "${ctx.old}": ${stale.map((u) => `${u.component} (its time ${at(u.at)})`).join(', ')}; `,
  );
}

/** A feature's requirements On before it turns on; its dependants Off before it turns off (requires). */
async function waitForFeatures(t: TaskOf<'wait-for-features'>, ctx: TaskContext): Promise<TaskOutcome> {
  const states = await Promise.all(
    t.features.map(async (f) => ({
      f,
      state: (await ctx.features.get(ctx.cluster, parseRef(f)))?.state ?? 'Off',
    })),
  );
  const behind = states.filter((s) => s.state !== t.state);
  if (behind.length === 0) return { done: true };
  const why = t.state === 'On' ? 'it requires them' : 'they require this feature: turn them off first';
  return {
    done: false,
    waitingFor: `${behind.map((b) => `${b.f} (${b.state})`).join(', ')} to be ${t.state} (${why})`,
    pollMs: 60_000,
  };
}

/** Never deletes: the objects are someone's to remove (the KEP's volume-type story). */
async function waitForNoObjects(t: TaskOf<'wait-for-no-objects'>, ctx: TaskContext): Promise<TaskOutcome> {
  const left = await (await ctx.objects()).list(t);
  if (left.length === 0) return { done: true };
  return {
    done: false,
    waitingFor: `${left.length} ${describeObjects(t)} left: ${namesOf(left)} (fleetscope does not delete them; the transition goes on once they are gone)`,
    pollMs: 60_000,
  };
}

async function clearField(t: TaskOf<'clear-field'>, api: TaskObjects): Promise<TaskOutcome> {
  const having = (await api.list(t)).filter((o) => fieldAt(o, t.field) !== undefined);
  const patchOf = (o: KObject) => (fieldAt(o, t.field) === undefined ? undefined : removalPatch(t.field));
  for (const o of having) await api.patchAsRead(t, o, patchOf, t.subresource);
  return { done: true };
}

async function deleteObjects(t: TaskOf<'delete-objects'>, api: TaskObjects): Promise<TaskOutcome> {
  for (const o of await api.list(t)) await api.delete(t, o);
  return { done: true };
}

async function applyManifests(t: TaskOf<'apply-manifests'>, api: TaskObjects): Promise<TaskOutcome> {
  for (const m of t.manifests) await api.apply(m);
  return { done: true };
}

/**
 * Deletes the cluster's items under the prefixes; or, when the operator asked to keep state and the
 * task allows it, gives them a TTL of `keepDays` instead (marked keptUntil: kept on purpose, not left).
 */
async function clearState(t: TaskOf<'clear-state'>, ctx: TaskContext): Promise<TaskOutcome> {
  const keepUntil = ctx.options.keepState && t.keepDays ? ctx.now + t.keepDays * 86_400_000 : undefined;
  for (const prefix of t.prefixes) await ctx.state.clear(ctx.cluster, prefix, keepUntil, () => ctx.wrote(1));
  return { done: true };
}
