/**
 * The benchmark's Kubernetes API simulator, in its own process (so none of its CPU is fleetscope's):
 * starts the 5,000-node cluster, installs the VPAs, writes the kubeconfig, prints one JSON line
 * {"kubeconfig", "server"} and serves until its stdin closes.
 */
import { join } from 'node:path';
import { startSimulator } from '../local/sim/index.js';
import { addWorkloads, CLUSTER, clusterSpec, vpaObjects } from './spec.js';

const dir = process.argv[2];
if (!dir) throw new Error('usage: sim-server.ts DIR');
const sim = await startSimulator({ clusters: [clusterSpec()] });
for (const vpa of vpaObjects())
  sim.cluster(CLUSTER).store.put('verticalpodautoscalers.autoscaling.k8s.io', vpa);
// BENCH_WORKLOAD_PODS=N: N running workload pods on every node besides the DaemonSets' (the balloon run).
const perNode = Number(process.env.BENCH_WORKLOAD_PODS ?? 0);
if (perNode > 0) addWorkloads(sim, perNode);
const kubeconfig = join(dir, 'kubeconfig.yaml');
await sim.writeKubeconfig(kubeconfig);
process.stdout.write(`${JSON.stringify({ kubeconfig, server: sim.cluster(CLUSTER).server })}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  void sim.stop().then(() => process.exit(0));
});
