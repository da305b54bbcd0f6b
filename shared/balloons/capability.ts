import { type Capability, pattern } from '../platform/catalogue.js';
import type { KubePermission } from '../platform/kube-permissions.js';
import { BALLOONS } from './events.js';
import { BALLOON_NAME, BALLOON_NAMESPACE, PRIORITY_CLASS } from './manifests.js';

/**
 * Resizable nodes with balloon pods (KEP-5620). The sizing runs in every cluster cycle (shared/cycle),
 * after node scope and over the same read of the cluster; explicit requests (NodeResizeRequested, the
 * cloud-provider story) are served at once by their own function, reading only the node concerned.
 */
export const balloonsCapability: Capability = {
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
  ],
  schedules: [],
  rules: [
    {
      id: 'balloons-on-request',
      description: 'An explicit node size (the VM was resized, or is about to be)',
      pattern: pattern(['NodeResizeRequested']),
      target: 'balloons',
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
    { group: '', resources: ['pods'], verbs: ['list'], why: 'what runs on each node' },
    { group: 'metrics.k8s.io', resources: ['nodes'], verbs: ['list'], why: "each node's usage" },
    { ...pcs, verbs: ['get', 'delete'], names: [PRIORITY_CLASS], why: "the balloons' PriorityClass" },
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
    { ...inKubeSystem, group: '', resources: ['events'], verbs: ['create'], why: 'Events on balloon pods' },
  ];
}
