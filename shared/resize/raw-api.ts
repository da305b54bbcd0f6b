/**
 * The resize mechanism's two calls over the raw JSON reader (the pods come back as plain JSON, which is
 * all the mechanism reads, without client-node's model classes: a cycle that resizes hundreds of pods
 * spends its CPU on them otherwise): PATCH pods/{name}/resize (strategic merge), GET pods/{name}.
 */
import { ClusterAccessError } from '../k8s/errors.js';
import type { RawReader } from '../k8s/raw-reader.js';
import type { ResizeApi } from './resizer.js';
import type { PodLike } from './types.js';

const podPath = (namespace: string, name: string) =>
  `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}`;

export function rawResizeApi(raw: RawReader): ResizeApi {
  return {
    patchResize: (namespace, name, body) =>
      raw.send<PodLike>(
        'resize pod',
        'PATCH',
        `${podPath(namespace, name)}/resize`,
        body,
        'application/strategic-merge-patch+json',
      ),
    readPod: async (namespace, name) => {
      try {
        return await raw.get<PodLike>(
          'read pod',
          podPath(namespace, name),
          {},
          { retry: { maxAttempts: 2 } },
        );
      } catch (err) {
        if (err instanceof ClusterAccessError && err.status === 404) return undefined;
        throw err;
      }
    },
  };
}
