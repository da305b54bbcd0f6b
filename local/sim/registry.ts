/**
 * The resource types a simulated apiserver knows: names, scope, verbs and subresources, as discovery
 * reports them. core/v1 mirrors a real 1.32 apiserver (recorded 11a) so discovery-driven clients see
 * the usual API; resources without special behaviour are plain stored objects.
 */
import { createHash } from 'node:crypto';
import type { Json } from './json.js';

export interface SubresourceDef {
  name: string;
  kind: string;
  verbs: string[];
  /** Set when the subresource's kind lives in another group (pods/eviction -> policy/v1). */
  group?: string;
  version?: string;
}

export interface CustomInfo {
  /** Per served version: the openAPIV3Schema, printer columns and whether /status exists. */
  versions: Record<string, { schema: Json; columns: Json[]; status: boolean; selectableFields: string[] }>;
  crdName: string;
}

export interface ResourceDef {
  group: string;
  /** Served versions, preferred first. */
  versions: string[];
  storageVersion: string;
  resource: string;
  singular: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  subresources: SubresourceDef[];
  /** Sets metadata.generation and bumps it on spec changes. */
  hasGeneration: boolean;
  /** DELETE answers with the object rather than a Status. */
  returnDeletedObject: boolean;
  /** PUT without metadata.resourceVersion is allowed (false for custom resources). */
  allowUnconditionalUpdate: boolean;
  /** PUT of a missing object creates it. */
  allowCreateOnUpdate: boolean;
  /** Discovery only: requests answer 405 (e.g. bindings handled elsewhere). */
  virtual?: boolean;
  custom?: CustomInfo;
}

/** The store collection of a resource: `pods`, `daemonsets.apps`, `clusterproperties.about.k8s.io`. */
export const collectionId = (r: { group: string; resource: string }): string =>
  r.group ? `${r.resource}.${r.group}` : r.resource;

export function storageVersionHash(group: string, version: string, kind: string): string {
  return createHash('sha256')
    .update(`${group}/${version}/${kind}`)
    .digest()
    .subarray(0, 8)
    .toString('base64');
}

const ALL = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const NS_VERBS = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];
const GPU = ['get', 'patch', 'update'];

interface Short {
  resource: string;
  kind: string;
  namespaced: boolean;
  verbs?: string[];
  shortNames?: string[];
  categories?: string[];
  subresources?: SubresourceDef[];
  singular?: string;
  hasGeneration?: boolean;
  returnDeletedObject?: boolean;
  allowCreateOnUpdate?: boolean;
  /** false where the real strategy's AllowUnconditionalUpdate() is false (CRDs, APIServices, quotas). */
  allowUnconditionalUpdate?: boolean;
  virtual?: boolean;
}

function def(group: string, version: string, s: Short): ResourceDef {
  return {
    group,
    versions: [version],
    storageVersion: version,
    resource: s.resource,
    singular: s.singular ?? s.kind.toLowerCase(),
    kind: s.kind,
    listKind: `${s.kind}List`,
    namespaced: s.namespaced,
    verbs: s.verbs ?? ALL,
    shortNames: s.shortNames,
    categories: s.categories,
    subresources: s.subresources ?? [],
    hasGeneration: s.hasGeneration ?? false,
    returnDeletedObject: s.returnDeletedObject ?? false,
    allowUnconditionalUpdate: s.allowUnconditionalUpdate ?? true,
    allowCreateOnUpdate: s.allowCreateOnUpdate ?? false,
    virtual: s.virtual,
  };
}

const status = (kind: string): SubresourceDef => ({ name: 'status', kind, verbs: GPU });

