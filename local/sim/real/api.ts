/**
 * The few HTTP calls the simulated nodes make to a real kube-apiserver, over the project's client
 * (client-node's kubeconfig handling, TLS verified against the kubeconfig's CA). Bodies are sent as
 * JSON as they are, since client-node's models drop fields they do not know (1.36 pod status fields).
 */

import type { ClusterClient } from '../../../shared/k8s/client.js';
import { ClusterAccessError } from '../../../shared/k8s/errors.js';
import { RawReader } from '../../../shared/k8s/raw-reader.js';
import type { Json } from '../json.js';
import type { ResourceDef } from '../registry.js';

export interface RealApi {
  get<T = Json>(path: string, query?: Record<string, string>): Promise<T>;
  list(path: string, query?: Record<string, string>): Promise<Json[]>;
  send<T = Json>(
    method: 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    path: string,
    body: unknown,
    type?: string,
  ): Promise<T>;
}

export function realApi(client: ClusterClient): RealApi {
  const raw = new RawReader(client);
  // One attempt per write: a failed controller write is re-decided from a fresh read, not retried blind.
  const once = { retry: { maxAttempts: 1 }, expected: [404, 409] };
  return {
    get: (path, query = {}) => raw.get(`GET ${path}`, path, query),
    async list(path, query = {}) {
      const out: Json[] = [];
      await raw.list<Json>(`LIST ${path}`, path, query, (items) => out.push(...items), {
        pageSize: 500,
        onRestart: () => {
          out.length = 0;
        },
      });
      return out;
    },
    send: (method, path, body, type) =>
      raw.send(`${method} ${path}`, method, path, body, type ?? 'application/json', once),
  };
}

/** The HTTP status of a failed call (undefined for a transport failure). */
export const statusOf = (err: unknown): number | undefined =>
  err instanceof ClusterAccessError ? err.status : undefined;

/** `/api/v1[/namespaces/ns]/pods[/name[/sub]]` for a resource type of the simulator's registry. */
export function restPath(def: ResourceDef, namespace?: string, name?: string, sub?: string): string {
  const base = def.group ? `/apis/${def.group}/${def.storageVersion}` : `/api/${def.storageVersion}`;
  const ns = def.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  const tail = name ? `/${encodeURIComponent(name)}${sub ? `/${sub}` : ''}` : '';
  return `${base}${ns}/${def.resource}${tail}`;
}

/** `ns/name` or `name` into its parts. */
export function splitKey(key: string): { namespace?: string; name: string } {
  const i = key.indexOf('/');
  return i < 0 ? { name: key } : { namespace: key.slice(0, i), name: key.slice(i + 1) };
}
