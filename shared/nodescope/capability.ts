import { VPA_CRD_NAME, VPA_GROUP } from '../kernel/crds/vpa.js';
import type { Capability } from '../platform/catalogue.js';
import type { KubePermission } from '../platform/kube-permissions.js';

/**
 * Node-scoped recommendations for DaemonSets (KEP-4943): each node's DaemonSet pod sized from that
 * node's own usage history with the upstream VPA recommender's math, applied by in-place resize.
 * It runs as the first phase of every cluster cycle (shared/cycle/capability.ts), whose period is its
 * sampling period; it has no function of its own.
 */
export const NODESCOPE = 'nodescope';

export const nodescopeCapability: Capability = {
  id: NODESCOPE,
  description: 'Per-node recommendations for DaemonSet pods (KEP-4943), applied by in-place resize',
  functions: [],
  schedules: [],
  rules: [],
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
