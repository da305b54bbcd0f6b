/**
 * The floor runs' HTTP: the benchmark cluster's API over one keep-alive TLS connection, each response
 * JSON-parsed and nothing else, counting requests and bytes. Like the cycle's reader it asks for gzip
 * and decompresses as the body arrives, so the floor includes what the cycle's reads must do.
 */
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { parse } from 'yaml';
import { podListFromProtobuf } from '../shared/cycle/pod-protobuf.js';
import { isProtobuf, PROTOBUF_OR_JSON } from '../shared/k8s/protobuf.js';
import { CLUSTER } from './spec.js';

type Query = Record<string, string | number | undefined>;
type List = { items?: Record<string, unknown>[]; metadata?: { continue?: string } };

export function apiFetcher(kubeconfigPath: string) {
  const kubeconfig = parse(readFileSync(kubeconfigPath, 'utf8'));
  const cluster = kubeconfig.clusters.find((c: { name: string }) => c.name === CLUSTER).cluster;
  const user = kubeconfig.users.find((u: { name: string }) => u.name === CLUSTER).user;
  // A bearer token (the simulator's) or a client certificate (a real kube-apiserver's admin).
  const b64 = (k: string) => (user[k] ? Buffer.from(user[k], 'base64') : undefined);
  const agent = new https.Agent({
    keepAlive: true,
    maxSockets: 4,
    ca: Buffer.from(cluster['certificate-authority-data'], 'base64'),
    cert: b64('client-certificate-data'),
    key: b64('client-key-data'),
  });
  const auth: Record<string, string> = user.token ? { authorization: `Bearer ${user.token}` } : {};
  const base = new URL(cluster.server);
  const stats = { requests: 0, wireBytes: 0, decodedBytes: 0 };

  /** `protobuf`: pods asked for and decoded as the cycle reads them (podListFromProtobuf). */
  function get(path: string, query: Query = {}, protobuf = false): Promise<unknown> {
    const url = new URL(path, base);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
    stats.requests++;
    return new Promise((resolve, reject) => {
      const req = https.request(
        url,
        {
          agent,
          headers: {
            ...auth,
            accept: protobuf ? PROTOBUF_OR_JSON : 'application/json',
            'accept-encoding': 'gzip',
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (d: Buffer) => {
            stats.wireBytes += d.length;
          });
          res.on('error', reject);
          const body: Readable =
            res.headers['content-encoding'] === 'gzip' ? res.pipe(createGunzip().on('error', reject)) : res;
          body.on('data', (d: Buffer) => chunks.push(d));
          body.on('end', () => {
            const body = Buffer.concat(chunks);
            stats.decodedBytes += body.length;
            // An error answer is no floor: the run fails, naming it.
            const status = res.statusCode ?? 0;
            if (status < 200 || status >= 300)
              return reject(
                new Error(`GET ${url.pathname} answered ${status}: ${body.toString('utf8').slice(0, 200)}`),
              );
            resolve(
              isProtobuf(res.headers['content-type'])
                ? podListFromProtobuf(body)
                : JSON.parse(body.toString('utf8')),
            );
          });
        },
      );
      req.on('error', reject);
      req.end();
    });
  }

  /** Every page of a list (pages of 1,000), its items kept as a caller would. */
  async function list(path: string, query: Query = {}, protobuf = false): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    let token: string | undefined;
    do {
      const page = (await get(path, { ...query, limit: 1000, continue: token }, protobuf)) as List;
      items.push(...(page.items ?? []));
      token = page.metadata?.continue || undefined;
    } while (token);
    return items;
  }

  /**
   * A watch: each event (one JSON line) handed to `onEvent` as it arrives, until `stop()` or the server
   * ends it. Watches are never compressed (kube-apiserver compresses API objects only).
   */
  /** A watch; `onEnd` once it ends, by the server or by a connection error (not by stop()). */
  function watch(
    path: string,
    query: Query,
    onEvent: (e: { type: string; object: unknown }) => void,
    onEnd: (why: string) => void = () => {},
  ) {
    const url = new URL(path, base);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
    stats.requests++;
    const req = https.request(url, {
      agent,
      headers: { ...auth, accept: 'application/json' },
    });
    let pending = '';
    let stopped = false;
    const end = (why: string) => {
      if (stopped) return;
      stopped = true;
      onEnd(why);
    };
    req.on('response', (res) => {
      if ((res.statusCode ?? 0) >= 300) {
        res.resume();
        return end(`answered ${res.statusCode}`);
      }
      res.on('error', (e) => end(e.message));
      res.on('end', () => end('ended by the server'));
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        stats.wireBytes += Buffer.byteLength(d);
        pending += d;
        let nl = pending.indexOf('\n');
        while (nl >= 0) {
          const line = pending.slice(0, nl);
          pending = pending.slice(nl + 1);
          if (line.trim()) onEvent(JSON.parse(line));
          nl = pending.indexOf('\n');
        }
      });
    });
    req.on('error', (e) => end(e.message));
    req.end();
    return {
      stop: () => {
        stopped = true;
        req.destroy();
      },
    };
  }

  return { get, list, watch, stats, close: () => agent.destroy() };
}

/** Runs `work` and prints the floor's one JSON line: CPU and wall time, requests, bytes, peak RSS. */
export async function measureFloor(
  api: ReturnType<typeof apiFetcher>,
  work: () => Promise<void>,
): Promise<void> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await work();
  const cpu = process.cpuUsage(cpu0);
  process.stdout.write(
    `${JSON.stringify({ cpuMs: (cpu.user + cpu.system) / 1000, wallMs: performance.now() - t0, ...api.stats, maxRssMiB: process.resourceUsage().maxRSS / 1024 })}\n`,
  );
  api.close();
}
