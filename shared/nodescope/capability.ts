import { VPA_CRD_NAME, VPA_GROUP } from '../kernel/crds/vpa.js';
import { type Capability, pattern } from '../platform/catalogue.js';
import type { KubePermission } from '../platform/kube-permissions.js';
import { DEFAULT_SETTINGS } from './settings.js';

/**
 * Node-scoped recommendations for DaemonSets (KEP-4943): each node's DaemonSet pod sized from that
 * node's own usage history with the upstream VPA recommender's math, applied by in-place resize.
 */
export const NODESCOPE = 'nodescope';

export const nodescopeCapability: Capability = {
  id: NODESCOPE,
  description: 'Per-node recommendations for DaemonSet pods (KEP-4943), applied by in-place resize',
  functions: [
    {
      id: 'nodescope',
      entry: 'functions/nodescope-worker.ts',
      description: "One cycle of one cluster's node-scoped DaemonSets: collect, recommend, store, resize",
      // 1,769 MB is one full vCPU: the cycle is CPU-bound (JSON of every pod, then the math).
      memoryMb: 1769,
      timeoutSeconds: 300,
      access: { table: 'readwrite', putEvents: true, kubeconfigSecrets: true, idempotency: true },
      reservedConcurrency: 10,
    },
  ],
  schedules: [
    {
      id: NODESCOPE,
      description: 'Collect usage and recommend per node for every node-scoped DaemonSet of every cluster',
      everyMinutes: DEFAULT_SETTINGS.periodMinutes,
      target: 'dispatch',
      input: { capability: NODESCOPE },
    },
  ],
  rules: [
    {
      id: 'nodescope-on-request',
      description: 'A nodescope cycle of one cluster',
      pattern: pattern(['ClusterWorkRequested'], { capability: [NODESCOPE] }),
      target: 'nodescope',
    },
  ],
  kubernetes: nodescopePermissions(),
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
