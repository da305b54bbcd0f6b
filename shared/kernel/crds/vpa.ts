/**
 * The VerticalPodAutoscaler CRDs of kubernetes/autoscaler (autoscaling.k8s.io/v1), defined once (pure
 * data): the stock manifests the simulator installs, and the base of nodescope's scoped variant
 * (shared/nodescope/crd.ts). The schemas keep the fields clients use, with upstream's constraints, not
 * every documentation string of the upstream manifests.
 */
import { OBJECT_META, storedVersion } from './version.js';

export const VPA_GROUP = 'autoscaling.k8s.io';
export const VPA_CRD_NAME = `verticalpodautoscalers.${VPA_GROUP}`;
const VPA_CHECKPOINT_CRD_NAME = `verticalpodautoscalercheckpoints.${VPA_GROUP}`;
/** The approval the autoscaling.k8s.io group carries (a protected *.k8s.io group). */
const API_APPROVED = { 'api-approved.kubernetes.io': 'https://github.com/kubernetes/kubernetes/pull/63797' };

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

/** What a variant adds to the v1 schema: properties of spec and of status, and CEL rules on spec. */
export interface VpaSchemaExtension {
  spec?: Record<string, unknown>;
  specValidations?: unknown[];
  status?: Record<string, unknown>;
}

type PrinterColumn = { name: string; type: string; jsonPath: string };

/** The stock printer columns (kubectl get vpa). */
const STOCK_COLUMNS: PrinterColumn[] = [
  { name: 'Mode', type: 'string', jsonPath: '.spec.updatePolicy.updateMode' },
  { name: 'CPU', type: 'string', jsonPath: '.status.recommendation.containerRecommendations[0].target.cpu' },
  {
    name: 'Mem',
    type: 'string',
    jsonPath: '.status.recommendation.containerRecommendations[0].target.memory',
  },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
];

/** The v1 openAPIV3Schema of VerticalPodAutoscaler, with a variant's additions. */
export function vpaSchema(ext: VpaSchemaExtension = {}): Record<string, unknown> {
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
      ...OBJECT_META,
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
          ...ext.spec,
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
                // As of VPA 1.7 (InPlace: alpha, behind upstream's InPlace gate).
                enum: ['Off', 'Initial', 'Recreate', 'InPlaceOrRecreate', 'InPlace', 'Auto'],
              },
            },
          },
        },
        ...(ext.specValidations ? { 'x-kubernetes-validations': ext.specValidations } : {}),
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
          ...ext.status,
          recommendation: {
            type: 'object',
            properties: { containerRecommendations: { type: 'array', items: recommendation } },
          },
        },
      },
    },
  };
}

/** The CRD's v1 version: served, storage, with the status subresource. */
export function vpaV1Version(
  ext: VpaSchemaExtension = {},
  printerColumns: PrinterColumn[] = STOCK_COLUMNS,
): Record<string, unknown> {
  return {
    name: 'v1',
    served: true,
    storage: true,
    schema: { openAPIV3Schema: vpaSchema(ext) },
    subresources: { status: {} },
    additionalPrinterColumns: printerColumns,
  };
}

/** The VerticalPodAutoscaler CRD with one version (the stock v1 unless given) and extra annotations. */
export function vpaCrd(
  v1: Record<string, unknown> = vpaV1Version(),
  annotations: Record<string, string> = {},
): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: VPA_CRD_NAME, annotations: { ...API_APPROVED, ...annotations } },
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
      versions: [v1],
    },
  };
}

/** The VerticalPodAutoscalerCheckpoint CRD (the recommender's saved histograms). */
export function vpaCheckpointCrd(): Record<string, unknown> {
  const histogram = {
    type: 'object',
    properties: {
      bucketWeights: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      referenceTimestamp: { type: 'string', format: 'date-time', nullable: true },
      totalWeight: { type: 'number' },
    },
  };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: VPA_CHECKPOINT_CRD_NAME, annotations: { ...API_APPROVED } },
    spec: {
      group: VPA_GROUP,
      names: {
        kind: 'VerticalPodAutoscalerCheckpoint',
        listKind: 'VerticalPodAutoscalerCheckpointList',
        plural: 'verticalpodautoscalercheckpoints',
        shortNames: ['vpacheckpoint'],
        singular: 'verticalpodautoscalercheckpoint',
      },
      scope: 'Namespaced',
      versions: [
        storedVersion('v1', {
          spec: { type: 'object', properties: { containerName: str, vpaObjectName: str } },
          status: {
            type: 'object',
            properties: {
              cpuHistogram: histogram,
              firstSampleStart: { type: 'string', format: 'date-time', nullable: true },
              lastSampleStart: { type: 'string', format: 'date-time', nullable: true },
              lastUpdateTime: { type: 'string', format: 'date-time', nullable: true },
              memoryHistogram: histogram,
              totalSamplesCount: { type: 'integer' },
              version: str,
            },
          },
        }),
      ],
    },
  };
}
