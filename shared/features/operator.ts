/**
 * An operator's verbs on a transition that is stuck (finding 3 of issue 16): retry the current task
 * now, skip it, or abandon the transition (the opposite one starts). Each is one conditional write of
 * the record, recorded in the transition's history with who, when and why; each refuses, naming what,
 * an unknown task, a feature with no transition, or a task being performed right now.
 */
import { abandoned, retried, skipped } from './machine.js';
import { type FeatureRecord, inTransition, type OperatorAction, refKey } from './model.js';
import { type FeatureSpec, tasksOf } from './spec.js';
import type { FeatureStore } from './store.js';

export type Verb = OperatorAction['verb'];
export const VERBS: readonly Verb[] = ['retry', 'skip', 'abandon'];

export class OperatorError extends Error {
  override name = 'OperatorError';
}

export interface Act {
  verb: Verb;
  /** The task it is meant for (its title or kind); default: the current one. */
  task?: string;
  reason: string;
  by: string;
}

export async function actOnTransition(
  store: FeatureStore,
  spec: FeatureSpec,
  cluster: string,
  act: Act,
  now: number,
): Promise<FeatureRecord> {
  if (!act.reason.trim()) throw new OperatorError(`${act.verb} needs a reason (--reason "...")`);
  for (let attempt = 0; attempt < 5; attempt++) {
    const r = await store.get(cluster, spec);
    const next = acted(r, spec, cluster, act, now);
    if (await store.save(next, r!.version)) return next;
  }
  throw new OperatorError(`${refKey(spec)} in ${cluster} kept changing; try again`);
}

function acted(
  r: FeatureRecord | undefined,
  spec: FeatureSpec,
  cluster: string,
  act: Act,
  now: number,
): FeatureRecord {
  const what = `${refKey(spec)} in cluster ${cluster}`;
  if (!r) throw new OperatorError(`${what} has no record yet (not announced): nothing to ${act.verb}`);
  const head = r.tasks[0];
  if (!inTransition(r.state) || !r.transition || !head)
    throw new OperatorError(`${what} is ${r.state}: no transition in progress to ${act.verb}`);
  if (act.task && act.task !== head.title && act.task !== head.spec.task) {
    const later = r.tasks.slice(1).some((t) => t.title === act.task || t.spec.task === act.task);
    throw new OperatorError(
      later
        ? `--task "${act.task}" is not the current task of ${what}: tasks are performed in order, and the current one is "${head.title}"`
        : `--task "${act.task}": no such task in the transition of ${what} (its tasks: ${r.tasks.map((t) => `"${t.title}"`).join(', ')})`,
    );
  }
  if (head.claim && head.claim.until > now)
    throw new OperatorError(
      `"${head.title}" of ${what} is being performed right now (${head.claim.by}): try again once it has stored its outcome`,
    );
  const action: OperatorAction = {
    verb: act.verb,
    task: head.title,
    by: act.by,
    at: now,
    reason: act.reason,
  };
  switch (act.verb) {
    case 'retry':
      return retried(r, action, now);
    case 'skip':
      return skipped(r, action, now);
    case 'abandon':
      return abandoned(r, action, tasksOf(spec, r.transition.to === 'On' ? 'Off' : 'On'), now);
  }
}
