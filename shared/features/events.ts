/** The bus events of the server flow, built from the records before and after a step. */
import type { OutgoingEvent } from '../platform/publisher.js';
import type { FeatureRecord } from './model.js';

const iso = (ms: number) => new Date(ms).toISOString();
const resources = (r: FeatureRecord) => [`cluster/${r.cluster}`, `feature/${r.namespace}/${r.name}`];

export function transitionEvent(
  r: FeatureRecord,
  phase: 'started' | 'reversed' | 'completed' | 'stuck' | 'abandoned',
  why?: string,
): OutgoingEvent<'FeatureTransitionChanged'> {
  const t = phase === 'completed' ? r.history.at(-1) : r.transition;
  return {
    detailType: 'FeatureTransitionChanged',
    detail: {
      cluster: r.cluster,
      namespace: r.namespace,
      feature: r.name,
      phase,
      state: r.state,
      to: t?.to ?? (r.state === 'On' || r.state === 'TurningOn' ? 'On' : 'Off'),
      reason: (why ?? t?.reason ?? '').slice(0, 512),
      tasks: phase === 'completed' ? (t?.done.length ?? 0) : r.tasks.length,
      at: iso(r.updatedAt),
    },
    resources: resources(r),
  };
}

/** The first task of `before`, as `after` left it (done: gone from the list). */
export function taskEvent(
  before: FeatureRecord,
  after: FeatureRecord,
  outcome: 'done' | 'waiting' | 'failed',
  writes: number,
): OutgoingEvent<'FeatureTaskChanged'> {
  const task = before.tasks[0]!;
  const now = outcome === 'done' ? undefined : after.tasks[0];
  return {
    detailType: 'FeatureTaskChanged',
    detail: {
      cluster: before.cluster,
      namespace: before.namespace,
      feature: before.name,
      state: before.state,
      task: task.title.slice(0, 512),
      kind: task.spec.task,
      outcome,
      attempts: now?.attempts ?? task.attempts,
      writes: task.writes + writes,
      ...(now?.waitingFor && outcome === 'waiting' ? { waitingFor: now.waitingFor.slice(0, 1024) } : {}),
      ...(now?.lastError && outcome === 'failed' ? { error: now.lastError } : {}),
      ...(now?.notBefore ? { retryAt: iso(now.notBefore) } : {}),
      at: iso(after.updatedAt),
    },
    resources: resources(before),
  };
}
