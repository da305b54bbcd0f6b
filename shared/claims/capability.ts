import { FLEETSCOPE_NAMESPACE } from '../features/model.js';
import type { FeaturedCapability } from '../features/spec.js';
import { readKubeSystem } from '../fleet/capability.js';
import { pattern } from '../platform/catalogue.js';
import type { KubePermission } from '../platform/kube-permissions.js';
import { CLUSTER_PROPERTY, OCM_CLUSTER_CLAIM } from './crd.js';
import { clusterIdentityContext } from './observability.js';
import { DynamoClaimStore } from './store-dynamo.js';

/**
 * Cluster identity (KEP-2149): id.k8s.io and clusterset.k8s.io claims, unique and immutable, kept in
 * DynamoDB and written into every cluster as ClusterProperty objects (and OCM ClusterClaims).
 */
export const CLAIMS = 'claims';

const hooks = () => import('./feature-hooks.js');

export const claimsCapability: FeaturedCapability = {
  id: CLAIMS,
  // Every function's log lines and metrics carry the cluster's ID and ClusterSet (KEP-2149 diagnostics).
  invocationContext: ({ logger, metrics, deps }, clusterOf) =>
    clusterIdentityContext(
      logger,
      metrics,
      () => new DynamoClaimStore(deps().db, deps().config.table),
      clusterOf,
    ),
  description: 'Cluster ID and ClusterSet membership claims (KEP-2149), kept in DynamoDB and in each cluster',
  functions: [
    {
      id: 'claims',
      entry: 'functions/claims-sync.ts',
      description:
        "Writes one cluster's claims into it: on registration, after each change, and on the drift check",
      memoryMb: 512,
      timeoutSeconds: 60,
      access: { table: 'readwrite', putEvents: true, kubeconfigSecrets: true, idempotency: true },
      reservedConcurrency: 10,
    },
    {
      id: 'claims-reconcile',
      entry: 'functions/claims-reconcile.ts',
      description:
        'Repairs what an interrupted join, leave or move left in DynamoDB (guards and pending changes)',
      memoryMb: 256,
      timeoutSeconds: 120,
      access: { table: 'readwrite', putEvents: true, kubeconfigSecrets: false, idempotency: false },
      reservedConcurrency: 1,
    },
  ],
  schedules: [
    {
      id: 'claims-reconcile',
      description: 'Repair interrupted ClusterSet membership changes',
      everyMinutes: 15,
      target: 'claims-reconcile',
      input: { task: 'reconcile' },
    },
    {
      id: 'claims',
      description: "Drift check: compare every cluster's in-cluster claims with DynamoDB and repair them",
      everyMinutes: 15,
      target: 'dispatch',
      input: { capability: CLAIMS },
      after: ['claims-reconcile'],
    },
  ],
  /**
   * Off is refused while the cluster is in a ClusterSet (a wait that names the membership); then every
   * claim fleetscope wrote goes, except id.k8s.io (KEP-2149: the ID lives as long as the cluster). The
   * identity stays in DynamoDB, so turning claims on again gives the cluster the same ID.
   */
  feature: {
    namespace: FLEETSCOPE_NAMESPACE,
    name: CLAIMS,
    description: 'Cluster ID and ClusterSet membership claims (KEP-2149)',
    default: 'on',
    components: ['claims'],
    // The drift check every 15 minutes, each run at most a minute.
    usesWaitSeconds: 16 * 60,
    since: '0.1.0',
    enable: [],
    disable: [
      { task: 'hook', hook: 'not-in-clusterset', title: 'wait until the cluster is in no ClusterSet' },
      { task: 'wait-for-uses' },
      { task: 'hook', hook: 'remove-claims', title: 'remove the claims fleetscope wrote, except id.k8s.io' },
      { task: 'clear-state', prefixes: ['claims#sync', 'claims#custom#'] },
    ],
    hooks: {
      'not-in-clusterset': { run: async (ctx) => (await hooks()).notInClusterSet(ctx) },
      'remove-claims': { run: async (ctx) => (await hooks()).removeWrittenClaims(ctx) },
    },
    leftovers: async (ctx) => (await hooks()).claimsLeftovers(ctx),
    origin: { capability: CLAIMS },
  },
  rules: [
    {
      id: 'claims-on-request',
      description: "Drift check of one cluster's claims",
      pattern: pattern(['ClusterWorkRequested'], { capability: [CLAIMS] }),
      target: 'claims',
    },
    {
      id: 'claims-on-registration',
      description: 'Give a newly registered cluster its id.k8s.io; clean up after deregistration',
      pattern: pattern(['ClusterRegistered', 'ClusterDeregistered']),
      target: 'claims',
    },
    {
      id: 'claims-on-change',
      description: 'Write a changed claim into its cluster',
      pattern: pattern(['ClusterClaimsChanged'], { origin: ['registry'] }),
      target: 'claims',
    },
  ],
  kubernetes: claimsPermissions(),
};

function claimsPermissions(): KubePermission[] {
  // Claims are listed, created, merge-patched and deleted; never read one by one, never replaced.
  const objects = (r: { group: string; plural: string }, why: string): KubePermission => ({
    group: r.group,
    resources: [r.plural],
    verbs: ['list', 'create', 'patch', 'delete'],
    why,
  });
  return [
    readKubeSystem,
    {
      group: 'apiextensions.k8s.io',
      resources: ['customresourcedefinitions'],
      verbs: ['get'],
      names: [CLUSTER_PROPERTY.crdName, OCM_CLUSTER_CLAIM.crdName],
      why: 'which claim CRDs the cluster serves, and in which versions',
    },
    {
      group: 'apiextensions.k8s.io',
      resources: ['customresourcedefinitions'],
      verbs: ['create'],
      why: 'installs the ClusterProperty CRD where it is absent (claims config --create-crd)',
      feature: { name: 'create-crd', default: true },
    },
    objects(CLUSTER_PROPERTY, 'keeps the ClusterProperty claims in line with DynamoDB'),
    objects(OCM_CLUSTER_CLAIM, 'mirrors the claims to OCM ClusterClaims on OCM-managed clusters'),
  ];
}
