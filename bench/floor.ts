/**
 * The floor a cycle's CPU time is compared with: the same API responses fetched (one keep-alive TLS
 * connection, like the cycle) and JSON-parsed, and nothing else. Run in a fresh process, like the cycle.
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

function get(path: string, query: Record<string, string | number | undefined> = {}): Promise<unknown> {
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

type List = { items?: Record<string, unknown>[]; metadata?: { continue?: string } };
async function list(
  path: string,
  query: Record<string, string | undefined> = {},
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let token: string | undefined;
  do {
    const page = (await get(path, { ...query, limit: 1000, continue: token })) as List;
    items.push(...(page.items ?? []));
    token = page.metadata?.continue || undefined;
  } while (token);
  return items;
}

const cpu0 = process.cpuUsage();
const t0 = performance.now();
await get(
  '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/verticalpodautoscalers.autoscaling.k8s.io',
);
const vpas = await list('/apis/autoscaling.k8s.io/v1/verticalpodautoscalers');
const dss = await list('/apis/apps/v1/daemonsets');
await list('/api/v1/nodes');
for (const vpa of vpas as { metadata: { namespace: string }; spec: { targetRef: { name: string } } }[]) {
  const ds = (
    dss as {
      metadata: { namespace: string; name: string };
      spec: { selector: { matchLabels: Record<string, string> } };
    }[]
  ).find(
    (d) => d.metadata.namespace === vpa.metadata.namespace && d.metadata.name === vpa.spec.targetRef.name,
  );
  if (!ds) continue;
  const labelSelector = Object.entries(ds.spec.selector.matchLabels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  await list(`/api/v1/namespaces/${ds.metadata.namespace}/pods`, { labelSelector });
  await get(`/apis/metrics.k8s.io/v1beta1/namespaces/${ds.metadata.namespace}/pods`, { labelSelector });
}
const cpu = process.cpuUsage(cpu0);
process.stdout.write(
  `${JSON.stringify({ cpuMs: (cpu.user + cpu.system) / 1000, wallMs: performance.now() - t0, requests, bytes, maxRssMiB: process.resourceUsage().maxRSS / 1024 })}\n`,
);
agent.destroy();
process.exit(0);
