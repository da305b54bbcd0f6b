import { pattern } from '../platform/catalogue.js';
import type { KubePermission } from '../platform/kube-permissions.js';
import { FEATURE_CRD } from './crd.js';
import { FLEETSCOPE_NAMESPACE } from './model.js';
import type { FeaturedCapability } from './spec.js';

/**
 * Feature lifecycle (KEP-3920): every other capability is a feature of each cluster (its `feature`
 * field), turned on and off by transitions that perform ordered tasks, and rolled across the fleet in
 * waves. The reconcilers own clusters by deterministic hashing (shared/features/sharding.ts): each
 * schedule is one shard, so the fleet's clusters are spread over them without any coordination traffic.
 */
export const FEATURES = 'features';
/** Concurrent scheduled reconcilers; each owns the clusters (and rollouts) that hash to it. */
export const RECONCILERS = 2;
export const RECONCILE_EVERY_MINUTES = 2;

export const featuresCapability: FeaturedCapability = {
  id: FEATURES,
  description:
    'Feature lifecycle (KEP-3920): each capability a feature per cluster, turned on and off by ordered tasks, rolled out in waves',
  functions: [
    {
      id: 'features-reconcile',
      entry: 'functions/features-reconcile.ts',
      description:
        "Moves the features of its shard's clusters through their transitions, and advances its rollouts",
      memoryMb: 512,
      timeoutSeconds: 180,
      access: { table: 'readwrite', putEvents: true, kubeconfigSecrets: true, idempotency: false },
      reservedConcurrency: RECONCILERS,
    },
    {
      id: FEATURES,
      entry: 'functions/features.ts',
      description:
        'Reconciles a feature as soon as its desired value changes, announces features to a new cluster, advances a started rollout',
      memoryMb: 512,
      timeoutSeconds: 180,
      access: { table: 'readwrite', putEvents: true, kubeconfigSecrets: true, idempotency: true },
      reservedConcurrency: 5,
    },
  ],
  schedules: Array.from({ length: RECONCILERS }, (_, shard) => ({
    id: `features-reconcile-${shard}`,
    description: `Feature transitions and rollouts of shard ${shard + 1} of ${RECONCILERS}`,
    everyMinutes: RECONCILE_EVERY_MINUTES,
    target: 'features-reconcile',
    input: { shard, shards: RECONCILERS },
  })),
  // The mirror of the records; each capability declares what its own transitions do (turn-off rules).
  kubernetes: featuresPermissions(),
  rules: [
    {
      id: 'features-on-desired',
      description: "A feature's desired value changed: start its transition now",
      pattern: pattern(['FeatureDesiredChanged']),
      target: FEATURES,
    },
    {
      id: 'features-on-use',
      description: 'A component reported a new value during a transition: look at the transition now',
      pattern: pattern(['FeatureUseReported']),
      target: FEATURES,
    },
    {
      id: 'features-on-registration',
      description: 'Announce every feature to a new cluster; forget a deregistered one',
      pattern: pattern(['ClusterRegistered', 'ClusterDeregistered']),
      target: FEATURES,
    },
    {
      id: 'features-on-rollout',
      description: 'A rollout started or resumed: start its wave now',
      pattern: pattern(['FeatureRolloutChanged'], { phase: ['started', 'resumed'] }),
      target: FEATURES,
    },
  ],
};

function featuresPermissions(): KubePermission[] {
  const crds = { group: 'apiextensions.k8s.io', resources: ['customresourcedefinitions'] };
  const features = { group: FEATURE_CRD.group, resources: [FEATURE_CRD.plural] };
  return [
    {
      ...crds,
      verbs: ['get', 'patch'],
      names: [FEATURE_CRD.crdName],
      why: 'whether the Feature CRD is installed, and bringing it up to this version (uses epochs)',
    },
    { ...crds, verbs: ['create'], why: 'installs the Feature CRD where it is absent' },
    {
      group: '',
      resources: ['namespaces'],
      verbs: ['get'],
      names: [FLEETSCOPE_NAMESPACE],
      why: "fleetscope's own features live there",
    },
    {
      group: '',
      resources: ['namespaces'],
      verbs: ['create'],
      why: `creates ${FLEETSCOPE_NAMESPACE} where it is absent`,
    },
    { ...features, verbs: ['get', 'create', 'patch'], why: 'mirrors each Feature record into its cluster' },
    {
      group: FEATURE_CRD.group,
      resources: [`${FEATURE_CRD.plural}/status`],
      verbs: ['patch'],
      why: "the Feature's state and tasks; clears the uses components reported",
    },
    {
      group: '',
      resources: ['events'],
      verbs: ['create'],
      why: 'a Warning Event on a Feature whose transition is stuck',
    },
  ];
}
