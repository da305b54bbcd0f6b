import { FLEETSCOPE_NAMESPACE } from '../features/model.js';
import type { FeaturedCapability } from '../features/spec.js';
import { pattern } from '../platform/catalogue.js';
import type { KubePermission } from '../platform/kube-permissions.js';
import { BALLOONS } from './events.js';
import { BALLOON_LABEL, BALLOON_NAME, BALLOON_NAMESPACE, PRIORITY_CLASS } from './manifests.js';
import { RBAC_FEATURE } from './opt-out-step.js';

const deflate = (title: string) => ({ task: 'hook' as const, hook: 'deflate', title });

/**
 * Resizable nodes with balloon pods (KEP-5620). The sizing runs in every cluster cycle (shared/cycle),
 * after node scope and over the same read of the cluster; explicit requests (NodeResizeRequested, the
 * cloud-provider story) are served at once by their own function, reading only the node concerned.
 */
export const balloonsCapability: FeaturedCapability = {
  id: BALLOONS,
  description:
    'Balloon pods that resize nodes in place (KEP-5620): explicit sizes, pool policies, N kubelets per host',
  functions: [
    {
      id: 'balloons',
      entry: 'functions/balloons-worker.ts',
      description:
        "Serves a NodeResizeRequested event: checks it against the node, stores it, resizes that node's balloon",
      memoryMb: 512,
      timeoutSeconds: 60,
      access: { table: 'readwrite', putEvents: true, kubeconfigSecrets: true, idempotency: true },
      reservedConcurrency: 5,
    },
    {
      id: 'balloons-grow',
      entry: 'functions/balloons-grow.ts',
      description:
        'Every minute per cluster: finds pods Pending for resources and Deferred resizes, and sizes the balloons at once',
      memoryMb: 1769,
      timeoutSeconds: 60,
      access: { table: 'readwrite', putEvents: true, kubeconfigSecrets: true, idempotency: true },
      reservedConcurrency: 10,
    },
  ],
  // Grow on demand within a minute (shared/balloons/grow.ts): the 5-minute cycle is too slow for work
  // that waits. The pass is light where nothing waits: one query, or one query and two small lists.
  schedules: [
    {
      id: 'balloons-grow',
      description: 'Grow on demand: pending pods and Deferred resizes on ballooned nodes, every minute',
      everyMinutes: 1,
      target: 'dispatch',
      input: { capability: BALLOONS },
    },
  ],
  /**
   * Turning balloons off must not leave capacity that doesn't exist: every balloon is deflated first,
   * then (no cycle inflating any more) again, and only then do the DaemonSet and PriorityClass go.
   */
  feature: {
    namespace: FLEETSCOPE_NAMESPACE,
    name: BALLOONS,
    description: 'Balloon pods that resize nodes in place (KEP-5620)',
    default: 'on',
    components: ['cycle/balloons', 'balloons/request', 'balloons/grow'],
    // A cycle every 5 minutes that runs at most 5: a cycle that saw "on" has ended after 10.
    usesWaitSeconds: 600,
    kubernetes: { min: '1.33', why: 'balloons are resized in place (pods/resize, on by default from 1.33)' },
    since: '0.1.0',
    enable: [],
    disable: [
      deflate('deflate every balloon to the floor'),
      { task: 'wait-for-uses' },
      deflate('deflate what a cycle still in flight inflated'),
      // No cycle runs any more: nothing puts the key back (KEP-5836, 1.37+; no write before 1.37).
      { task: 'hook', hook: 'optOut', title: "remove fleetscope's key from nodes' disableResizePreemption" },
      {
        task: 'delete-objects',
        apiVersion: 'apps/v1',
        resource: 'daemonsets',
        kind: 'DaemonSet',
        namespace: BALLOON_NAMESPACE,
        name: BALLOON_NAME,
      },
      {
        task: 'delete-objects',
        apiVersion: 'scheduling.k8s.io/v1',
        resource: 'priorityclasses',
        kind: 'PriorityClass',
        name: PRIORITY_CLASS,
      },
      {
        task: 'wait-for-no-objects',
        apiVersion: 'v1',
        resource: 'pods',
        kind: 'Pod',
        namespace: BALLOON_NAMESPACE,
        selector: `${BALLOON_LABEL}=true`,
      },
      { task: 'clear-state', prefixes: ['balloons#'] },
    ],
    hooks: {
      deflate: { run: async (ctx) => (await import('./feature-hooks.js')).deflateEveryBalloon(ctx) },
      optOut: {
        run: async (ctx) => (await import('./feature-hooks.js')).releaseResizePreemptionOptOut(ctx),
      },
    },
    leftovers: async (ctx) => (await import('./feature-hooks.js')).balloonsLeftovers(ctx),
    origin: { capability: BALLOONS },
  },
  rules: [
    {
      id: 'balloons-on-request',
      description: 'An explicit node size (the VM was resized, or is about to be)',
      pattern: pattern(['NodeResizeRequested']),
      target: 'balloons',
    },
    {
      id: 'balloons-grow-on-dispatch',
      description: "A cluster's grow-on-demand pass",
      pattern: pattern(['ClusterWorkRequested'], { capability: [BALLOONS] }),
      target: 'balloons-grow',
    },
  ],
  kubernetes: balloonsPermissions(),
  // Its sizing runs in the cluster cycle, after node scope.
  requires: ['cycle', 'nodescope'],
};

