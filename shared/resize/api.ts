/**
 * The resize mechanism's two calls over the cluster access layer (timeouts, retries of 429/5xx,
 * Retry-After, request counting): PATCH pods/{name}/resize as a strategic-merge patch, GET pods/{name}.
 */
import type { ClusterClient } from '../k8s/client.js';
import { ClusterAccessError } from '../k8s/errors.js';
import type { ResizeApi } from './resizer.js';
import type { PodLike } from './types.js';

export function clusterResizeApi(client: ClusterClient): ResizeApi {
  return {
    patchResize: (namespace, name, body) =>
      client.patch('resize pod', 'strategic-merge', (options) =>
        client.core.patchNamespacedPodResize({ name, namespace, body }, options),
      ) as Promise<PodLike>,
    readPod: async (namespace, name) => {
      try {
        return (await client.call('read pod', () => client.core.readNamespacedPod({ name, namespace }), {
          retry: { maxAttempts: 2 },
        })) as PodLike;
      } catch (err) {
        if (err instanceof ClusterAccessError && err.status === 404) return undefined;
        throw err;
      }
    },
  };
}

/** Whether the server lists pods/resize in its core discovery document (one request). */
export async function hasResizeSubresource(client: ClusterClient): Promise<boolean> {
  const list = await client.call('discover core API', () => client.core.getAPIResources());
  return (list.resources ?? []).some((r) => r.name === 'pods/resize');
}
