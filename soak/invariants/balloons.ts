/**
 * Balloons, beyond "no pod evicted" (./evictions.ts) and "no resize stuck" (./resizes.ts):
 *
 * - after every cycle, no balloon asks for more than its node's free capacity: the balloon's requests
 *   (what fleetscope asked for) plus what the node's other pods take in the scheduler's eyes fit the
 *   node's allocatable; an inflate the kubelet deferred (the space was taken first) is tolerated for the
 *   cycle that made it and must be reverted by the next one;
 * - no running pod is ever preempted while balloons run (balloons never preempt, and nothing may preempt
 *   to reach the space a balloon holds);
 * - no balloon resize request sent twice (an accepted request that asked for what the pod had).
 */

import type { Simulator } from '../../local/sim/index.js';
import { amountOr0, nodeAllocatable } from '../../local/sim/nodes.js';
import { isTerminal, schedulerRequests } from '../../local/sim/pod-requests.js';
import { BALLOON_CONTAINER } from '../../shared/balloons/manifests.js';
import type { BalloonSample, Preemption, ResizeRequest } from '../records.js';
import type { Invariant, Outcome } from '../types.js';
import { isBalloon } from './evictions.js';
import { judgeResends } from './resizes.js';

// biome-ignore lint/suspicious/noExplicitAny: pod objects as the simulator stores them
type Json = any;

/** Every balloon of the given clusters, now; `seen` gathers the uids of the pods beside them. */
export function sampleBalloons(
  sim: Simulator,
  clusters: string[],
  cycle: number,
  seen?: Set<string>,
): BalloonSample[] {
  const out: BalloonSample[] = [];
  for (const name of clusters) {
    const c = sim.cluster(name);
    const pods: Json[] = c.store.list('pods').filter((p: Json) => p.spec?.nodeName && !isTerminal(p));
    for (const b of pods.filter((p) => isBalloon(p.metadata?.labels))) {
      const node = c.store.get('nodes', b.spec.nodeName);
      if (!node) continue;
      const alloc = nodeAllocatable(node);
      const others = { cpu: 0, memory: 0 };
      for (const p of pods)
        if (p.spec.nodeName === b.spec.nodeName && p !== b) {
          if (!isBalloon(p.metadata?.labels)) seen?.add(`${name}/${p.metadata?.uid}`);
          const r = schedulerRequests(p);
          others.cpu += r.cpuM;
          others.memory += r.mem;
        }
      const req =
        b.spec.containers?.find((x: Json) => x.name === BALLOON_CONTAINER)?.resources?.requests ?? {};
      const pending = (b.status?.conditions ?? []).find(
        (x: Json) => x.type === 'PodResizePending' && x.status === 'True',
      )?.reason;
      out.push({
        cycle,
        cluster: name,
        node: b.spec.nodeName,
        pod: `${b.metadata.namespace}/${b.metadata.name}`,
        balloon: { cpu: amountOr0(req.cpu, 'cpu'), memory: amountOr0(req.memory, 'mem') },
        others,
        allocatable: { cpu: alloc.cpuM, memory: alloc.mem },
        ...(pending ? { pending } : {}),
      });
    }
  }
  return out;
}

export function judgeBalloonFit(samples: BalloonSample[]): Outcome {
  const violations: string[] = [];
  const pendingAt = new Map<string, number>();
  for (const s of samples) {
    const key = `${s.cluster} ${s.pod}`;
    const over = (['cpu', 'memory'] as const).filter((r) => s.balloon[r] + s.others[r] > s.allocatable[r]);
    if (s.pending) {
      const since = pendingAt.get(key);
      if (since !== undefined && since < s.cycle - 1)
        violations.push(
          `${key} on ${s.node}: resize ${s.pending} since cycle ${since}, still at cycle ${s.cycle} (not reverted)`,
        );
      if (since === undefined) pendingAt.set(key, s.cycle);
      continue;
    }
    pendingAt.delete(key);
    if (over.length)
      violations.push(
        `${key} on ${s.node} after cycle ${s.cycle}: balloon ${s.balloon.cpu}m/${s.balloon.memory} + others ${s.others.cpu}m/${s.others.memory} > allocatable ${s.allocatable.cpu}m/${s.allocatable.memory} (${over.join(', ')})`,
      );
  }
  const pods = new Set(samples.map((s) => `${s.cluster} ${s.pod}`)).size;
  return { checked: samples.length, unit: `balloon samples (${pods} balloon pods)`, violations };
}

export function judgePreemptions(preemptions: Preemption[], watched: number): Outcome {
  const violations = preemptions
    .filter((p) => !p.balloon)
    .map((p) => `${p.cluster} ${p.pod}: preempted (${p.message})`);
  return {
    checked: watched,
    unit: `running pods on balloon nodes (${preemptions.length} preemptions)`,
    violations,
  };
}

export const balloonWithinFree: Invariant = {
  name: "no balloon over its node's free capacity",
  check: async (state) => judgeBalloonFit(state.balloonSamples),
};

export const noPreemptionForBalloons: Invariant = {
  name: 'no running pod preempted',
  check: async (state) => judgePreemptions(state.preemptions, state.podsOnBalloonNodes),
};

export const balloonResizeNotResent: Invariant = {
  name: 'no balloon resize sent twice',
  check: async (state) => {
    const r = judgeResends(state.resizes.filter((x) => x.balloon));
    const grows = state.resizes.filter((x) => x.balloon && x.direction === 'grow').length;
    const shrinks = state.resizes.filter((x) => x.balloon && x.direction === 'shrink').length;
    return { ...r, unit: `accepted balloon resizes (${grows} inflates, ${shrinks} deflates sent)` };
  },
};

/** Whether a balloon resize inflated it (the node offers less) or deflated it, by its requests. */
export function resizeDirection(before: string, after: string): ResizeRequest['direction'] {
  const of = (s: string) => {
    try {
      const list = JSON.parse(s) as [string, { requests?: { cpu?: string; memory?: string } }][];
      const r = list.find(([n]) => n === BALLOON_CONTAINER)?.[1]?.requests;
      return [amountOr0(r?.cpu, 'cpu'), amountOr0(r?.memory, 'mem')] as const;
    } catch {
      return [0, 0] as const;
    }
  };
  const [c0, m0] = of(before);
  const [c1, m1] = of(after);
  if (c1 > c0 || (c1 === c0 && m1 > m0)) return 'grow';
  if (c1 < c0 || m1 < m0) return 'shrink';
  return undefined;
}
