/**
 * The Kubernetes resources claims are written as (pure data, no client), and their CRDs, defined once
 * for fleetscope and for the simulator:
 * - `ClusterProperty` (about.k8s.io), the KEP-2149 CRD from kubernetes-sigs/about-api
 *   (config/crd/about.k8s.io_clusterproperties.yaml at 970300d6b), plus the `api-approved.kubernetes.io`
 *   annotation that the protected `*.k8s.io` groups require (without it the apiserver answers 422);
 * - OCM's `ClusterClaim` (cluster.open-cluster-management.io/v1alpha1), never created by fleetscope: it is
 *   written only to clusters that already serve it (OCM-managed clusters). Its CRD is here for the
 *   simulator and the tests, which play such a cluster.
 */
import { storedVersion } from '../kernel/crds/version.js';

export const CLUSTER_PROPERTY = {
  group: 'about.k8s.io',
  plural: 'clusterproperties',
  kind: 'ClusterProperty',
  crdName: 'clusterproperties.about.k8s.io',
  /** v1alpha1 is served by every published version of the CRD; v1beta1 (storage) since March 2026. */
  versions: ['v1beta1', 'v1alpha1'],
} as const;

export const OCM_CLUSTER_CLAIM = {
  group: 'cluster.open-cluster-management.io',
  plural: 'clusterclaims',
  kind: 'ClusterClaim',
  crdName: 'clusterclaims.cluster.open-cluster-management.io',
  versions: ['v1alpha1'],
} as const;

export type ClaimResource = typeof CLUSTER_PROPERTY | typeof OCM_CLUSTER_CLAIM;

/** The KEP's approval PR, the value the about-api project gives the annotation. */
export const API_APPROVED_ANNOTATION = 'api-approved.kubernetes.io';
export const API_APPROVED_VALUE = 'https://github.com/kubernetes/enhancements/pull/3084';

/** Objects fleetscope created carry this label; only those are ever deleted when no longer desired. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_VALUE = 'fleetscope';

const schema = {
  openAPIV3Schema: {
    description:
      'ClusterProperty is a resource provides a way to store identification related,\ncluster scoped information for multi-cluster tools while creating flexibility\nfor implementations.',
    properties: {
      apiVersion: {
        description:
          'APIVersion defines the versioned schema of this representation of an object.\nServers should convert recognized schemas to the latest internal value, and\nmay reject unrecognized values.\nMore info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources',
        type: 'string',
      },
      kind: {
        description:
          'Kind is a string value representing the REST resource this object represents.\nServers may infer this from the endpoint the client submits requests to.\nCannot be updated.\nIn CamelCase.\nMore info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
        type: 'string',
      },
      metadata: { type: 'object' },
      spec: {
        description: 'ClusterPropertySpec defines the desired state of ClusterProperty.',
        properties: { value: { description: 'ClusterProperty value', minLength: 1, type: 'string' } },
        required: ['value'],
        type: 'object',
      },
      status: {
        description: 'ClusterPropertyStatus defines the observed state of ClusterProperty.',
        type: 'object',
      },
    },
    type: 'object',
  },
};

const printerColumns = [
  { jsonPath: '.spec.value', name: 'value', type: 'string' },
  { jsonPath: '.metadata.creationTimestamp', name: 'age', type: 'date' },
];

/**
 * The ClusterProperty CRD as fleetscope creates it (the published manifest + the approval annotation).
 * `approved: false` leaves the annotation out, as the published file does: the apiserver refuses that.
 */
export function clusterPropertyCrd(opts: { approved?: boolean } = {}) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: CLUSTER_PROPERTY.crdName,
      annotations: {
        'controller-gen.kubebuilder.io/version': 'v0.18.0',
        ...(opts.approved === false ? {} : { [API_APPROVED_ANNOTATION]: API_APPROVED_VALUE }),
      },
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE },
    },
    spec: {
      group: CLUSTER_PROPERTY.group,
      names: {
        categories: ['multicluster'],
        kind: 'ClusterProperty',
        listKind: 'ClusterPropertyList',
        plural: 'clusterproperties',
        singular: 'clusterproperty',
      },
      scope: 'Cluster',
      versions: [
        {
          additionalPrinterColumns: printerColumns,
          name: 'v1alpha1',
          schema,
          served: true,
          storage: false,
          subresources: { status: {} },
        },
        {
          additionalPrinterColumns: printerColumns,
          name: 'v1beta1',
          schema,
          served: true,
          storage: true,
          subresources: { status: {} },
        },
      ],
    },
  };
}

/** OCM's ClusterClaim CRD as OCM installs it (v1alpha1, cluster-scoped, value 1..1024 characters, no status). */
export function clusterClaimCrd() {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: OCM_CLUSTER_CLAIM.crdName },
    spec: {
      group: OCM_CLUSTER_CLAIM.group,
      names: {
        kind: 'ClusterClaim',
        listKind: 'ClusterClaimList',
        plural: 'clusterclaims',
        singular: 'clusterclaim',
      },
      scope: 'Cluster',
      versions: [
        storedVersion('v1alpha1', {
          spec: { type: 'object', properties: { value: { type: 'string', maxLength: 1024, minLength: 1 } } },
        }),
      ],
    },
  };
}

/** The version to use from a CRD's served versions: the newest one fleetscope knows. */
export function pickVersion(resource: ClaimResource, served: string[]): string | undefined {
  return resource.versions.find((v) => served.includes(v));
}

/** A claim object's body. */
export function claimObject(resource: ClaimResource, version: string, name: string, value: string) {
  return {
    apiVersion: `${resource.group}/${version}`,
    kind: resource.kind,
    metadata: { name, labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE } },
    spec: { value },
  };
}
