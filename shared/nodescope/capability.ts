import type { Capability } from '../platform/catalogue.js';

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
};
