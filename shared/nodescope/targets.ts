/**
 * Targets: the VerticalPodAutoscalers that ask for node scope (KEP-4943) and the DaemonSets they size.
 *
 * A VPA asks for node scope with `spec.scope: node` (where the cluster's VPA CRD carries the field, see
 * crd.ts) or with the annotation `fleetscope.io/scope: node` (the stock CRD prunes unknown fields). Node
 * scope on anything but a DaemonSet is refused with a reason and never acted on; so is a second VPA on a
 * DaemonSet already targeted, a DaemonSet that does not exist, and a scope value other than `node`.
 */
import { createHash } from 'node:crypto';
import { cpuMillis, memoryBytes } from '../cycle/quantities.js';
import type { ContainerPolicy, ResourceAmounts, ResourceName } from '../recommendation/index.js';
import { getContainerResourcePolicy } from '../recommendation/logic/capping.js';
import { type PlacementFacts, placementOf } from './eligibility.js';
import type { DaemonSetObject, LabelSelector, VpaObject } from './k8s-types.js';

export const SCOPE_ANNOTATION = 'fleetscope.io/scope';
export const NODE_SCOPE = 'node';

export type UpdateMode = 'Off' | 'Initial' | 'Recreate' | 'InPlaceOrRecreate' | 'Auto';
const UPDATE_MODES: readonly UpdateMode[] = ['Off', 'Initial', 'Recreate', 'InPlaceOrRecreate', 'Auto'];

/**
 * What fleetscope does in each update mode. Node scope never evicts (a recreated DaemonSet pod loses its
 * per-node size), so every mode that lets upstream update running pods resizes them in place instead.
 *   off      recommend only; nothing is written to the cluster
 *   initial  size each pod once, when the DaemonSet controller has (re)created it
 *   inplace  initial, plus resize running pods when upstream's updater would update them
 */
export type ApplyMode = 'off' | 'initial' | 'inplace';

export function applyModeOf(mode: UpdateMode): ApplyMode {
  if (mode === 'Off') return 'off';
  if (mode === 'Initial') return 'initial';
  return 'inplace';
}

export interface TemplateContainer {
  name: string;
  requests: ResourceAmounts;
  limits: ResourceAmounts;
}

export interface NodeScopeTarget {
  vpa: { namespace: string; name: string; uid: string };
  ds: { namespace: string; name: string; uid: string };
  /** The DaemonSet's pod selector as a label-selector string, for the pods and PodMetrics lists. */
  selector: string;
  placement: PlacementFacts;
  /** The template's containers, in order: the scopes of each node. */
  containers: TemplateContainer[];
  updateMode: UpdateMode;
  apply: ApplyMode;
  /** The resolved policy of each container (by name or "*"); containers without one are absent. */
  policies: Record<string, ContainerPolicy>;
  /** How the VPA asked: spec.scope (scoped CRD) or the annotation. */
  via: 'spec' | 'annotation';
  /** Changes whenever anything the recommendation depends on changes (policies, containers). */
  digest: string;
}

export interface RejectedTarget {
  namespace: string;
  vpa: string;
  uid: string;
  targetRef: { apiVersion?: string; kind: string; name: string };
  updateMode: UpdateMode;
  reason: string;
}

/** Whether (and how) a VPA asks for node scope; a scope value other than node is an error. */
export function requestedScope(vpa: VpaObject): { via: 'spec' | 'annotation'; value: string } | undefined {
  const spec = vpa.spec?.scope;
  if (spec !== undefined && spec !== '') return { via: 'spec', value: spec };
  const ann = vpa.metadata?.annotations?.[SCOPE_ANNOTATION];
  if (ann !== undefined && ann !== '') return { via: 'annotation', value: ann };
  return undefined;
}

/** The pod selector as a string the list calls accept (labels.Selector String()). */
export function selectorString(sel: LabelSelector | undefined): string | undefined {
  if (!sel) return undefined;
  const parts: string[] = [];
  for (const [k, v] of Object.entries(sel.matchLabels ?? {}).sort(([a], [b]) => (a < b ? -1 : 1)))
    parts.push(`${k}=${v}`);
  for (const e of sel.matchExpressions ?? []) {
    const values = [...(e.values ?? [])].sort().join(',');
    switch (e.operator) {
      case 'In':
        parts.push(`${e.key} in (${values})`);
        break;
      case 'NotIn':
        parts.push(`${e.key} notin (${values})`);
        break;
      case 'Exists':
        parts.push(e.key);
        break;
      case 'DoesNotExist':
        parts.push(`!${e.key}`);
        break;
      default:
        return undefined;
    }
  }
  return parts.length > 0 ? parts.join(',') : undefined;
}

function amounts(list: { [r: string]: string | undefined } | undefined): ResourceAmounts {
  const out: ResourceAmounts = {};
  const cpu = cpuMillis(list?.cpu);
  const memory = memoryBytes(list?.memory);
  if (cpu !== undefined) out.cpu = cpu as ResourceAmounts['cpu'];
  if (memory !== undefined) out.memory = memory as ResourceAmounts['memory'];
  return out;
}

type RawPolicy = NonNullable<
  NonNullable<NonNullable<VpaObject['spec']>['resourcePolicy']>['containerPolicies']
>[number];

