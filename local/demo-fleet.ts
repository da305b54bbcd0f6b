import type { KubeconfigRef } from '../shared/k8s/kubeconfig-ref.js';
import { type SimClusterSpec, type Simulator, startSimulator } from './sim/index.js';

/**
 * The demo fleet `npm start` runs against: simulated clusters over HTTPS whose DaemonSets carry load
 * that differs widely from node to node. The last cluster of three or more has no metrics API, to show
 * how a cluster without metrics-server is reported.
 */
export function demoFleetSpecs(clusters: number, nodes: number): SimClusterSpec[] {
  return Array.from({ length: clusters }, (_, i) => ({
    name: `demo-${i + 1}`,
    nodes,
    seed: i + 1,
    vpaCrd: true,
    metricsApi: clusters >= 3 && i === clusters - 1 ? ('absent' as const) : ('available' as const),
  }));
}

export interface DemoFleet {
  sim: Simulator;
  kubeconfigPath: string;
  targets: { name: string; ref: KubeconfigRef }[];
  stop(): Promise<void>;
}

export async function startDemoFleet(opts: {
  clusters: number;
  nodes: number;
  kubeconfigPath: string;
}): Promise<DemoFleet> {
  const sim = await startSimulator({ clusters: demoFleetSpecs(opts.clusters, opts.nodes) });
  await sim.writeKubeconfig(opts.kubeconfigPath);
  return {
    sim,
    kubeconfigPath: opts.kubeconfigPath,
    targets: sim.clusters.map((c) => ({
      name: c.name,
      ref: { kind: 'file', path: opts.kubeconfigPath, context: c.name },
    })),
    stop: () => sim.stop(),
  };
}
