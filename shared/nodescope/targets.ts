/**
 * Targets: the VerticalPodAutoscalers that ask for a scope (KEP-4943's `node`, or AEP-10031's node label
 * key) and the DaemonSets they size.
 *
 * A VPA asks with `spec.scope` (where the cluster's VPA CRD carries the field, see crd.ts) or with the
 * annotation `fleetscope.io/scope` (the stock CRD prunes unknown fields). `node` and
 * `kubernetes.io/hostname` size each node from its own history; any other label key sizes the nodes of
 * each value of that label from their merged history (groups.ts). A scope on anything but a DaemonSet
 * is refused with a reason and never acted on; so is a second VPA on a DaemonSet already targeted, a
 * DaemonSet that does not exist, and a scope that is not a valid label key.
 * Whether a VPA is fleetscope's at all beside upstream VPA (`spec.recommenders`, upstream's running
 * recommender) is upstream-vpa.ts's to say; the ones it leaves to another recommender are `skipped`.
 */
import { createHash } from 'node:crypto';
import { cpuMillis, memoryBytes } from '../cycle/quantities.js';
import { BALLOON_LABEL } from '../cycle/views.js';
import type { ContainerPolicy, ResourceAmounts, ResourceName } from '../recommendation/index.js';
import { getContainerResourcePolicy } from '../recommendation/logic/capping.js';
import { type PlacementFacts, placementOf } from './eligibility.js';
import { type GuardSpec, guardSpecOf } from './guards/settings.js';
import type { DaemonSetObject, LabelSelector, VpaObject } from './k8s-types.js';
import { labelKeyProblem } from './label-key.js';
import { type RolloutPolicy, rolloutPolicyOf } from './rollout-policy.js';
import { claimOf, NOT_READ, type UpstreamVpa } from './upstream-vpa.js';

export const SCOPE_ANNOTATION = 'fleetscope.io/scope';
/** The label key whose groups size a new node in per-node scope, when not the default. */
export const NEW_NODE_GROUP_ANNOTATION = 'fleetscope.io/new-node-group';
/**
 * The switch that stops every write for a VPA, its status included (`none`; `all` is the default):
 * separate from update mode Off, which still publishes the recommendation in the VPA's status as
 * upstream's recommender does.
 */
export const WRITES_ANNOTATION = 'fleetscope.io/writes';
const WRITES_VALUES = ['all', 'none'];

/** Whether fleetscope may write for this VPA at all; any value but `all` counts as `none` (the safe side). */
export const writesAllowed = (vpa: VpaObject | undefined): boolean => {
  const v = vpa?.metadata?.annotations?.[WRITES_ANNOTATION];
  return v === undefined || v === 'all';
};
export const NODE_SCOPE = 'node';
export const HOSTNAME_LABEL = 'kubernetes.io/hostname';
export const INSTANCE_TYPE_LABEL = 'node.kubernetes.io/instance-type';

/**
 * How a target's nodes are sized:
 *   perNode  each node from its own history (`node`, `kubernetes.io/hostname`); a node without history
 *            from its group of `groupLabel` (the instance type by default), then the DaemonSet-wide one
 *   label    the nodes of each value of `groupLabel` (= the scope) from their merged history; a group
 *            without history from the DaemonSet-wide one
 */
export interface TargetScope {
  /** spec.scope as written: `node` or a node label key. */
  key: string;
  perNode: boolean;
  /** The label whose values group the nodes. */
  groupLabel: string;
}

export function scopeOf(key: string, newNodeGroup: string | undefined): TargetScope {
  const perNode = key === NODE_SCOPE || key === HOSTNAME_LABEL;
  return { key, perNode, groupLabel: perNode ? (newNodeGroup ?? INSTANCE_TYPE_LABEL) : key };
}

/** upstream's modes as of VPA 1.7/1.8 (`InPlace`: 1.7, alpha; `Auto`: deprecated, as `Recreate`). */
export type UpdateMode = 'Off' | 'Initial' | 'Recreate' | 'InPlaceOrRecreate' | 'InPlace' | 'Auto';
const UPDATE_MODES: readonly UpdateMode[] = [
  'Off',
  'Initial',
  'Recreate',
  'InPlaceOrRecreate',
  'InPlace',
  'Auto',
];

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
  /** False under the switch fleetscope.io/writes: none: nothing is written to the cluster, status included. */
  writes?: boolean;
  /** The resolved policy of each container (by name or "*"); containers without one are absent. */
  policies: Record<string, ContainerPolicy>;
  /** How the VPA asked: spec.scope (scoped CRD) or the annotation. */
  via: 'spec' | 'annotation';
  scope: TargetScope;
  /** Changes whenever anything the recommendation depends on changes (policies, containers). */
  digest: string;
  /** What upstream VPA's components would do to this VPA besides (upstream-vpa.ts). */
  warnings?: string[];
  /** Upstream's updater evicts on this VPA's status.recommendation (upstream-vpa.ts): not published. */
  updaterEvicts?: true;
  /** Resize windows and caps the VPA's annotations ask for (guards/settings.ts). */
  guards?: GuardSpec;
  /** Canary share, soak and revert window (rollout-policy.ts); the defaults when absent. */
  rollout?: RolloutPolicy;
}

