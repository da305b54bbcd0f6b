/**
 * The VerticalPodAutoscaler CRD variant that carries KEP-4943's `spec.scope`, with validation: an
 * OpenAPI enum (the only scope is `node`) and a CEL rule (`node` only when targetRef.kind is DaemonSet),
 * so the apiserver itself refuses node scope on anything else. Status gains `nodeScope`, the structured
 * summary fleetscope writes.
 *
 * Installing it over an existing VPA CRD changes only the v1 schema (other versions and their stored
 * objects stay as they are): existing VPAs keep working, and `spec.scope` stops being pruned. Rollback is
 * re-applying the stock CRD; the annotation fleetscope.io/scope: node works with either.
 */
import type { ClusterClient } from '../k8s/client.js';
import { ClusterAccessError } from '../k8s/errors.js';
import { VPA_CRD_NAME, VPA_GROUP } from './collect.js';
import { RawReader } from './raw.js';

const str = { type: 'string' };
const QUANTITY_PATTERN =
  '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$';
const resourceList = {
  type: 'object',
  additionalProperties: {
    anyOf: [{ type: 'integer' }, { type: 'string' }],
    pattern: QUANTITY_PATTERN,
    'x-kubernetes-int-or-string': true,
  },
};

/** The CEL rule on spec (also checked by fleetscope itself, for clusters with the stock CRD). */
export const SCOPE_RULE = {
  rule: "!has(self.scope) || self.scope != 'node' || self.targetRef.kind == 'DaemonSet'",
  message: 'scope: node applies to DaemonSets only (targetRef.kind must be DaemonSet)',
  fieldPath: '.scope',
  reason: 'FieldValueForbidden',
};

export const SCOPE_PROPERTY = {
  type: 'string',
  enum: ['node'],
  description:
    'Scope of the recommendation (KEP-4943). "node": each node\'s pod of the target DaemonSet gets its own recommendation from that node\'s history. Only valid when targetRef.kind is DaemonSet.',
};

/** The v1 openAPIV3Schema of the scoped variant. */
export function scopedVpaSchema(): Record<string, unknown> {
  const containerPolicy = {
    type: 'object',
    properties: {
      containerName: str,
      controlledResources: { type: 'array', items: { type: 'string', enum: ['cpu', 'memory'] } },
      controlledValues: { type: 'string', enum: ['RequestsAndLimits', 'RequestsOnly'] },
      maxAllowed: resourceList,
      minAllowed: resourceList,
      mode: { type: 'string', enum: ['Auto', 'Off'] },
    },
  };
  const recommendation = {
    type: 'object',
    required: ['target'],
    properties: {
      containerName: str,
      lowerBound: resourceList,
      target: resourceList,
      uncappedTarget: resourceList,
      upperBound: resourceList,
    },
  };
  return {
    type: 'object',
    required: ['spec'],
    properties: {
      apiVersion: str,
      kind: str,
      metadata: { type: 'object' },
      spec: {
        type: 'object',
        required: ['targetRef'],
        properties: {
          recommenders: {
            type: 'array',
            items: { type: 'object', required: ['name'], properties: { name: str } },
          },
          resourcePolicy: {
            type: 'object',
            properties: { containerPolicies: { type: 'array', items: containerPolicy } },
          },
          scope: SCOPE_PROPERTY,
          targetRef: {
            type: 'object',
            required: ['kind', 'name'],
            properties: { apiVersion: str, kind: str, name: str },
            'x-kubernetes-map-type': 'atomic',
          },
          updatePolicy: {
            type: 'object',
            properties: {
              evictionRequirements: {
                type: 'array',
                items: {
                  type: 'object',
                  required: ['changeRequirement', 'resources'],
                  properties: {
                    changeRequirement: {
                      type: 'string',
                      enum: ['TargetHigherThanRequests', 'TargetLowerThanRequests'],
                    },
                    resources: { type: 'array', items: str },
                  },
                },
              },
              minReplicas: { type: 'integer', format: 'int32' },
              updateMode: {
                type: 'string',
                enum: ['Off', 'Initial', 'Recreate', 'InPlaceOrRecreate', 'Auto'],
              },
            },
          },
        },
        'x-kubernetes-validations': [SCOPE_RULE],
      },
      status: {
        type: 'object',
        properties: {
          conditions: {
            type: 'array',
            items: {
              type: 'object',
              required: ['status', 'type'],
              properties: {
                lastTransitionTime: { type: 'string', format: 'date-time' },
                message: str,
                reason: str,
                status: str,
                type: str,
              },
            },
          },
          nodeScope: {
            type: 'object',
            description: 'Summary of the node-scoped recommendations (fleetscope)',
            'x-kubernetes-preserve-unknown-fields': true,
          },
          recommendation: {
            type: 'object',
            properties: { containerRecommendations: { type: 'array', items: recommendation } },
          },
        },
      },
    },
  };
}

