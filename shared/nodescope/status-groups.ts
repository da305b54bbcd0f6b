/**
 * A scoped VPA's groups, one entry per scope value of spec.scope, `{scopeValue,
 * containerRecommendations}` in upstream's RecommendedContainerResources shape, in either of two shapes
 * (collect.ts StatusShape):
 *   upstream   AEP-10031 as it stands (kubernetes/autoscaler#10032, implementation #10012):
 *              `status.recommendationGroups`, every group targets only, and `status.recommendation`
 *              kept as the DaemonSet-wide fallback (with its bounds) for pods whose value has no group;
 *   deckhouse  the fork's older `status.groups`: label scopes carry each group's target, bounds and
 *              uncapped target, `kubernetes.io/hostname` targets only (to keep the VPA object within
 *              etcd's size limit at thousands of nodes); status.recommendation left empty.
 * KEP-4943's `scope: node` names no label, so it has no groups in either.
 */
import { formatCpu, formatMemory } from '../kernel/quantity.js';
import type { Bytes, Millicores } from '../kernel/units.js';
import type { StatusShape } from './collect.js';
import type { Amounts, ContainerRec } from './model.js';
import type { DsRecommendations } from './recommend.js';
import { HOSTNAME_LABEL, NODE_SCOPE, type NodeScopeTarget } from './targets.js';

type Quantities = { cpu?: string; memory?: string };

export interface StatusContainerRecommendation {
  containerName: string;
  target: Quantities;
  lowerBound?: Quantities;
  upperBound?: Quantities;
  uncappedTarget?: Quantities;
}

export interface StatusGroup {
  scopeValue: string;
  containerRecommendations: StatusContainerRecommendation[];
}

const quantities = (a: Amounts): Quantities => ({
  ...(a.cpu !== undefined ? { cpu: formatCpu(a.cpu as Millicores) } : {}),
  ...(a.memory !== undefined ? { memory: formatMemory(a.memory as Bytes) } : {}),
});

function containerRecommendations(
  containers: Record<string, ContainerRec>,
  targetOnly: boolean,
): StatusContainerRecommendation[] {
  return Object.keys(containers)
    .sort()
    .map((name) => {
      const c = containers[name] as ContainerRec;
      const out: StatusContainerRecommendation = { containerName: name, target: quantities(c.target) };
      if (targetOnly) return out;
      return {
        ...out,
        lowerBound: quantities(c.lowerBound),
        upperBound: quantities(c.upperBound),
        uncappedTarget: quantities(c.uncappedTarget),
      };
    });
}

/** The DaemonSet-wide recommendation as upstream's `status.recommendation`, bounds included. */
export function statusRecommendation(dsWide: Record<string, ContainerRec>): {
  containerRecommendations: StatusContainerRecommendation[];
} {
  return { containerRecommendations: containerRecommendations(dsWide, false) };
}

const byValue = (a: StatusGroup, b: StatusGroup) =>
  a.scopeValue < b.scopeValue ? -1 : a.scopeValue > b.scopeValue ? 1 : 0;

/**
 * The groups to publish, or undefined where the scope has none. `hostnames`: each node's scope value of
 * kubernetes.io/hostname (for that scope); nodes sharing a value after the first (by name) are left out.
 */
export function statusGroups(
  target: NodeScopeTarget,
  recs: DsRecommendations,
  hostnames: ReadonlyMap<string, string>,
  shape: StatusShape,
): StatusGroup[] | undefined {
  const { key, perNode } = target.scope;
  if (key === NODE_SCOPE) return undefined;
  if (!perNode)
    return [...recs.groups]
      .map(([scopeValue, c]) => ({
        scopeValue,
        containerRecommendations: containerRecommendations(c, shape === 'upstream'),
      }))
      .sort(byValue);
  if (key !== HOSTNAME_LABEL) return undefined;
  const seen = new Set<string>();
  const out: StatusGroup[] = [];
  for (const node of [...recs.recs.keys()].sort()) {
    const scopeValue = hostnames.get(node);
    if (scopeValue === undefined || seen.has(scopeValue)) continue;
    seen.add(scopeValue);
    const rec = recs.recs.get(node);
    if (rec)
      out.push({ scopeValue, containerRecommendations: containerRecommendations(rec.containers, true) });
  }
  return out.sort(byValue);
}
