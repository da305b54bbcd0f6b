import type { FeaturedCapability } from '../features/spec.js';
import type { KubePermission } from '../platform/kube-permissions.js';
import { OWNER_LEASE } from './ownership.js';

/** Every capability that needs the cluster ID reads it from the kube-system namespace. */
export const readKubeSystem: KubePermission = {
  group: '',
  resources: ['namespaces'],
  verbs: ['get'],
  names: ['kube-system'],
  why: 'the kube-system namespace UID identifies the cluster',
};

/**
 * The fleet core: the dispatcher that turns each capability's schedule into one work request per
 * registered cluster (fan-out through the bus, so one slow cluster never holds up the others), and the
 * check registration runs through the control plane's own identity.
 */
export const fleetCapability: FeaturedCapability = {
  id: 'fleet',
  description: 'Fan-out of scheduled work to every registered cluster',
  functions: [
    {
      id: 'dispatch',
      entry: 'functions/dispatch.ts',
      description: 'Lists registered clusters and puts one ClusterWorkRequested event per cluster',
      memoryMb: 256,
      timeoutSeconds: 60,
      access: { table: 'read', putEvents: true, kubeconfigSecrets: false, idempotency: false },
      reservedConcurrency: 2,
    },
    {
      // Registration's check, run as the functions run: a member account's role trusts only the
      // control plane's cluster-access roles, so the CLI (`--aws`) cannot assume it with its own.
      id: 'verify',
      entry: 'functions/verify.ts',
      description: 'Checks that a cluster can be reached as the workers reach it, before it is registered',
      memoryMb: 512,
      timeoutSeconds: 60,
      access: { table: 'read', putEvents: false, kubeconfigSecrets: true, idempotency: false },
      reservedConcurrency: 2,
    },
  ],
  schedules: [],
  rules: [],
  kubernetes: [
    { ...readKubeSystem, why: 'registration reads the kube-system namespace UID' },
    // KEP-2149: a cluster rebuilt behind the same endpoint keeps its ID; registration refuses a second name
    // for a cluster that carries another registered cluster's ID (a 403 here would hide that).
    {
      group: 'about.k8s.io',
      resources: ['clusterproperties'],
      verbs: ['get'],
      names: ['id.k8s.io'],
      why: 'registration reads the id.k8s.io ClusterProperty a cluster already carries',
    },
    // The owner lease (ownership.ts): taken at registration, renewed by every cycle and claims sync.
    {
      group: 'coordination.k8s.io',
      resources: ['leases'],
      verbs: ['get', 'update'],
      names: [OWNER_LEASE.name],
      why: `reads and renews the owner lease (${OWNER_LEASE.namespace}): which control plane acts on the cluster`,
    },
    {
      group: 'coordination.k8s.io',
      resources: ['leases'],
      verbs: ['create'],
      why: `creates the owner lease in ${OWNER_LEASE.namespace} at registration (cluster-wide like the Feature objects there: a Role could not be bound before fleetscope creates the namespace)`,
    },
    {
      group: '',
      resources: ['namespaces'],
      verbs: ['create'],
      why: `creates ${OWNER_LEASE.namespace} for the owner lease on a new cluster`,
    },
  ],
};
