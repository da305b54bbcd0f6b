import { type Capability, pattern } from '../platform/catalogue.js';
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
};
