/**
 * KEP-5836 (1.37 alpha, scheduler preemption for in-place resize), as far as fleetscope meets it:
 * - Node `spec.podPreemptionPolicy.disableResizePreemption`: a set of owner keys in label-key format,
 *   at most 20; served in the OpenAPI of `/api/v1` from 1.37 (how a client tells the field exists);
 *   dropped from writes on servers before 1.37, as an apiserver prunes a field it does not know, and on
 *   1.37 with the alpha gate InPlacePodVerticalScalingSchedulerPreemption off (the strategy's
 *   dropDisabledFields; the OpenAPI, generated from the types, still shows the field).
 * - The kubelet marks a Deferred resize on a node with any key there `PodResizePreemptionDisabled=True`,
 *   reason `PreemptionDisabledByNodePolicy` (kubelet.ts calls {@link preemptionDisabledCondition}).
 * - The scheduler takes a Deferred resize and preempts lower-priority pods on its node so it fits,
 *   unless the node opted out or the pod's preemptionPolicy is Never (scheduler.ts calls
 *   {@link resizeVictims}); the victims get DisruptionTarget and go, and the kubelet then admits the
 *   resize. The KEP spells the field two ways; this follows k8s-api-facts (§1.6).
 */
import { type FieldError, fieldInvalid } from './errors.js';
import { isObject, type Json, type JsonObject } from './json.js';
import type { Features } from './state.js';

export const MAX_DISABLE_KEYS = 20;
export const DISABLED_CONDITION = 'PodResizePreemptionDisabled';

/** A label key: an optional DNS-subdomain prefix and '/', then a name of at most 63 characters. */
const NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function labelKeyProblem(key: unknown): string | undefined {
  if (typeof key !== 'string') return 'must be a string';
  const parts = key.split('/');
  const name = parts.length === 2 ? parts[1] : parts[0];
  if (parts.length > 2)
    return "a qualified name must consist of an optional prefix and a name, separated by '/'";
  if (parts.length === 2 && (!parts[0] || parts[0].length > 253 || !SUBDOMAIN.test(parts[0])))
    return 'prefix part must be a lowercase RFC 1123 subdomain';
  if (!name || name.length > 63 || !NAME.test(name))
    return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (at most 63)";
  return undefined;
}

/** The node's opt-out keys (empty when absent). */
export const disabledKeys = (node: Json): string[] =>
  node?.spec?.podPreemptionPolicy?.disableResizePreemption ?? [];

/** Validation of the field on node create and update (1.37+); before 1.37 the field is pruned. */
export function nodePreemptionPolicy(node: JsonObject, f: Features): FieldError[] {
  if (!isObject(node.spec) || node.spec.podPreemptionPolicy === undefined) return [];
  if (!f.resizePreemption) {
    const { podPreemptionPolicy: _dropped, ...spec } = node.spec;
    node.spec = spec;
    return [];
  }
  const path = 'spec.podPreemptionPolicy.disableResizePreemption';
  const keys = node.spec.podPreemptionPolicy?.disableResizePreemption;
  if (keys === undefined || keys === null) return [];
  if (!Array.isArray(keys)) return [fieldInvalid(path, keys, 'must be a list of label keys')];
  const errs: FieldError[] = [];
  if (keys.length > MAX_DISABLE_KEYS)
    errs.push({
      type: 'FieldValueTooMany',
      field: path,
      detail: `must have at most ${MAX_DISABLE_KEYS} items`,
    });
  const seen = new Set<string>();
  keys.forEach((k: Json, i: number) => {
    const why = labelKeyProblem(k);
    if (why) errs.push(fieldInvalid(`${path}[${i}]`, k, why));
    else if (seen.has(k)) errs.push({ type: 'FieldValueDuplicate', field: `${path}[${i}]`, value: k });
    seen.add(k);
  });
  return errs;
}

/** The schemas `/openapi/v3/api/v1` publishes for what fleetscope asks of it: NodeSpec's fields. */
export function coreSchemas(f: Features): JsonObject {
  const properties: JsonObject = {
    configSource: { type: 'object' },
    externalID: { type: 'string' },
    podCIDR: { type: 'string' },
    podCIDRs: { type: 'array', items: { type: 'string' } },
    providerID: { type: 'string' },
    taints: { type: 'array', items: { type: 'object' } },
    unschedulable: { type: 'boolean' },
  };
  if (f.resizePreemptionSchema)
    properties.podPreemptionPolicy = {
      type: 'object',
      properties: {
        disableResizePreemption: {
          type: 'array',
          items: { type: 'string' },
          maxItems: MAX_DISABLE_KEYS,
          'x-kubernetes-list-type': 'set',
        },
      },
    };
  return { 'io.k8s.api.core.v1.NodeSpec': { type: 'object', properties } };
}

/** The condition a 1.37 kubelet sets on a Deferred resize where the node opted out, or undefined. */
export function preemptionDisabledCondition(node: Json, f: Features): JsonObject | undefined {
  if (!f.resizePreemption || disabledKeys(node).length === 0) return undefined;
  return {
    type: DISABLED_CONDITION,
    status: 'True',
    reason: 'PreemptionDisabledByNodePolicy',
    message: `resize preemption is disabled on the node by: ${disabledKeys(node).join(', ')}`,
  };
}

export interface Resident {
  key: string;
  pod: Json;
  /** What the kubelet allocated to it. */
  cpuM: number;
  mem: number;
}

/**
 * The pods to preempt so that a Deferred resize fits, fewest and least important (lower priority
 * first, then the latest started), or undefined when preemption may not or cannot help.
 */
export function resizeVictims<T extends Resident>(
  resizing: Json,
  node: Json,
  need: { cpuM: number; mem: number },
  others: T[],
  f: Features,
): T[] | undefined {
  if (!f.resizePreemption || disabledKeys(node).length > 0) return undefined;
  if (resizing?.spec?.preemptionPolicy === 'Never') return undefined;
  const prio = resizing?.spec?.priority ?? 0;
  const lower = others
    .filter((o) => (o.pod?.spec?.priority ?? 0) < prio)
    .sort(
      (a, b) =>
        (a.pod.spec?.priority ?? 0) - (b.pod.spec?.priority ?? 0) ||
        String(b.pod.status?.startTime ?? '').localeCompare(String(a.pod.status?.startTime ?? '')),
    );
  const victims: T[] = [];
  let cpuM = need.cpuM;
  let mem = need.mem;
  for (const v of lower) {
    if (cpuM <= 0 && mem <= 0) break;
    victims.push(v);
    cpuM -= v.cpuM;
    mem -= v.mem;
  }
  return cpuM <= 0 && mem <= 0 ? victims : undefined;
}
