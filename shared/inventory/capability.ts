import type { FeaturedCapability } from '../features/spec.js';
import { readKubeSystem } from '../fleet/capability.js';
import { pattern } from '../platform/catalogue.js';

/**
 * Inventory: reach every cluster, record its version, kube-system UID, node count and whether the
 * metrics API answers. It is the platform's health check and the first thing run after registration.
 */
export const INVENTORY = 'inventory';

export const inventoryCapability: FeaturedCapability = {
  id: INVENTORY,
  description: 'Reachability, version, node count and metrics API of every registered cluster',
  functions: [
    {
      id: 'inventory',
      entry: 'functions/inventory.ts',
      description: 'Inventories one cluster',
      memoryMb: 512,
      timeoutSeconds: 60,
      access: { table: 'readwrite', putEvents: true, kubeconfigSecrets: true, idempotency: true },
      reservedConcurrency: 10,
    },
  ],
  schedules: [
    {
      id: 'inventory',
      description: 'Inventory every registered cluster',
      everyMinutes: 15,
      target: 'dispatch',
      input: { capability: INVENTORY },
    },
  ],
  rules: [
    {
      id: 'inventory-on-request',
      description: 'Scheduled inventory of one cluster',
      pattern: pattern(['ClusterWorkRequested'], { capability: [INVENTORY] }),
      target: 'inventory',
    },
    {
      id: 'inventory-on-registration',
      description: 'Inventory a cluster as soon as it is registered',
      pattern: pattern(['ClusterRegistered']),
      target: 'inventory',
    },
  ],
  // GET /version is readable by every authenticated user (the default system:public-info-viewer role).
  kubernetes: [
    readKubeSystem,
    { group: '', resources: ['nodes'], verbs: ['list'], why: 'counts the nodes' },
    {
      group: 'metrics.k8s.io',
      resources: ['nodes'],
      verbs: ['list'],
      why: 'probes whether the metrics API answers',
    },
  ],
};
