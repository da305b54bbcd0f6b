/**
 * What a process reads from the Kubernetes API, counted on its HTTPS responses whoever sends the
 * requests (the raw reader, client-node, a watch), so the figures follow whatever the reader does:
 * requests, bytes on the wire (the body as the server sent it, gzip-compressed or not) and bytes
 * decoded. A gzip body's decoded size is its trailer's ISIZE (the uncompressed length mod 2^32), so
 * nothing is decompressed twice. DynamoDB (plain HTTP to dynalite) is not counted.
 */
import { subscribe } from 'node:diagnostics_channel';
import type { ClientRequest, IncomingMessage } from 'node:http';

export interface WireStats {
  requests: number;
  /** Requests by verb: "list" (GET of a collection or object), "watch", "write". */
  byVerb: Record<string, number>;
  /** Writes by method and path, names left out: `PATCH /api/v1/namespaces/* /pods/* /resize`. */
  writes?: Record<string, number>;
  wireBytes: number;
  decodedBytes: number;
}

export function tapKubernetesApi(): { stats: WireStats; reset(): WireStats } {
  let stats: WireStats = { requests: 0, byVerb: {}, wireBytes: 0, decodedBytes: 0 };
  subscribe('http.client.request.start', (message) => {
    const { request } = message as { request: ClientRequest };
    if (request.protocol !== 'https:') return;
    const counted = stats;
    const verb =
      request.method !== 'GET' ? 'write' : /[?&]watch=(1|true)/.test(request.path) ? 'watch' : 'get';
    counted.requests++;
    counted.byVerb[verb] = (counted.byVerb[verb] ?? 0) + 1;
    if (verb === 'write') {
      const what = `${request.method} ${writePath(request.path)}`;
      counted.writes = { ...counted.writes, [what]: (counted.writes?.[what] ?? 0) + 1 };
    }
    request.once('response', (res: IncomingMessage) => count(res, counted));
  });
  return {
    get stats() {
      return stats;
    },
    reset() {
      const was = stats;
      stats = { requests: 0, byVerb: {}, wireBytes: 0, decodedBytes: 0 };
      return was;
    },
  };
}

function count(res: IncomingMessage, stats: WireStats): void {
  const gzip = String(res.headers['content-encoding'] ?? '').toLowerCase() === 'gzip';
  let tail: Buffer = Buffer.alloc(0);
  res.on('data', (d: Buffer) => {
    stats.wireBytes += d.length;
    if (!gzip) stats.decodedBytes += d.length;
    else tail = d.length >= 4 ? d.subarray(d.length - 4) : Buffer.concat([tail, d]).subarray(-4);
  });
  res.on('end', () => {
    if (gzip && tail.length === 4) stats.decodedBytes += tail.readUInt32LE(0);
  });
}

/** A write's path without the objects' names and the query, so that writes of a kind count together. */
function writePath(path: string): string {
  return (path.split('?')[0] ?? '')
    .replace(/\/namespaces\/[^/]+/, '/namespaces/*')
    .replace(/\/([a-z.]+)\/[^/]+(\/[a-z]+)?$/, (_m, kind: string, sub = '') => `/${kind}/*${sub}`);
}