/** Built-in resources for a server version; `resize` says whether pods/resize is registered. */
export function builtinResources(opts: { resize: boolean }): ResourceDef[] {
  const podSubs: SubresourceDef[] = [
    { name: 'attach', kind: 'PodAttachOptions', verbs: ['create', 'get'] },
    { name: 'binding', kind: 'Binding', verbs: ['create'] },
    { name: 'ephemeralcontainers', kind: 'Pod', verbs: GPU },
    { name: 'eviction', kind: 'Eviction', verbs: ['create'], group: 'policy', version: 'v1' },
    { name: 'exec', kind: 'PodExecOptions', verbs: ['create', 'get'] },
    { name: 'log', kind: 'Pod', verbs: ['get'] },
    { name: 'portforward', kind: 'PodPortForwardOptions', verbs: ['create', 'get'] },
    { name: 'proxy', kind: 'PodProxyOptions', verbs: ['create', 'delete', 'get', 'patch', 'update'] },
    ...(opts.resize ? [{ name: 'resize', kind: 'Pod', verbs: GPU }] : []),
    status('Pod'),
  ];
  return [
    def('', 'v1', {
      resource: 'bindings',
      kind: 'Binding',
      namespaced: true,
      verbs: ['create'],
      virtual: true,
    }),
    def('', 'v1', {
      resource: 'componentstatuses',
      kind: 'ComponentStatus',
      namespaced: false,
      verbs: ['get', 'list'],
      shortNames: ['cs'],
      singular: 'componentstatus',
      virtual: true,
    }),
    def('', 'v1', { resource: 'configmaps', kind: 'ConfigMap', namespaced: true, shortNames: ['cm'] }),
    def('', 'v1', {
      resource: 'endpoints',
      kind: 'Endpoints',
      namespaced: true,
      shortNames: ['ep'],
      singular: 'endpoints',
    }),
    def('', 'v1', { resource: 'events', kind: 'Event', namespaced: true, shortNames: ['ev'] }),
    def('', 'v1', { resource: 'limitranges', kind: 'LimitRange', namespaced: true, shortNames: ['limits'] }),
    def('', 'v1', {
      resource: 'namespaces',
      kind: 'Namespace',
      namespaced: false,
      verbs: NS_VERBS,
      shortNames: ['ns'],
      returnDeletedObject: true,
      subresources: [{ name: 'finalize', kind: 'Namespace', verbs: ['update'] }, status('Namespace')],
    }),
    def('', 'v1', {
      resource: 'nodes',
      kind: 'Node',
      namespaced: false,
      shortNames: ['no'],
      allowCreateOnUpdate: false,
      subresources: [
        { name: 'proxy', kind: 'NodeProxyOptions', verbs: ['create', 'delete', 'get', 'patch', 'update'] },
        status('Node'),
      ],
    }),
    def('', 'v1', {
      resource: 'persistentvolumeclaims',
      kind: 'PersistentVolumeClaim',
      namespaced: true,
      shortNames: ['pvc'],
      subresources: [status('PersistentVolumeClaim')],
    }),
    def('', 'v1', {
      resource: 'persistentvolumes',
      kind: 'PersistentVolume',
      namespaced: false,
      shortNames: ['pv'],
      subresources: [status('PersistentVolume')],
    }),
    def('', 'v1', {
      resource: 'pods',
      kind: 'Pod',
      namespaced: true,
      shortNames: ['po'],
      categories: ['all'],
      returnDeletedObject: true,
      subresources: podSubs,
    }),
    def('', 'v1', { resource: 'podtemplates', kind: 'PodTemplate', namespaced: true }),
    def('', 'v1', {
      resource: 'replicationcontrollers',
      kind: 'ReplicationController',
      namespaced: true,
      shortNames: ['rc'],
      categories: ['all'],
      hasGeneration: true,
      subresources: [
        { name: 'scale', kind: 'Scale', verbs: GPU, group: 'autoscaling', version: 'v1' },
        status('ReplicationController'),
      ],
    }),
    def('', 'v1', {
      resource: 'resourcequotas',
      kind: 'ResourceQuota',
      namespaced: true,
      shortNames: ['quota'],
      allowUnconditionalUpdate: false,
      subresources: [status('ResourceQuota')],
    }),
    def('', 'v1', { resource: 'secrets', kind: 'Secret', namespaced: true }),
    def('', 'v1', {
      resource: 'serviceaccounts',
      kind: 'ServiceAccount',
      namespaced: true,
      shortNames: ['sa'],
      subresources: [
        {
          name: 'token',
          kind: 'TokenRequest',
          verbs: ['create'],
          group: 'authentication.k8s.io',
          version: 'v1',
        },
      ],
    }),
    def('', 'v1', {
      resource: 'services',
      kind: 'Service',
      namespaced: true,
      shortNames: ['svc'],
      categories: ['all'],
      returnDeletedObject: true,
      subresources: [
        { name: 'proxy', kind: 'ServiceProxyOptions', verbs: ['create', 'delete', 'get', 'patch', 'update'] },
        status('Service'),
      ],
    }),
    def('apps', 'v1', { resource: 'controllerrevisions', kind: 'ControllerRevision', namespaced: true }),
    def('apps', 'v1', {
      resource: 'daemonsets',
      kind: 'DaemonSet',
      namespaced: true,
      shortNames: ['ds'],
      categories: ['all'],
      hasGeneration: true,
      subresources: [status('DaemonSet')],
    }),
    def('apps', 'v1', {
      resource: 'deployments',
      kind: 'Deployment',
      namespaced: true,
      shortNames: ['deploy'],
      categories: ['all'],
      hasGeneration: true,
      subresources: [
        { name: 'scale', kind: 'Scale', verbs: GPU, group: 'autoscaling', version: 'v1' },
        status('Deployment'),
      ],
    }),
    def('apps', 'v1', {
      resource: 'replicasets',
      kind: 'ReplicaSet',
      namespaced: true,
      shortNames: ['rs'],
      categories: ['all'],
      hasGeneration: true,
      subresources: [
        { name: 'scale', kind: 'Scale', verbs: GPU, group: 'autoscaling', version: 'v1' },
        status('ReplicaSet'),
      ],
    }),
    def('apps', 'v1', {
      resource: 'statefulsets',
      kind: 'StatefulSet',
      namespaced: true,
      shortNames: ['sts'],
      categories: ['all'],
      hasGeneration: true,
      subresources: [
        { name: 'scale', kind: 'Scale', verbs: GPU, group: 'autoscaling', version: 'v1' },
        status('StatefulSet'),
      ],
    }),
    def('scheduling.k8s.io', 'v1', {
      resource: 'priorityclasses',
      kind: 'PriorityClass',
      namespaced: false,
      shortNames: ['pc'],
      hasGeneration: true,
    }),
    def('coordination.k8s.io', 'v1', { resource: 'leases', kind: 'Lease', namespaced: true }),
    // Stored only: the simulator calls no webhooks (upstream VPA's admission controller registers one).
    def('admissionregistration.k8s.io', 'v1', {
      resource: 'mutatingwebhookconfigurations',
      kind: 'MutatingWebhookConfiguration',
      namespaced: false,
      categories: ['api-extensions'],
      hasGeneration: true,
    }),
    ...rbacResources(),
    def('apiextensions.k8s.io', 'v1', {
      resource: 'customresourcedefinitions',
      kind: 'CustomResourceDefinition',
      namespaced: false,
      shortNames: ['crd', 'crds'],
      categories: ['api-extensions'],
      hasGeneration: true,
      allowUnconditionalUpdate: false,
      subresources: [status('CustomResourceDefinition')],
    }),
    def('apiregistration.k8s.io', 'v1', {
      resource: 'apiservices',
      kind: 'APIService',
      namespaced: false,
      categories: ['api-extensions'],
      allowUnconditionalUpdate: false,
      subresources: [status('APIService')],
    }),
    def('authorization.k8s.io', 'v1', {
      resource: 'selfsubjectaccessreviews',
      kind: 'SelfSubjectAccessReview',
      namespaced: false,
      verbs: ['create'],
      virtual: true,
    }),
    def('authorization.k8s.io', 'v1', {
      resource: 'selfsubjectrulesreviews',
      kind: 'SelfSubjectRulesReview',
      namespaced: false,
      verbs: ['create'],
      virtual: true,
    }),
    def('authentication.k8s.io', 'v1', {
      resource: 'selfsubjectreviews',
      kind: 'SelfSubjectReview',
      namespaced: false,
      verbs: ['create'],
      virtual: true,
    }),
  ];
}