/** The whole CRD, for a cluster that has none (kubectl apply -f of this is the same). */
export function scopedVpaCrd(): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: VPA_CRD_NAME,
      annotations: {
        'api-approved.kubernetes.io': 'https://github.com/kubernetes/kubernetes/pull/63797',
        'fleetscope.io/variant': 'scope',
      },
    },
    spec: {
      group: VPA_GROUP,
      names: {
        kind: 'VerticalPodAutoscaler',
        listKind: 'VerticalPodAutoscalerList',
        plural: 'verticalpodautoscalers',
        shortNames: ['vpa'],
        singular: 'verticalpodautoscaler',
      },
      scope: 'Namespaced',
      versions: [v1Version()],
    },
  };
}

function v1Version(): Record<string, unknown> {
  return {
    name: 'v1',
    served: true,
    storage: true,
    schema: { openAPIV3Schema: scopedVpaSchema() },
    subresources: { status: {} },
    additionalPrinterColumns: [
      { name: 'Mode', type: 'string', jsonPath: '.spec.updatePolicy.updateMode' },
      { name: 'Scope', type: 'string', jsonPath: '.spec.scope' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
  };
}

/**
 * Installs the variant: creates the CRD when absent, else replaces its v1 schema (keeping every other
 * version). Raw JSON throughout: client-node's typed models rename the x-kubernetes-* keys.
 */
export async function installScopedCrd(client: ClusterClient): Promise<'created' | 'updated' | 'unchanged'> {
  const raw = new RawReader(client);
  const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions`;
  let existing: CrdJson | undefined;
  try {
    existing = await raw.get<CrdJson>('get VPA CRD', `${path}/${VPA_CRD_NAME}`);
  } catch (err) {
    if (!(err instanceof ClusterAccessError && err.status === 404)) throw err;
  }
  if (!existing) {
    await raw.send('create VPA CRD', 'POST', path, scopedVpaCrd());
    return 'created';
  }
  const versions = existing.spec?.versions ?? [];
  const v1 = versions.find((v) => v.name === 'v1');
  if (v1?.schema?.openAPIV3Schema?.properties?.spec?.properties?.scope) return 'unchanged';
  const next: Record<string, unknown>[] = versions.map((v) =>
    v.name === 'v1' ? { ...v, ...v1Version(), storage: v.storage ?? true } : v,
  );
  if (!v1) next.push({ ...v1Version(), storage: false });
  const meta = existing.metadata ?? {};
  await raw.send('replace VPA CRD', 'PUT', `${path}/${VPA_CRD_NAME}`, {
    ...existing,
    metadata: { ...meta, annotations: { ...meta.annotations, 'fleetscope.io/variant': 'scope' } },
    spec: { ...existing.spec, versions: next },
  });
  return 'updated';
}

interface CrdJson {
  metadata?: { resourceVersion?: string; annotations?: Record<string, string> };
  spec?: {
    versions?: {
      name?: string;
      storage?: boolean;
      schema?: { openAPIV3Schema?: { properties?: { spec?: { properties?: { scope?: unknown } } } } };
    }[];
  };
}