/** A scoped VPA fleetscope leaves to another recommender, and why (upstream-vpa.ts). */
export interface SkippedVpa {
  namespace: string;
  vpa: string;
  uid: string;
  updateMode: string;
  reason: string;
  /** The DaemonSet the VPA targets ("namespace/name"), so a view of that DaemonSet can say why. */
  daemonSet?: string;
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
  skipped: SkippedVpa[];
}

/** What a VPA asks for, as read (the mode as written, and as used: an unknown one counts as Off). */
interface Ask {
  vpa: VpaObject;
  namespace: string;
  name: string;
  scope?: { via: 'spec' | 'annotation'; value: string };
  rawMode: string;
  updateMode: UpdateMode;
  targetRef: RejectedTarget['targetRef'];
}

function askOf(vpa: VpaObject, scope: Ask['scope']): Ask {
  const rawMode = vpa.spec?.updatePolicy?.updateMode ?? 'Auto';
  const ref = vpa.spec?.targetRef;
  return {
    vpa,
    namespace: vpa.metadata?.namespace ?? '',
    name: vpa.metadata?.name ?? '',
    scope,
    rawMode,
    updateMode: (UPDATE_MODES as readonly string[]).includes(rawMode) ? (rawMode as UpdateMode) : 'Off',
    targetRef: {
      ...(ref?.apiVersion ? { apiVersion: ref.apiVersion } : {}),
      kind: ref?.kind ?? '',
      name: ref?.name ?? '',
    },
  };
}

/** Why the VPA's own fields rule its scope out, if they do. */
function askProblem(a: Ask): string | undefined {
  const { targetRef } = a;
  if (a.scope) {
    const where = a.scope.via === 'spec' ? 'spec.scope' : `annotation ${SCOPE_ANNOTATION}`;
    const keyProblem = labelKeyProblem(a.scope.value);
    if (keyProblem) return `${where} "${a.scope.value}" is not a node label key: ${keyProblem}`;
  }
  const newNode = a.vpa.metadata?.annotations?.[NEW_NODE_GROUP_ANNOTATION];
  const newNodeProblem = newNode === undefined ? undefined : labelKeyProblem(newNode);
  if (newNodeProblem)
    return `annotation ${NEW_NODE_GROUP_ANNOTATION} "${newNode}" is not a node label key: ${newNodeProblem}`;
  const writes = a.vpa.metadata?.annotations?.[WRITES_ANNOTATION];
  if (writes !== undefined && !WRITES_VALUES.includes(writes))
    return `annotation ${WRITES_ANNOTATION} "${writes}" is not one of ${WRITES_VALUES.join(', ')} (nothing is written until it is)`;
  const rollout = rolloutPolicyOf(a.vpa.metadata?.annotations);
  if (typeof rollout === 'string') return rollout;
  if (!(UPDATE_MODES as readonly string[]).includes(a.rawMode))
    return `updateMode "${a.rawMode}" is not one of ${UPDATE_MODES.join(', ')}`;
  if (targetRef.kind !== 'DaemonSet')
    return `${(a.scope?.value ?? NODE_SCOPE) === NODE_SCOPE ? 'node scope' : `scope ${a.scope?.value}`} applies to DaemonSets only; the target is a ${targetRef.kind || 'resource of no kind'}${targetRef.name ? ` (${targetRef.name})` : ''}`;
  if (targetRef.apiVersion && targetRef.apiVersion !== 'apps/v1')
    return `node scope needs a DaemonSet of apps/v1; the target names ${targetRef.apiVersion}`;
  return undefined;
}

