import { type Capability, pattern } from '../platform/catalogue.js';
import { BALLOONS } from './events.js';

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
};