function balloonsPermissions(): KubePermission[] {
  const inKubeSystem = { namespace: BALLOON_NAMESPACE };
  const pcs = { group: 'scheduling.k8s.io', resources: ['priorityclasses'] };
  const ds = { ...inKubeSystem, group: 'apps', resources: ['daemonsets'] };
  return [
    {
      group: '',
      resources: ['nodes'],
      verbs: ['list', 'get'],
      why: 'each node, and the node of an explicit request',
    },
    {
      group: '',
      resources: ['pods'],
      verbs: ['list'],
      why: 'what runs on each node, pending pods, a pod of a ResizeDeferred event',
    },
    {
      group: '',
      resources: ['events'],
      verbs: ['list'],
      why: "the kubelet's ResizeDeferred events (grow on demand)",
    },
    { group: 'metrics.k8s.io', resources: ['nodes'], verbs: ['list'], why: "each node's usage" },
    {
      group: '',
      resources: ['nodes'],
      verbs: ['patch'],
      why: "KEP-5836 (1.37+): adds and removes fleetscope's own key in managed nodes' spec.podPreemptionPolicy.disableResizePreemption (a JSON patch fenced on the resourceVersion; nothing else of a node is written)",
      feature: { name: RBAC_FEATURE, default: false },
    },
    {
      ...pcs,
      verbs: ['get', 'patch', 'delete'],
      names: [PRIORITY_CLASS],
      why: "the balloons' PriorityClass (drift repaired: globalDefault patched back, an immutable field replaced)",
    },
    { ...pcs, verbs: ['create'], why: "creates the balloons' PriorityClass where it is absent" },
    { ...ds, verbs: ['get', 'patch', 'delete'], names: [BALLOON_NAME], why: 'the balloon DaemonSet' },
    { ...ds, verbs: ['create'], why: 'creates the balloon DaemonSet where it is absent' },
    {
      ...inKubeSystem,
      group: '',
      resources: ['pods'],
      verbs: ['get'],
      why: 'a balloon pod before its resize',
    },
    {
      ...inKubeSystem,
      group: '',
      resources: ['pods/resize'],
      verbs: ['patch'],
      why: 'inflates and deflates balloon pods in place',
    },
    {
      ...inKubeSystem,
      group: '',
      resources: ['events'],
      verbs: ['create'],
      why: 'Events on balloon pods and the DaemonSet',
    },
    {
      ...inKubeSystem,
      group: '',
      resources: ['limitranges', 'resourcequotas'],
      verbs: ['list'],
      why: 'a LimitRange or ResourceQuota in the balloon namespace, reported with what it breaks',
    },
  ];
}