/** rbac.authorization.k8s.io/v1 (local/sim/rbac-objects.ts gives them their rules). */
function rbacResources(): ResourceDef[] {
  const rbac = (resource: string, kind: string, namespaced: boolean) =>
    def('rbac.authorization.k8s.io', 'v1', { resource, kind, namespaced });
  return [
    rbac('clusterrolebindings', 'ClusterRoleBinding', false),
    rbac('clusterroles', 'ClusterRole', false),
    rbac('rolebindings', 'RoleBinding', true),
    rbac('roles', 'Role', true),
  ];
}

/** metrics.k8s.io/v1beta1, served (by the simulated metrics-server) only when its APIService is available. */
export function metricsResources(): ResourceDef[] {
  const m = (resource: string, kind: string, namespaced: boolean): ResourceDef => ({
    ...def('metrics.k8s.io', 'v1beta1', { resource, kind, namespaced, verbs: ['get', 'list'] }),
    singular: '',
  });
  return [m('nodes', 'NodeMetrics', false), m('pods', 'PodMetrics', true)];
}

/** Group preference order for /apis, as the real server sorts built-in groups before extensions. */
export const GROUP_ORDER = [
  'apiregistration.k8s.io',
  'apps',
  'events.k8s.io',
  'authentication.k8s.io',
  'authorization.k8s.io',
  'autoscaling',
  'batch',
  'certificates.k8s.io',
  'networking.k8s.io',
  'policy',
  'rbac.authorization.k8s.io',
  'storage.k8s.io',
  'admissionregistration.k8s.io',
  'apiextensions.k8s.io',
  'scheduling.k8s.io',
  'coordination.k8s.io',
  'node.k8s.io',
  'discovery.k8s.io',
  'flowcontrol.apiserver.k8s.io',
];
