/**
 * Strategies of the smaller built-in resources: Namespace, ServiceAccount, PriorityClass (the 422
 * rules of recorded 09*), APIService (the aggregator's availability), and the generic one.
 */
import { rfc3339 } from './clock.js';
import { type FieldError, fieldForbidden, fieldNotSupported, forbidden } from './errors.js';
import { clone, isObject, type Json, type JsonObject, orderKeys } from './json.js';
import { CONDITION_ORDER, orderTop } from './objects.js';
import type { SimState, Strategy } from './state.js';

export const SYSTEM_PRIORITY_CLASSES = [
  {
    name: 'system-node-critical',
    value: 2000001000,
    description: 'Used for system critical pods that must not be moved from their current node.',
  },
  {
    name: 'system-cluster-critical',
    value: 2000000000,
    description:
      'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.',
  },
];
const HIGHEST_USER_PRIORITY = 1_000_000_000;

export function namespaceStrategy(): Strategy {
  return {
    nameRule: 'label',
    prepareCreate(ns) {
      ns.metadata.labels = { ...(ns.metadata.labels ?? {}), 'kubernetes.io/metadata.name': ns.metadata.name };
      ns.spec = { finalizers: ['kubernetes'], ...(isObject(ns.spec) ? ns.spec : {}) };
      ns.status = { phase: 'Active' };
    },
    prepareUpdate(ns, old) {
      ns.status = clone(old.status);
      ns.spec = clone(old.spec);
      ns.metadata.labels = { ...(ns.metadata.labels ?? {}), 'kubernetes.io/metadata.name': ns.metadata.name };
    },
  };
}

export function priorityClassStrategy(cluster: SimState): Strategy {
  const validate = (pc: Json): FieldError[] => {
    const errs: FieldError[] = [];
    const name = pc.metadata.name as string;
    const system = SYSTEM_PRIORITY_CLASSES.find((s) => s.name === name);
    if (name.startsWith('system-') && !system) {
      errs.push(
        fieldForbidden(
          'metadata.name',
          `priority class names with 'system-' prefix are reserved for system use only. error: ${name} is not a known system priority class`,
        ),
      );
    } else if (!system && typeof pc.value === 'number' && pc.value > HIGHEST_USER_PRIORITY) {
      errs.push(
        fieldForbidden(
          'value',
          `maximum allowed value of a user defined priority is ${HIGHEST_USER_PRIORITY}`,
        ),
      );
    }
    if (pc.preemptionPolicy !== undefined && !['PreemptLowerPriority', 'Never'].includes(pc.preemptionPolicy))
      errs.push(
        fieldNotSupported('preemptionPolicy', pc.preemptionPolicy, ['Never', 'PreemptLowerPriority']),
      );
    return errs;
  };
  return {
    nameRule: 'subdomain',
    prepareCreate(pc) {
      pc.preemptionPolicy ??= 'PreemptLowerPriority';
      if (pc.globalDefault === true) {
        const other = cluster.globalDefaultPriorityClass();
        if (other)
          throw forbidden(
            { group: 'scheduling.k8s.io', resource: 'priorityclasses' },
            pc.metadata.name,
            `PriorityClass ${other.metadata.name} is already marked as default. Only one default can exist`,
          );
      }
    },
    validateCreate: validate,
    validateUpdate(pc, old) {
      const errs = validate(pc);
      if (pc.value !== old.value) errs.push(fieldForbidden('value', 'may not be changed in an update.'));
      if (
        (pc.preemptionPolicy ?? 'PreemptLowerPriority') !== (old.preemptionPolicy ?? 'PreemptLowerPriority')
      )
        errs.push(fieldForbidden('preemptionPolicy', 'may not be changed in an update.'));
      return errs;
    },
    normalize: (pc) => {
      // `globalDefault` is omitempty: a real server leaves out false.
      const out = orderTop(pc, ['value', 'globalDefault', 'description', 'preemptionPolicy']);
      if (out.globalDefault === false) delete out.globalDefault;
      return out;
    },
  };
}

export function priorityClassObject(
  cluster: SimState,
  s: (typeof SYSTEM_PRIORITY_CLASSES)[number],
  createdAt: number,
): JsonObject {
  const time = rfc3339(createdAt);
  return {
    kind: 'PriorityClass',
    apiVersion: 'scheduling.k8s.io/v1',
    metadata: {
      name: s.name,
      uid: cluster.uid('priorityclasses', s.name),
      generation: 1,
      creationTimestamp: time,
      managedFields: [
        {
          manager: 'kube-apiserver',
          operation: 'Update',
          apiVersion: 'scheduling.k8s.io/v1',
          time,
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:description': {}, 'f:preemptionPolicy': {}, 'f:value': {} },
        },
      ],
    },
    value: s.value,
    description: s.description,
    preemptionPolicy: 'PreemptLowerPriority',
  };
}

export function apiServiceStrategy(): Strategy {
  return {
    nameRule: 'none',
    prepareCreate(svc) {
      svc.status = {};
    },
    normalize(svc) {
      const out = orderTop(svc);
      if (isObject(out.spec)) {
        const spec = orderKeys(out.spec, [
          'service',
          'group',
          'version',
          'insecureSkipTLSVerify',
          'caBundle',
          'groupPriorityMinimum',
          'versionPriority',
        ]);
        if (isObject(spec.service)) spec.service = orderKeys(spec.service, ['namespace', 'name', 'port']);
        out.spec = spec;
      }
      if (isObject(out.status) && Array.isArray(out.status.conditions))
        out.status = {
          ...out.status,
          conditions: out.status.conditions.map((c: Json) => orderKeys(c, CONDITION_ORDER)),
        };
      return out;
    },
  };
}

/** The Available condition the aggregator's availability controller writes for an APIService. */
export function apiServiceAvailability(
  svc: Json,
  backend: 'available' | 'missing-service' | 'no-endpoints' | 'local',
  now: number,
): JsonObject {
  const prev = (svc.status?.conditions ?? []).find((c: Json) => c.type === 'Available');
  const ok = backend === 'available' || backend === 'local';
  const reason =
    backend === 'local'
      ? 'Local'
      : ok
        ? 'Passed'
        : backend === 'missing-service'
          ? 'ServiceNotFound'
          : 'MissingEndpoints';
  const svcRef = svc.spec?.service;
  const message =
    backend === 'local'
      ? 'Local APIServices are always available'
      : ok
        ? 'all checks passed'
        : backend === 'missing-service'
          ? `service/${svcRef?.name} in "${svcRef?.namespace}" is not present`
          : `endpoints for service/${svcRef?.name} in "${svcRef?.namespace}" have no addresses with port name "https"`;
  const status = ok ? 'True' : 'False';
  return {
    conditions: [
      {
        type: 'Available',
        status,
        lastTransitionTime: prev?.status === status ? prev.lastTransitionTime : rfc3339(now),
        reason,
        message,
      },
    ],
  };
}

export function genericStrategy(): Strategy {
  return { nameRule: 'subdomain' };
}
