import { z } from 'zod';
import { clusterAccess, describeAccessError } from '../shared/fleet/cluster-access.js';
import { scheduledHandler } from '../shared/handlers.js';
import { parseKubeconfigRef } from '../shared/k8s/kubeconfig-ref.js';

/**
 * Invoked synchronously by `fleetscope cluster register --aws`: loads the kubeconfig, assumes the
 * cluster's role if it has one, and reads the kube-system UID, with this function's role, which is what
 * member accounts trust. Answers `{ kubeSystemUid }` or `{ error }` (the reason, never a credential).
 */
export const handler = scheduledHandler({
  functionId: 'verify',
  input: z.object({ name: z.string().min(1).max(63), kubeconfig: z.unknown() }).strict(),
  run: async ({ name, kubeconfig }, { deps, logger }) => {
    try {
      const ref = parseKubeconfigRef(kubeconfig, deps.config.secretPrefix);
      const { kubeSystemUid } = await clusterAccess().verify(name, ref);
      logger.info('cluster verified', { cluster: name });
      return { kubeSystemUid };
    } catch (err) {
      const error = describeAccessError(err);
      logger.warn('cluster could not be verified', { cluster: name, error });
      return { error };
    }
  },
});
