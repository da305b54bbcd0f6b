/**
 * No node is left at a size it was reverted from (issue 30, part 5), judged on what the soak saw, not
 * on fleetscope's own records: the OOM kills it injected after downsizes (../oom-faults.ts), the resize
 * requests that reached the apiservers, and the pods at the end.
 *
 * The semantics are revert.ts's and canary.ts's. A revert puts the pod back at its size before the
 * downsize; the size it was reverted from is what the downsize lowered, value by value (loweredOnly:
 * per container, each cpu/memory request or limit taken below what ran), remembered per node for
 * REVERTED_FROM_MS (8 days, past any soak); the DaemonSet's downsizes are also held for a back-off (an
 * hour, doubling per revert in a row), but the hold lifting does not lift the avoidance: a later
 * downsize drops any resource that would go back to (or below) a reverted-from value (avoidRevertedFrom).
 * So, for every OOM kill injected after the downsize of pod P on node N:
 *   1. it was reverted: P was resized back to exactly its size before the downsize (unless P is gone);
 *   2. no resize request accepted for any pod on N from the revert on (within REVERTED_FROM_MS) sets a
 *      reverted-from value to at or below what the downsize had set it to;
 *   3. at the end, P (if still there: a pod recreated since runs its template, fleetscope's doing no
 *      longer) runs each reverted-from value above what the downsize had set it to.
 * 2 and 3 hold until the cluster's registration changes (an identity fault: rebuilt and registered
 * again under another name, deregistered and registered again, adopted away): a registration inherits
 * nothing, so from then on fleetscope does not know the revert, by design; what follows is not judged.
 * The dangerous paths must each have been hit: a run with no kill injected, no revert after one, or no
 * cycle in which the back-off hold blocked a due downsize proves nothing and fails.
 */
import { containerResources } from '../../local/sim/kubelet.js';
import type { ContainerResources } from '../../local/sim/workload.js';
import { REVERTED_FROM_MS } from '../../shared/nodescope/rollout.js';
import type { OomFault, ResizeRequest } from '../records.js';
import type { Invariant, Outcome } from '../types.js';
import { isBalloon } from './evictions.js';

/** Per container, its requests and limits in millicores and bytes. */
export type Sizes = Record<string, ContainerResources>;
type Field = keyof ContainerResources;
const FIELDS: Field[] = ['cpuRequestM', 'cpuLimitM', 'memRequest', 'memLimit'];

/** The sizes in a ResizeRequest's JSON (`[[container, resources], ...]`), keys in a stable order. */
export function sizesOf(json: string): Sizes {
  const out: Sizes = {};
  const list = JSON.parse(json) as [string, unknown][];
  for (const [name, resources] of [...list].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const r = containerResources({ resources });
    const c: ContainerResources = {};
    for (const f of FIELDS) if (r[f] !== undefined) c[f] = r[f];
    out[name] = c;
  }
  return out;
}

export interface Lowered {
  container: string;
  field: Field;
  /** What the downsize set it to (the reverted-from value). */
  value: number;
}

/** The values `after` took below `before`: the size a revert reverts from (revert.ts loweredOnly). */
export function loweredValues(before: Sizes, after: Sizes): Lowered[] {
  const out: Lowered[] = [];
  for (const [container, a] of Object.entries(after))
    for (const field of FIELDS) {
      const v = a[field];
      const b = before[container]?.[field];
      if (v !== undefined && b !== undefined && v < b) out.push({ container, field, value: v });
    }
  return out;
}

/** The values of `sizes` at or below the reverted-from ones. */
const backDown = (sizes: Sizes, from: Lowered[]): Lowered[] =>
  from.filter((l) => {
    const v = sizes[l.container]?.[l.field];
    return v !== undefined && v <= l.value;
  });

const words = (ls: Lowered[]) => ls.map((l) => `${l.container} ${l.field} ${l.value}`).join(', ');

