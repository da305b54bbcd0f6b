import type { KubeconfigRef } from '../shared/k8s/kubeconfig-ref.js';
import { setNodeScopeClock } from '../shared/nodescope/clock.js';
import { addElasticPool } from './demo-balloons.js';
import { type SimClusterSpec, type SimDaemonSetSpec, type Simulator, startSimulator } from './sim/index.js';

/**
 * The demo's node agent: a DaemonSet whose load differs widely between nodes (0.25x to 4x, plus a daily
 * cycle), sized per node (KEP-4943) by a VerticalPodAutoscaler in update mode Auto.
 */
export const NODE_AGENT: SimDaemonSetSpec = {
  name: 'node-agent',
  namespace: 'monitoring',
  containers: [
    { name: 'collector', requests: { cpu: '200m', memory: '256Mi' }, limits: { memory: '1Gi' } },
    { name: 'shipper', requests: { cpu: '100m', memory: '128Mi' } },
  ],
  load: {
    cpu: 120,
    memory: '160Mi',
    containers: { shipper: { cpu: 30, memory: '60Mi' } },
    perNode: 'heterogeneous',
    perNodeRange: [0.25, 4],
    diurnalAmplitude: 0.3,
  },
};

/** A DaemonSet with the same load everywhere (per-node targets equal the DaemonSet-wide one); mode Off. */
const netd: SimDaemonSetSpec = {
  name: 'netd',
  namespace: 'kube-system',
  containers: [{ name: 'netd', requests: { cpu: '100m', memory: '64Mi' } }],
  load: { cpu: 40, memory: '40Mi', perNode: 'uniform', noise: 0 },
};

/** The VerticalPodAutoscalers asking for node scope (the annotation: the simulator has the stock CRD). */
export function demoVpas(cluster: number): Record<string, unknown>[] {
  const vpa = (namespace: string, name: string, updateMode: string) => ({
    apiVersion: 'autoscaling.k8s.io/v1',
    kind: 'VerticalPodAutoscaler',
    metadata: { name, namespace, annotations: { 'fleetscope.io/scope': 'node' } },
    spec: {
      targetRef: { apiVersion: 'apps/v1', kind: 'DaemonSet', name },
      updatePolicy: { updateMode },
      resourcePolicy: {
        containerPolicies: [{ containerName: '*', minAllowed: { cpu: '10m', memory: '32Mi' } }],
      },
    },
  });
  return cluster === 0
    ? [vpa('monitoring', 'node-agent', 'Auto'), vpa('kube-system', 'netd', 'Off')]
    : [vpa('monitoring', 'node-agent', 'Off')];
}

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
    daemonSets: i === 0 ? [NODE_AGENT, netd] : [NODE_AGENT],
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
  /**
   * Simulated seconds per real second (default 60, npm start's default --speedup): the clusters' clock,
   * which metrics, loads and kubelets read, moves on by itself so each cycle sees new samples. 0: the
   * clock stands still until the caller advances `sim.clock` (tests).
   */
  clockSpeedup?: number;
  /**
   * The clock moves only when the caller advances `sim.clock` (tests that drive `npm start`'s clock by
   * hand), while watches still lapse at `clockSpeedup` (else each follow waits out its 3 s on the wall).
   */
  manualClock?: boolean;
}): Promise<DemoFleet> {
  const sim = await startSimulator({ clusters: demoFleetSpecs(opts.clusters, opts.nodes) });
  addElasticPool(sim);
  sim.clusters.forEach((c, i) => {
    for (const vpa of demoVpas(i)) c.store.put('verticalpodautoscalers.autoscaling.k8s.io', vpa);
  });
  await sim.writeKubeconfig(opts.kubeconfigPath);
  const speedup = opts.clockSpeedup ?? 60;
  // A watch's timeout and bookmarks lapse on the clusters' clock too (the follow's 3 s watch: 50 ms at 60).
  if (speedup > 0) for (const c of sim.clusters) sim.state(c.name).watchWallScale = 1 / speedup;
  let last = Date.now();
  const ticker =
    speedup > 0 && !opts.manualClock
      ? setInterval(() => {
          const now = Date.now();
          sim.clock.advance((now - last) * speedup);
          last = now;
        }, 1000)
      : undefined;
  ticker?.unref();
  // nodescope's worker runs in this process: its "now" is the clusters' clock.
  setNodeScopeClock(() => sim.clock.now());
  return {
    sim,
    kubeconfigPath: opts.kubeconfigPath,
    targets: sim.clusters.map((c) => ({
      name: c.name,
      ref: { kind: 'file', path: opts.kubeconfigPath, context: c.name },
    })),
    stop: async () => {
      clearInterval(ticker);
      setNodeScopeClock();
      await sim.stop();
    },
  };
}