function toPolicy(p: RawPolicy): ContainerPolicy {
  const out: ContainerPolicy = {};
  if (p.mode === 'Off' || p.mode === 'Auto') out.mode = p.mode;
  if (p.minAllowed) out.minAllowed = amounts(p.minAllowed);
  if (p.maxAllowed) out.maxAllowed = amounts(p.maxAllowed);
  if (p.controlledResources)
    out.controlledResources = p.controlledResources.filter(
      (r): r is ResourceName => r === 'cpu' || r === 'memory',
    );
  if (p.controlledValues === 'RequestsOnly' || p.controlledValues === 'RequestsAndLimits')
    out.controlledValues = p.controlledValues;
  return out;
}

/** GetContainerResourcePolicy: the policy naming the container, else the "*" policy. */
export function policiesFor(vpa: VpaObject, containers: readonly string[]): Record<string, ContainerPolicy> {
  const list = vpa.spec?.resourcePolicy?.containerPolicies ?? [];
  const out: Record<string, ContainerPolicy> = {};
  for (const name of containers) {
    const p = getContainerResourcePolicy(name, list);
    if (p) out[name] = toPolicy(p);
  }
  return out;
}

export interface ResolvedTargets {
  targets: NodeScopeTarget[];
  rejected: RejectedTarget[];
}

/**
 * The node-scoped targets among a cluster's VPAs. VPAs that do not ask for node scope are not
 * fleetscope's and are left out silently. Ordered by namespace and name, so the first VPA on a
 * DaemonSet wins deterministically.
 */
export function resolveTargets(
  vpas: readonly VpaObject[],
  daemonSets: readonly DaemonSetObject[],
): ResolvedTargets {
  const targets: NodeScopeTarget[] = [];
  const rejected: RejectedTarget[] = [];
  const dsByKey = new Map<string, DaemonSetObject>();
  for (const ds of daemonSets) dsByKey.set(`${ds.metadata?.namespace}/${ds.metadata?.name}`, ds);
  const taken = new Map<string, string>();
  const sorted = [...vpas].sort((a, b) => {
    const ka = `${a.metadata?.namespace}/${a.metadata?.name}`;
    const kb = `${b.metadata?.namespace}/${b.metadata?.name}`;
    return ka < kb ? -1 : ka > kb ? 1 : 0;
  });
  for (const vpa of sorted) {
    const scope = requestedScope(vpa);
    if (!scope) continue;
    const namespace = vpa.metadata?.namespace ?? '';
    const name = vpa.metadata?.name ?? '';
    const rawMode = vpa.spec?.updatePolicy?.updateMode ?? 'Auto';
    const updateMode = (UPDATE_MODES as readonly string[]).includes(rawMode)
      ? (rawMode as UpdateMode)
      : 'Off';
    const ref = vpa.spec?.targetRef;
    const targetRef = {
      ...(ref?.apiVersion ? { apiVersion: ref.apiVersion } : {}),
      kind: ref?.kind ?? '',
      name: ref?.name ?? '',
    };
    const reject = (reason: string) =>
      rejected.push({ namespace, vpa: name, uid: vpa.metadata?.uid ?? '', targetRef, updateMode, reason });
    if (scope.value !== NODE_SCOPE) {
      reject(`scope "${scope.value}" is not supported: the only scope is "${NODE_SCOPE}"`);
      continue;
    }
    if (!(UPDATE_MODES as readonly string[]).includes(rawMode)) {
      reject(`updateMode "${rawMode}" is not one of ${UPDATE_MODES.join(', ')}`);
      continue;
    }
    if (targetRef.kind !== 'DaemonSet') {
      reject(
        `node scope applies to DaemonSets only; the target is a ${targetRef.kind || 'resource of no kind'}${targetRef.name ? ` (${targetRef.name})` : ''}`,
      );
      continue;
    }
    if (targetRef.apiVersion && targetRef.apiVersion !== 'apps/v1') {
      reject(`node scope needs a DaemonSet of apps/v1; the target names ${targetRef.apiVersion}`);
      continue;
    }
    const dsKey = `${namespace}/${targetRef.name}`;
    const ds = dsByKey.get(dsKey);
    if (!ds) {
      reject(`DaemonSet ${dsKey} does not exist`);
      continue;
    }
    const holder = taken.get(dsKey);
    if (holder) {
      reject(`DaemonSet ${dsKey} is already sized per node by VerticalPodAutoscaler ${holder}`);
      continue;
    }
    const selector = selectorString(ds.spec?.selector);
    if (!selector) {
      reject(`DaemonSet ${dsKey} has no usable pod selector`);
      continue;
    }
    const containers: TemplateContainer[] = (ds.spec?.template?.spec?.containers ?? []).map((c) => ({
      name: c.name,
      requests: amounts(c.resources?.requests),
      limits: amounts(c.resources?.limits),
    }));
    if (containers.length === 0) {
      reject(`DaemonSet ${dsKey} has no containers`);
      continue;
    }
    taken.set(dsKey, name);
    const policies = policiesFor(
      vpa,
      containers.map((c) => c.name),
    );
    const digest = createHash('sha256')
      .update(JSON.stringify({ containers, policies, updateMode }))
      .digest('base64url')
      .slice(0, 16);
    targets.push({
      vpa: { namespace, name, uid: vpa.metadata?.uid ?? '' },
      ds: { namespace, name: targetRef.name, uid: ds.metadata?.uid ?? '' },
      selector,
      placement: placementOf(ds.spec?.template?.spec ?? {}),
      containers,
      updateMode,
      apply: applyModeOf(updateMode),
      policies,
      via: scope.via,
      digest,
    });
  }
  return { targets, rejected };
}
