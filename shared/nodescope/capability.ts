import { RECOMMENDATION_ANNOTATION } from '../cycle/views.js';
import { FLEETSCOPE_NAMESPACE } from '../features/model.js';
import type { FeaturedCapability } from '../features/spec.js';
import { VPA_CRD_NAME, VPA_GROUP } from '../kernel/crds/vpa.js';
import type { KubePermission } from '../platform/kube-permissions.js';
import { UPSTREAM_NAMESPACE, UPSTREAM_WEBHOOK } from './upstream-vpa.js';

const hooks = () => import('./feature-hooks.js');

/**
 * Node-scoped recommendations for DaemonSets (KEP-4943): each node's DaemonSet pod sized from that
 * node's own usage history with the upstream VPA recommender's math, applied by in-place resize.
 * It runs as the first phase of every cluster cycle (shared/cycle/capability.ts), whose period is its
 * sampling period; it has no function of its own.
 */
export const NODESCOPE = 'nodescope';

export const nodescopeCapability: FeaturedCapability = {
  id: NODESCOPE,
  description: 'Per-node recommendations for DaemonSet pods (KEP-4943), applied by in-place resize',
  functions: [],
  schedules: [],
  rules: [],
  /**
   * Turning node scope off: cycles stop resizing (TurningOff), then what fleetscope wrote goes, field
   * before schema: spec.scope is cleared from every VPA before the scoped CRD variant is reverted.
   */
  feature: {
    namespace: FLEETSCOPE_NAMESPACE,
    name: NODESCOPE,
    description: 'Per-node recommendations for DaemonSet pods (KEP-4943), applied by in-place resize',
    default: 'on',
    components: ['cycle/nodescope'],
    // A cycle every 5 minutes that runs at most 5: a cycle that saw "on" has ended after 10.
    usesWaitSeconds: 600,
    since: '0.1.0',
    enable: [],
    disable: [
      { task: 'wait-for-uses' },
      {
        task: 'clear-field',
        apiVersion: 'v1',
        resource: 'pods',
        kind: 'Pod',
        field: ['metadata', 'annotations', RECOMMENDATION_ANNOTATION],
      },
      {
        task: 'hook',
        hook: 'clear-vpa-status',
        title: "remove fleetscope's VPA condition and status.nodeScope",
      },
      {
        task: 'clear-field',
        apiVersion: 'autoscaling.k8s.io/v1',
        resource: 'verticalpodautoscalers',
        kind: 'VerticalPodAutoscaler',
        field: ['spec', 'scope'],
      },
      { task: 'hook', hook: 'revert-crd', title: 'revert the scoped VPA CRD variant to the stock schema' },
      // Kept for the history window instead, on request (features set ... --keep-state).
      { task: 'clear-state', prefixes: ['nodescope#'], keepDays: 8 },
    ],
    hooks: {
      'clear-vpa-status': { run: async (ctx) => (await hooks()).clearVpaStatus(ctx) },
      'revert-crd': { run: async (ctx) => (await hooks()).revertScopedCrd(ctx) },
    },
    leftovers: async (ctx) => (await hooks()).nodescopeLeftovers(ctx),
    origin: { capability: NODESCOPE },
  },
  kubernetes: nodescopePermissions(),
  // It runs as the first phase of the cluster cycle.
  requires: ['cycle'],
};

function nodescopePermissions(): KubePermission[] {
  const crds = { group: 'apiextensions.k8s.io', resources: ['customresourcedefinitions'] };
  return [
    { ...crds, verbs: ['get'], names: [VPA_CRD_NAME], why: 'whether the VPA CRD is installed and scoped' },
    {
      group: VPA_GROUP,
      resources: ['verticalpodautoscalers'],
      verbs: ['list'],
      why: 'finds node-scoped VPAs',
    },
    {
      group: VPA_GROUP,
      resources: ['verticalpodautoscalers/status'],
      verbs: ['patch'],
      why: 'the RecommendationProvided condition and status.nodeScope',
    },
    { group: 'apps', resources: ['daemonsets'], verbs: ['list'], why: 'the DaemonSets VPAs target' },
    {
      group: 'apps',
      resources: ['deployments'],
      verbs: ['list'],
      namespace: UPSTREAM_NAMESPACE,
      why: "whether upstream VPA's recommender, updater or admission controller runs beside it",
    },
    {
      group: 'admissionregistration.k8s.io',
      resources: ['mutatingwebhookconfigurations'],
      verbs: ['get'],
      names: [UPSTREAM_WEBHOOK],
      why: "whether upstream VPA's admission controller is registered",
    },
    {
      group: '',
      resources: ['events'],
      verbs: ['create'],
      why: 'an Event on a VPA that upstream VPA would also act on, or that is left to another recommender',
    },
    { group: '', resources: ['nodes'], verbs: ['list'], why: 'which nodes each DaemonSet can run on' },
    {
      group: '',
      resources: ['pods'],
      verbs: ['list', 'get'],
      why: "each DaemonSet's pods, and a pod before its resize",
    },
    { group: '', resources: ['pods'], verbs: ['patch'], why: 'the fleetscope.io/recommendation annotation' },
    { group: '', resources: ['pods/resize'], verbs: ['patch'], why: 'in-place resize of DaemonSet pods' },
    { group: 'metrics.k8s.io', resources: ['pods'], verbs: ['list'], why: "each DaemonSet's pod usage" },
    {
      group: '',
      resources: ['limitranges', 'resourcequotas'],
      verbs: ['list'],
      why: 'the LimitRanges and ResourceQuotas a resize must stay within, read before one is sent',
    },
    {
      group: VPA_GROUP,
      resources: ['verticalpodautoscalers'],
      verbs: ['patch'],
      why: 'turning node scope off clears spec.scope from VPAs (KEP-3920)',
      feature: { name: 'turn-off', default: true },
    },
    {
      ...crds,
      verbs: ['update'],
      names: [VPA_CRD_NAME],
      why: 'turning node scope off reverts the scoped VPA CRD to the stock schema (KEP-3920)',
      feature: { name: 'turn-off', default: true },
    },
    {
      ...crds,
      verbs: ['create'],
      why: 'recommendations install-crd, where the VPA CRD is absent',
      feature: { name: 'install-crd', default: false },
    },
    {
      ...crds,
      verbs: ['update'],
      names: [VPA_CRD_NAME],
      why: 'recommendations install-crd adds spec.scope to the VPA CRD',
      feature: { name: 'install-crd', default: false },
    },
  ];
}