/** The target, or why the DaemonSet cannot be sized per node for this VPA. */
function targetOf(
  a: Ask,
  ds: DaemonSetObject | undefined,
  holder: string | undefined,
): NodeScopeTarget | string {
  const dsKey = `${a.namespace}/${a.targetRef.name}`;
  if (!ds) return `DaemonSet ${dsKey} does not exist`;
  if (ds.spec?.template?.metadata?.labels?.[BALLOON_LABEL] === 'true')
    return `DaemonSet ${dsKey} runs balloon pods (${BALLOON_LABEL}): they hold capacity that doesn't exist and are sized by the balloons capability, never by their own usage`;
  if (holder) return `DaemonSet ${dsKey} is already sized per node by VerticalPodAutoscaler ${holder}`;
  const selector = selectorString(ds.spec?.selector);
  if (!selector) return `DaemonSet ${dsKey} has no usable pod selector`;
  const containers: TemplateContainer[] = (ds.spec?.template?.spec?.containers ?? []).map((c) => ({
    name: c.name,
    requests: amounts(c.resources?.requests),
    limits: amounts(c.resources?.limits),
  }));
  if (containers.length === 0) return `DaemonSet ${dsKey} has no containers`;
  const policies = policiesFor(
    a.vpa,
    containers.map((c) => c.name),
  );
  const { updateMode } = a;
  const scope = scopeOf(
    a.scope?.value ?? NODE_SCOPE,
    a.vpa.metadata?.annotations?.[NEW_NODE_GROUP_ANNOTATION],
  );
  // The scope's label joins the digest only where it is not the default: existing bases stay valid.
  const grouping = scope.key === NODE_SCOPE && scope.groupLabel === INSTANCE_TYPE_LABEL ? {} : { scope };
  const digest = createHash('sha256')
    .update(JSON.stringify({ containers, policies, updateMode, ...grouping }))
    .digest('base64url')
    .slice(0, 16);
  return {
    vpa: { namespace: a.namespace, name: a.name, uid: a.vpa.metadata?.uid ?? '' },
    ds: { namespace: a.namespace, name: a.targetRef.name, uid: ds.metadata?.uid ?? '' },
    selector,
    placement: placementOf(ds.spec?.template?.spec ?? {}),
    containers,
    updateMode,
    apply: applyModeOf(updateMode),
    ...(writesAllowed(a.vpa) ? {} : { writes: false }),
    rollout: rolloutPolicyOf(a.vpa.metadata?.annotations) as RolloutPolicy,
    policies,
    via: a.scope?.via ?? 'spec',
    scope,
    digest,
    guards: guardSpecOf(a.vpa.metadata?.annotations),
  };
}

/**
 * The node-scoped targets among a cluster's VPAs. VPAs that are not fleetscope's (no scope, and not
 * naming fleetscope in spec.recommenders) are left out silently; scoped ones left to another
 * recommender are listed as skipped, with the reason (upstream-vpa.ts). Ordered by namespace and name,
 * so the first VPA on a DaemonSet wins deterministically.
 */
export function resolveTargets(
  vpas: readonly VpaObject[],
  daemonSets: readonly DaemonSetObject[],
  upstream: UpstreamVpa = NOT_READ,
): ResolvedTargets {
  const targets: NodeScopeTarget[] = [];
  const rejected: RejectedTarget[] = [];
  const skipped: SkippedVpa[] = [];
  const dsByKey = new Map<string, DaemonSetObject>();
  for (const ds of daemonSets) dsByKey.set(`${ds.metadata?.namespace}/${ds.metadata?.name}`, ds);
  /** DaemonSet -> the VPA that sizes it. */
  const taken = new Map<string, string>();
  const key = (v: VpaObject) => `${v.metadata?.namespace}/${v.metadata?.name}`;
  const sorted = [...vpas].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  for (const vpa of sorted) {
    const scope = requestedScope(vpa);
    const claim = claimOf(vpa, scope !== undefined, upstream);
    if (claim.kind === 'none') continue;
    const a = askOf(vpa, scope);
    if (claim.kind === 'skipped') {
      const { namespace, name, rawMode, targetRef } = a;
      skipped.push({
        namespace,
        vpa: name,
        uid: vpa.metadata?.uid ?? '',
        updateMode: rawMode,
        reason: claim.reason,
        ...(targetRef.kind === 'DaemonSet' ? { daemonSet: `${namespace}/${targetRef.name}` } : {}),
      });
      continue;
    }
    const dsKey = `${a.namespace}/${a.targetRef.name}`;
    const t =
      claim.kind === 'refused'
        ? claim.reason
        : (askProblem(a) ?? targetOf(a, dsByKey.get(dsKey), taken.get(dsKey)));
    if (typeof t === 'string') {
      const { namespace, name, targetRef, updateMode } = a;
      rejected.push({ namespace, vpa: name, uid: vpa.metadata?.uid ?? '', targetRef, updateMode, reason: t });
      continue;
    }
    taken.set(dsKey, a.name);
    if (claim.kind === 'ours' && claim.warnings.length > 0) t.warnings = claim.warnings;
    if (claim.kind === 'ours' && claim.updaterEvicts) t.updaterEvicts = true;
    targets.push(t);
  }
  return { targets, rejected, skipped };
}
