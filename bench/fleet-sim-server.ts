/**
 * The fleet benchmark's Kubernetes API simulator, in its own process: N small clusters (2 nodes each),
 * one kubeconfig file per cluster (as one secret per cluster would be), and faults on a few: SLOW
 * clusters answer every request after a delay, FAILING ones answer 503. Prints one JSON line
 * {"dir", "clusters", "rssMiB", "startSeconds"}; a line "rss" on stdin prints {"rssMiB"}; serves until
 * its stdin closes.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { startSimulator } from '../local/sim/index.js';
import { kubeconfigYaml } from '../local/sim/kubeconfig.js';

const [dir, count, slow, failing, slowMs] = process.argv.slice(2);
if (!dir) throw new Error('usage: fleet-sim-server.ts DIR CLUSTERS SLOW FAILING SLOW_MS');
const n = Number(count);
const clusterName = (i: number) => `fleet-${String(i).padStart(4, '0')}`;

const t0 = performance.now();
const sim = await startSimulator({
  clusters: Array.from({ length: n }, (_, i) => ({ name: clusterName(i), nodes: 2, seed: i + 1 })),
});
for (let i = 0; i < Number(slow); i++)
  sim.faults.inject({ cluster: clusterName(i * 97 + 3), fault: { type: 'latency', ms: Number(slowMs) } });
for (let i = 0; i < Number(failing); i++)
  sim.faults.inject({ cluster: clusterName(i * 89 + 11), fault: { type: 'status', code: 503 } });
await Promise.all(
  sim.clusters.map((c) =>
    writeFile(
      join(dir, `${c.name}.yaml`),
      kubeconfigYaml([{ name: c.name, server: c.server, caPem: c.caData, token: c.token }]),
      { mode: 0o600 },
    ),
  ),
);
const rssMiB = () => Math.round(process.memoryUsage().rss / 2 ** 20);
process.stdout.write(
  `${JSON.stringify({ dir, clusters: n, rssMiB: rssMiB(), startSeconds: (performance.now() - t0) / 1000 })}\n`,
);
const lines = createInterface({ input: process.stdin });
lines.on('line', (l) => {
  if (l.trim() === 'rss') process.stdout.write(`${JSON.stringify({ rssMiB: rssMiB() })}\n`);
});
lines.on('close', () => {
  void sim.stop().then(() => process.exit(0));
});
