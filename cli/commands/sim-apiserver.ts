/**
 * `fleetscope sim --apiserver KUBECONFIG`: simulated nodes, kubelets, scheduler, DaemonSet controller
 * and metrics.k8s.io for an existing kube-apiserver (local/sim/real/), until SIGINT/SIGTERM. The
 * simulated clock follows wall time; a pass (send writes, read the server, decide) runs every second.
 */

import { startSimulatedNodes } from '../../local/sim/real/index.js';
import { readInput } from '../command.js';
import { isDocument, type OutputFormat, print } from '../output.js';

export interface ApiserverRun {
  kubeconfig: string;
  context?: string;
  nodes: number;
  seed: number;
  metrics: boolean;
  format?: OutputFormat;
}

const PASS_MS = 1_000;
const CLOCK_MS = 1_000;

export async function runOnApiserver(o: ApiserverRun): Promise<number> {
  // The one reader of command inputs: a missing file is a sentence naming it, not an errno code.
  const text = await readInput(o.kubeconfig);
  const nodes = await startSimulatedNodes({
    kubeconfig: text,
    context: o.context,
    nodes: o.nodes,
    seed: o.seed,
    metrics: o.metrics,
    intervalMs: PASS_MS,
    onProblem: (message) => console.error(`fleetscope sim: ${message}`),
  });
  const view = {
    apiserver: nodes.server,
    version: nodes.version,
    nodes: nodes.nodeNames,
    metricsApi: nodes.metricsPort
      ? `APIService v1beta1.metrics.k8s.io -> 127.0.0.1:${nodes.metricsPort}`
      : 'absent',
    clock: 'wall',
  };
  const format = o.format ?? 'table';
  if (isDocument(format)) print(format, view, () => []);
  else {
    console.log(
      `fleetscope sim: ${o.nodes} simulated node(s) on ${view.apiserver} (${view.version}); metrics.k8s.io: ${view.metricsApi}`,
    );
    for (const n of view.nodes) console.log(`  node ${n}`);
    console.log("Ctrl-C stops the simulated nodes (their Node objects stay, as a stopped kubelet's do).");
  }
  const ticker = setInterval(() => nodes.clock.set(Math.max(nodes.clock.now(), Date.now())), CLOCK_MS);
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  clearInterval(ticker);
  await nodes.stop();
  if (format === 'table' || format === 'wide') console.log(`fleetscope sim: stopped (${signal})`);
  return 0;
}
