/**
 * The floor a balloon cycle's CPU time is compared with: the same API responses (the two balloon
 * objects, every node, every pod, node metrics) fetched on one keep-alive TLS connection and
 * JSON-parsed, and nothing else, in a fresh process.
 */
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { parse } from 'yaml';
import { CLUSTER } from './spec.js';

const kubeconfig = parse(readFileSync(process.env.BENCH_KUBECONFIG ?? '', 'utf8'));
const cluster = kubeconfig.clusters.find((c: { name: string }) => c.name === CLUSTER).cluster;
const user = kubeconfig.users.find((u: { name: string }) => u.name === CLUSTER).user;
const agent = new https.Agent({
  keepAlive: true,
  maxSockets: 4,
  ca: Buffer.from(cluster['certificate-authority-data'], 'base64'),
});
const base = new URL(cluster.server);
let requests = 0;
let bytes = 0;

function get(
  path: string,
  query: Record<string, string | number | undefined> = {},
): Promise<{ metadata?: { continue?: string } }> {
  const url = new URL(path, base);
  for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
  requests++;
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      { agent, headers: { authorization: `Bearer ${user.token}`, accept: 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('error', reject);
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          bytes += body.length;
          resolve(JSON.parse(body.toString('utf8')));
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function list(path: string): Promise<void> {
  let token: string | undefined;
  do {
    const page = await get(path, { limit: 1000, continue: token });
    token = page.metadata?.continue || undefined;
  } while (token);
}

const cpu0 = process.cpuUsage();
const t0 = performance.now();
await get('/apis/scheduling.k8s.io/v1/priorityclasses/fleetscope-balloon');
await get('/apis/apps/v1/namespaces/kube-system/daemonsets/fleetscope-balloon');
await list('/api/v1/nodes');
await list('/api/v1/pods');
await get('/apis/metrics.k8s.io/v1beta1/nodes');
const cpu = process.cpuUsage(cpu0);
process.stdout.write(
  `${JSON.stringify({ cpuMs: (cpu.user + cpu.system) / 1000, wallMs: performance.now() - t0, requests, bytes })}\n`,
);
agent.destroy();
process.exit(0);
