/** Raw HTTPS access to a simulated cluster (TLS verified against the simulator's CA). */
import { request } from 'node:https';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import type { SimCluster, Simulator } from '../../local/sim/index.js';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: parsed JSON of arbitrary shape
  json?: any;
}

export interface RawOptions {
  body?: unknown;
  contentType?: string;
  accept?: string;
  token?: string | null;
  ca?: string;
  timeoutMs?: number;
  /** More headers (an array value is sent as repeated headers). */
  headers?: Record<string, string | string[]>;
}

export function raw(
  cluster: SimCluster,
  method: string,
  path: string,
  o: RawOptions = {},
): Promise<RawResponse> {
  const url = new URL(path, cluster.server);
  const body =
    o.body === undefined ? undefined : typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
  const headers: Record<string, string | string[]> = { Accept: o.accept ?? 'application/json', ...o.headers };
  if (o.token !== null) headers.Authorization = `Bearer ${o.token ?? cluster.token}`;
  if (body !== undefined) {
    headers['Content-Type'] = o.contentType ?? 'application/json';
    headers['Content-Length'] = String(Buffer.byteLength(body));
  }
  return new Promise((resolve, reject) => {
    const req = request(
      {
        hostname: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method,
        headers,
        ca: o.ca ?? cluster.caData,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          if (String(res.headers['content-type'] ?? '').startsWith('application/json')) {
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (o.timeoutMs)
      req.setTimeout(o.timeoutMs, () => req.destroy(new Error(`timeout after ${o.timeoutMs} ms`)));
    if (body !== undefined) req.write(body);
    req.end();
  });
}

export function coreClient(sim: Simulator, name: string): CoreV1Api {
  const kc = new KubeConfig();
  kc.loadFromString(sim.kubeconfig());
  kc.setCurrentContext(name);
  return kc.makeApiClient(CoreV1Api);
}

export function kubeConfigFor(sim: Simulator, name: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(sim.kubeconfig());
  kc.setCurrentContext(name);
  return kc;
}