export interface EndPod {
  cluster: string;
  node: string;
  podUid: string;
  /** Its containers' resources (spec), as a ResizeRequest's JSON. */
  resources: string;
}

export interface RevertedFromSeen {
  faults: OomFault[];
  requests: ResizeRequest[];
  endPods: EndPod[];
  /** Cycles in which the back-off hold blocked a due downsize (the runtimes' logs). */
  heldOnBackoff: number;
  /** When (clusters' clock) a cluster's registration changed (../oom-faults.ts). */
  forgotten: { cluster: string; at: number }[];
}

export function judgeRevertedFrom(s: RevertedFromSeen): Outcome {
  const violations: string[] = [];
  const reverted = s.faults.filter((f) => f.revertedAt !== undefined);
  if (s.faults.length === 0)
    violations.push('no OOM kill was injected after a downsize (the fault was not hit)');
  else if (reverted.length === 0) violations.push('no revert followed an injected OOM kill');
  if (reverted.length > 0 && s.heldOnBackoff === 0)
    violations.push('no downsize was blocked by a back-off hold after a revert (the path was not hit)');
  for (const f of s.faults) violations.push(...judgeFault(f, s));
  return {
    checked: s.faults.length,
    unit: `OOM kills after a downsize (${reverted.length} reverted; ${s.heldOnBackoff} cycles a hold blocked a downsize)`,
    violations,
  };
}

function judgeFault(f: OomFault, s: RevertedFromSeen): string[] {
  const at = `${f.cluster} ${f.node} (${f.pod})`;
  const from = loweredValues(sizesOf(f.before), sizesOf(f.after));
  const end = s.endPods.find((p) => p.cluster === f.cluster && p.podUid === f.podUid);
  if (f.revertedAt === undefined)
    return end ? [`${at}: OOM-killed after its downsize (cycle ${f.cycle}), never reverted`] : [];
  const out: string[] = [];
  const revertedAt = f.revertedAt;
  const forgotAt = Math.min(
    ...s.forgotten.filter((x) => x.cluster === f.cluster && x.at >= revertedAt).map((x) => x.at),
  );
  const until = Math.min(forgotAt, revertedAt + REVERTED_FROM_MS);
  for (const r of s.requests) {
    if (r.cluster !== f.cluster || r.node !== f.node || r.balloon || r.status < 200 || r.status >= 300)
      continue;
    if ((r.at ?? 0) < revertedAt || (r.at ?? 0) >= until) continue;
    const back = backDown(sizesOf(r.after), from);
    if (back.length > 0) out.push(`${at}: resized back to a size it was reverted from (${words(back)})`);
  }
  const left = end && forgotAt === Number.POSITIVE_INFINITY ? backDown(sizesOf(end.resources), from) : [];
  if (left.length > 0) out.push(`${at}: left at a size it was reverted from (${words(left)})`);
  return out;
}

// biome-ignore lint/suspicious/noExplicitAny: pod objects as the simulator stores them
type Pod = any;
const resourcesOf = (pod: Pod) =>
  JSON.stringify((pod.spec?.containers ?? []).map((c: Pod) => [c.name, c.resources ?? {}]));

export const noSizeRevertedFrom: Invariant = {
  name: 'no node left at a size it was reverted from',
  check: async (state) => {
    const endPods: EndPod[] = [];
    for (const c of state.sim?.clusters ?? [])
      for (const pod of c.store.list('pods'))
        if (pod.spec?.nodeName && !isBalloon(pod.metadata?.labels))
          endPods.push({
            cluster: c.name,
            node: pod.spec.nodeName,
            podUid: pod.metadata.uid,
            resources: resourcesOf(pod),
          });
    const o = state.oomFaults ?? { faults: [], heldOnBackoff: 0, forgotten: [] };
    return judgeRevertedFrom({ ...o, requests: state.resizes, endPods });
  },
};
