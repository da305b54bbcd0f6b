/**
 * KEP-5836 (Kubernetes 1.37+): the scheduler may preempt lower-priority pods to complete a Deferred
 * in-place resize. On a node balloons manage, that would take a workload's room by force when the
 * node can simply grow (the balloon deflates, grow.ts). So fleetscope puts its owner key in the node's
 * `spec.podPreemptionPolicy.disableResizePreemption` while it manages the node, and takes it out when it
 * stops. The list is a set shared by every owner (at most 20, label keys): fleetscope adds and removes
 * only its own entry, in a JSON patch fenced on the resourceVersion it read, so another writer's entry
 * can never be dropped (a merge or strategic merge patch would replace the whole list: the field has
 * `+listType=set` and no patchStrategy, k8s.io/api core/v1 NodePodPreemptionPolicy).
 *
 * Pure: the cycle step (./opt-out-step.ts) reads, calls this, and sends what it answers.
 */

/** fleetscope's owner key in the node's list. */
export const OPT_OUT_KEY = 'fleetscope.io/balloons';
/** The API's limit on the list (`+k8s:maxItems=20`). */
export const MAX_OPT_OUT_KEYS = 20;
export const OPT_OUT_FIELD = 'spec.podPreemptionPolicy.disableResizePreemption';

/** What the node's list says, as read. */
export interface NodeOptOutRead {
  name: string;
  resourceVersion: string;
  keys: readonly string[];
}

export type JsonPatchOp =
  | { op: 'test'; path: string; value: unknown }
  | { op: 'add'; path: string; value: unknown }
  | { op: 'remove'; path: string };

export type OptOutChange =
  | { kind: 'none' }
  | { kind: 'patch'; ops: JsonPatchOp[] }
  /** The list already holds 20 other owners' keys: fleetscope's is not added, and none is evicted. */
  | { kind: 'full'; problem: string };

const LIST = '/spec/podPreemptionPolicy/disableResizePreemption';

const fence = (n: NodeOptOutRead): JsonPatchOp => ({
  op: 'test',
  path: '/metadata/resourceVersion',
  value: n.resourceVersion,
});

/** The change that puts fleetscope's key in the node's list (managed) or takes it out (not managed). */
export function optOutChange(n: NodeOptOutRead, managed: boolean): OptOutChange {
  const at = n.keys.indexOf(OPT_OUT_KEY);
  if (managed === at >= 0) return { kind: 'none' };
  if (!managed) return { kind: 'patch', ops: [fence(n), { op: 'remove', path: `${LIST}/${at}` }] };
  if (n.keys.length >= MAX_OPT_OUT_KEYS)
    return {
      kind: 'full',
      problem: `node ${n.name}: ${OPT_OUT_FIELD} already holds ${n.keys.length} keys (the most the API allows): ${OPT_OUT_KEY} not added, no other owner's key removed; a Deferred resize there may preempt pods (KEP-5836)`,
    };
  // An absent list (or policy) is created whole; an existing one gets the key appended, the others kept.
  const add: JsonPatchOp =
    n.keys.length > 0
      ? { op: 'add', path: `${LIST}/-`, value: OPT_OUT_KEY }
      : { op: 'add', path: '/spec/podPreemptionPolicy', value: { disableResizePreemption: [OPT_OUT_KEY] } };
  return { kind: 'patch', ops: [fence(n), add] };
}

/** Whether fleetscope's key is in a list. */
export const hasOptOutKey = (keys: readonly string[] | undefined): boolean =>
  keys?.includes(OPT_OUT_KEY) ?? false;

/** Whether an OpenAPI v3 document of core/v1 serves the node field (a server that knows KEP-5836). */
export function servesOptOutField(doc: unknown): boolean {
  const schemas = (doc as { components?: { schemas?: Record<string, unknown> } })?.components?.schemas;
  const spec = schemas?.['io.k8s.api.core.v1.NodeSpec'] as
    | { properties?: Record<string, { properties?: Record<string, unknown>; $ref?: string }> }
    | undefined;
  const policy = spec?.properties?.podPreemptionPolicy;
  if (!policy) return false;
  if (policy.properties) return 'disableResizePreemption' in policy.properties;
  // kube-openapi publishes nested types by reference (allOf/$ref to their own schema).
  const ref = JSON.stringify(policy).match(/#\/components\/schemas\/([\w.]+)/)?.[1];
  const target = ref ? (schemas?.[ref] as { properties?: Record<string, unknown> } | undefined) : undefined;
  return target?.properties !== undefined && 'disableResizePreemption' in target.properties;
}
