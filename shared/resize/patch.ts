/**
 * Turning desired resources into a `pods/resize` request: a strategic-merge patch keyed by container
 * name (kubectl's shape, facts §1.2) that names only the cpu/memory values that change, with the pod's
 * resourceVersion as a precondition so that a decision made on a stale pod comes back as 409 instead of
 * being applied blindly. Requests the apiserver would refuse (a QoS class change, a request above its
 * limit, a limit added where none was) are refused here without a request.
 */
import { formatCpu, formatMemory } from '../kernel/quantity.js';
import type { Bytes, Millicores } from '../kernel/units.js';
import { qosClassOf, resourcesOf } from './status.js';
import type { ContainerChange, ContainerDesired, DesiredResources, PodLike, ResourcePair } from './types.js';

export interface ResizePlan {
  /** The strategic-merge patch body for pods/resize. */
  body: {
    metadata?: { resourceVersion: string };
    spec: { containers: { name: string; resources: { requests?: object; limits?: object } }[] };
  };
  changes: ContainerChange[];
}

export type PlanResult =
  | { kind: 'plan'; plan: ResizePlan }
  | { kind: 'noop' }
  | { kind: 'invalid'; message: string; changes: ContainerChange[] };

const RESOURCES = ['cpu', 'memory'] as const;

function format(r: 'cpu' | 'memory', v: number): string {
  return r === 'cpu' ? formatCpu(v as Millicores) : formatMemory(v as Bytes);
}

/** Stable text of desired resources, to tell "the same request again" from a new one. */
export function desiredDigest(desired: DesiredResources): string {
  const parts: string[] = [];
  for (const name of Object.keys(desired).sort()) {
    const d = desired[name] ?? {};
    const p = (x: ResourcePair | undefined) => `${x?.cpu ?? '-'}/${x?.memory ?? '-'}`;
    parts.push(`${name}=${p(d.requests)};${p(d.limits)}`);
  }
  return parts.join(',');
}

/**
 * The resize request that moves `pod` to `desired`, or noop when it already has it. Limits are only
 * changed where the container already has that limit.
 */
export function planResize(pod: PodLike, desired: DesiredResources): PlanResult {
  const containers = pod.spec?.containers ?? [];
  const changes: ContainerChange[] = [];
  const patchContainers: ResizePlan['body']['spec']['containers'] = [];
  const afterAll: ContainerDesired[] = [];
  const problems: string[] = [];
  for (const c of containers) {
    const before = resourcesOf(c.resources);
    const want = desired[c.name];
    if (!want) {
      afterAll.push(before);
      continue;
    }
    const planned = planContainer(c.name, before, want, problems);
    afterAll.push(planned.after);
    if (!planned.patch) continue;
    changes.push({ name: c.name, before, after: planned.after });
    patchContainers.push({ name: c.name, resources: planned.patch });
  }
  for (const name of Object.keys(desired))
    if (!containers.some((c) => c.name === name)) problems.push(`the pod has no container ${name}`);
  if (changes.length === 0 && problems.length === 0) return { kind: 'noop' };
  const beforeQos = qosClassOf(containers.map((c) => resourcesOf(c.resources)));
  const afterQos = qosClassOf(afterAll);
  if (beforeQos !== afterQos)
    problems.push(
      `the pod's QoS class would change from ${beforeQos} to ${afterQos}, which a resize may not do`,
    );
  if (problems.length > 0) return { kind: 'invalid', message: problems.join('; '), changes };
  const rv = pod.metadata?.resourceVersion;
  return {
    kind: 'plan',
    plan: {
      body: {
        ...(rv ? { metadata: { resourceVersion: rv } } : {}),
        spec: { containers: patchContainers },
      },
      changes,
    },
  };
}

type PatchResources = ResizePlan['body']['spec']['containers'][number]['resources'];

/**
 * One container: its resources after the resize, and the patch naming only the values that change
 * (undefined when none does). What the apiserver would refuse is added to `problems`.
 */
function planContainer(
  name: string,
  before: ContainerDesired,
  want: ContainerDesired,
  problems: string[],
): { after: ContainerDesired; patch?: PatchResources } {
  const after: ContainerDesired = { requests: { ...before.requests }, limits: { ...before.limits } };
  const req: Record<string, string> = {};
  const lim: Record<string, string> = {};
  for (const r of RESOURCES) {
    const wr = want.requests?.[r];
    if (wr !== undefined && wr !== before.requests?.[r]) {
      after.requests![r] = wr;
      req[r] = format(r, wr);
    }
    const wl = want.limits?.[r];
    if (wl !== undefined && wl !== before.limits?.[r]) {
      if (before.limits?.[r] === undefined) {
        problems.push(`container ${name}: a ${r} limit cannot be added by a resize`);
        continue;
      }
      after.limits![r] = wl;
      lim[r] = format(r, wl);
    }
    const newReq = after.requests?.[r];
    const newLim = after.limits?.[r];
    if (newReq !== undefined && newLim !== undefined && newReq > newLim)
      problems.push(
        `container ${name}: ${r} request ${format(r, newReq)} would exceed its limit ${format(r, newLim)}`,
      );
  }
  const hasReq = Object.keys(req).length > 0;
  const hasLim = Object.keys(lim).length > 0;
  if (!hasReq && !hasLim) return { after };
  return { after, patch: { ...(hasReq ? { requests: req } : {}), ...(hasLim ? { limits: lim } : {}) } };
}
