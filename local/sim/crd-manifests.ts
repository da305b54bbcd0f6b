/**
 * CRD manifests the simulator installs or that tests install into it: the VerticalPodAutoscaler CRDs
 * (`vpaCrd: true`), the about-api ClusterProperty CRD (KEP-2149) and the OCM ClusterClaim CRD. The
 * schemas keep the fields clients use, with the facts file's constraints (section 5), not every
 * documentation string of the upstream manifests.
 */
import type { JsonObject } from './json.js';

const str = { type: 'string' };
const resourceList = {
  type: 'object',
  additionalProperties: {
    anyOf: [{ type: 'integer' }, { type: 'string' }],
    pattern:
      '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$',
    'x-kubernetes-int-or-string': true,
  },
};
const meta = { apiVersion: str, kind: str, metadata: { type: 'object' } };

export function vpaCrd(): JsonObject {
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
  const schema = {
    type: 'object',
    required: ['spec'],
    properties: {
      ...meta,
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
          recommendation: {
            type: 'object',
            properties: { containerRecommendations: { type: 'array', items: recommendation } },
          },
        },
      },
    },
  };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: 'verticalpodautoscalers.autoscaling.k8s.io',
      annotations: { 'api-approved.kubernetes.io': 'https://github.com/kubernetes/kubernetes/pull/63797' },
    },
    spec: {
      group: 'autoscaling.k8s.io',
      names: {
        kind: 'VerticalPodAutoscaler',
        listKind: 'VerticalPodAutoscalerList',
        plural: 'verticalpodautoscalers',
        shortNames: ['vpa'],
        singular: 'verticalpodautoscaler',
      },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: schema },
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Mode', type: 'string', jsonPath: '.spec.updatePolicy.updateMode' },
            {
              name: 'CPU',
              type: 'string',
              jsonPath: '.status.recommendation.containerRecommendations[0].target.cpu',
            },
            {
              name: 'Mem',
              type: 'string',
              jsonPath: '.status.recommendation.containerRecommendations[0].target.memory',
            },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
        },
      ],
    },
  };
}

export function vpaCheckpointCrd(): JsonObject {
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
    metadata: {
      name: 'verticalpodautoscalercheckpoints.autoscaling.k8s.io',
      annotations: { 'api-approved.kubernetes.io': 'https://github.com/kubernetes/kubernetes/pull/63797' },
    },
    spec: {
      group: 'autoscaling.k8s.io',
      names: {
        kind: 'VerticalPodAutoscalerCheckpoint',
        listKind: 'VerticalPodAutoscalerCheckpointList',
        plural: 'verticalpodautoscalercheckpoints',
        shortNames: ['vpacheckpoint'],
        singular: 'verticalpodautoscalercheckpoint',
      },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                ...meta,
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
              },
            },
          },
        },
      ],
    },
  };
}

/** about.k8s.io ClusterProperty as published (no maxLength: the upstream marker is misspelled), approved. */
export function clusterPropertyCrd(opts: { approved?: boolean; maxLength?: number } = {}): JsonObject {
  const value: JsonObject = { description: 'ClusterProperty value', type: 'string', minLength: 1 };
  if (opts.maxLength !== undefined) value.maxLength = opts.maxLength;
  const version = (name: string, storage: boolean) => ({
    name,
    served: true,
    storage,
    schema: {
      openAPIV3Schema: {
        type: 'object',
        properties: {
          ...meta,
          spec: { type: 'object', required: ['value'], properties: { value } },
          status: { type: 'object' },
        },
      },
    },
    subresources: { status: {} },
    additionalPrinterColumns: [
      { name: 'value', type: 'string', jsonPath: '.spec.value' },
      { name: 'age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
  });
  const annotations: JsonObject = {};
  if (opts.approved !== false)
    annotations['api-approved.kubernetes.io'] = 'https://github.com/kubernetes/enhancements/pull/3084';
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'clusterproperties.about.k8s.io', annotations },
    spec: {
      group: 'about.k8s.io',
      names: {
        categories: ['multicluster'],
        kind: 'ClusterProperty',
        listKind: 'ClusterPropertyList',
        plural: 'clusterproperties',
        singular: 'clusterproperty',
      },
      scope: 'Cluster',
      versions: [version('v1alpha1', false), version('v1beta1', true)],
    },
  };
}

/** open-cluster-management ClusterClaim (v1alpha1, cluster-scoped, value 1..1024 characters, no status). */
export function clusterClaimCrd(): JsonObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'clusterclaims.cluster.open-cluster-management.io' },
    spec: {
      group: 'cluster.open-cluster-management.io',
      names: {
        kind: 'ClusterClaim',
        listKind: 'ClusterClaimList',
        plural: 'clusterclaims',
        singular: 'clusterclaim',
      },
      scope: 'Cluster',
      versions: [
        {
          name: 'v1alpha1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                ...meta,
                spec: {
                  type: 'object',
                  properties: { value: { type: 'string', maxLength: 1024, minLength: 1 } },
                },
              },
            },
          },
        },
      ],
    },
  };
}
