/**
 * In-place resizes: no resize request sent twice (a request the apiserver accepted that asked for what
 * the pod had already been asked: a resend after a kill, or a racing runtime's copy), and none stuck
 * (at the end, every pod whose desired resources differ from what it runs is Deferred or Infeasible,
 * and fleetscope's resize records know it).
 */
import { dsKeyOf } from '../../shared/nodescope/store.js';
import { DynamoNodeScopeStore } from '../../shared/nodescope/store-dynamo.js';
import type { ResizeRequest } from '../records.js';
import type { Invariant, Outcome } from '../types.js';
import { isBalloon } from './evictions.js';

export function judgeResends(requests: ResizeRequest[]): Outcome {
  const accepted = requests.filter((r) => r.status >= 200 && r.status < 300);
  const violations = accepted
    .filter((r) => r.before === r.after)
    .map((r) => `${r.cluster} ${r.namespace}/${r.pod}: resize to what it already had (${r.after})`);
  return { checked: accepted.length, unit: 'accepted resizes', violations };
}

export interface PodResizeView {
  cluster: string;
  pod: string;
  podUid: string;
  daemonSet?: string;
  /** Desired (spec) and running (status) requests, JSON. */
  desired: string;
  running: string;
  /** PodResizePending reason (Deferred, Infeasible) or PodResizeInProgress. */
  condition?: string;
}

export function judgeStuck(pods: PodResizeView[], recorded: Set<string>): Outcome {
  const violations: string[] = [];
  for (const p of pods) {
    if (p.desired === p.running && p.condition !== 'InProgress') continue;
    const known = recorded.has(p.podUid);
    if ((p.condition === 'Deferred' || p.condition === 'Infeasible') && known) continue;
    violations.push(
      `${p.cluster} ${p.pod}: wants ${p.desired}, runs ${p.running} (${p.condition ?? 'no condition'}${known ? '' : ', no resize record'})`,
    );
  }
  return { checked: pods.length, unit: 'pods', violations };
}

// biome-ignore lint/suspicious/noExplicitAny: pod objects as the simulator stores them
type Pod = any;
const requestsOf = (list: Pod[] | undefined) =>
  JSON.stringify((list ?? []).map((c: Pod) => [c.name, c.resources?.requests ?? {}]));

export function podResizeView(cluster: string, pod: Pod): PodResizeView {
  const conds: Pod[] = pod.status?.conditions ?? [];
  const pending = conds.find((c) => c.type === 'PodResizePending' && c.status === 'True');
  const progress = conds.find((c) => c.type === 'PodResizeInProgress' && c.status === 'True');
  return {
    cluster,
    pod: `${pod.metadata.namespace}/${pod.metadata.name}`,
    podUid: pod.metadata.uid,
    daemonSet: pod.metadata.ownerReferences?.find((o: Pod) => o.kind === 'DaemonSet')?.name,
    desired: requestsOf(pod.spec?.containers),
    running: requestsOf(pod.status?.containerStatuses),
    condition: pending?.reason ?? (progress ? 'InProgress' : undefined),
  };
}

/** Node scope's resizes (the balloons' are judged on their own, in ./balloons.ts). */
export const resizeNotResent: Invariant = {
  name: 'no resize request sent twice',
  check: async (state) => judgeResends(state.resizes.filter((r) => !r.balloon)),
};

/** Node scope's pods: every DaemonSet pod but the balloons, whose records node scope keeps. */
export const resizeNotStuck: Invariant = {
  name: 'no resize stuck',
  check: async (state) => {
    const store = new DynamoNodeScopeStore(state.db, state.table);
    const recorded = new Set<string>();
    const pods: PodResizeView[] = [];
    for (const c of state.sim?.clusters ?? []) {
      for (const pod of c.store.list('pods')) {
        const view = podResizeView(c.name, pod);
        if (view.daemonSet && !isBalloon(pod.metadata?.labels)) pods.push(view);
      }
      for (const head of await store.listHeads(c.name)) {
        const apply = await store.getApply(c.name, dsKeyOf(head.namespace, head.name));
        for (const r of Object.values(apply.records)) recorded.add(r.podUid);
      }
    }
    return judgeStuck(pods, recorded);
  },
};

/** Balloon pods: a resize they were asked for is done, or waits Deferred/Infeasible (never half-way). */
export const balloonResizeNotStuck: Invariant = {
  name: 'no balloon resize stuck',
  check: async (state) => {
    const pods: PodResizeView[] = [];
    for (const c of state.sim?.clusters ?? [])
      for (const pod of c.store.list('pods'))
        if (isBalloon(pod.metadata?.labels)) pods.push(podResizeView(c.name, pod));
    const r = judgeStuck(pods, new Set(pods.map((p) => p.podUid)));
    return { ...r, unit: 'balloon pods' };
  },
};
