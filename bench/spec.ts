/**
 * The benchmark's cluster: 5,000 nodes and 10 node-scoped DaemonSets of 2 containers (100,000 scopes),
 * each with load that differs between nodes, and a VerticalPodAutoscaler asking for node scope in update
 * mode Auto (so the cycle also resizes, within its write budget).
 */
import type { SimClusterSpec, SimDaemonSetSpec } from '../local/sim/index.js';
import { defaultPodSpec } from '../local/sim/pods.js';

export const CLUSTER = 'bench';
export const NODES = Number(process.env.BENCH_NODES ?? 5000);
export const SEED_DAYS = 8;
export const SEED_STEP_MINUTES = 30;

const agents: [string, string, string, string, number, number][] = [
  // name, namespace, main container, sidecar, base CPU (m), base memory (MiB)
  ['node-exporter', 'monitoring', 'node-exporter', 'kube-rbac-proxy', 30, 40],
  ['fluent-bit', 'logging', 'fluent-bit', 'config-reloader', 80, 90],
  ['cilium-agent', 'kube-system', 'cilium-agent', 'cilium-monitor', 150, 300],
  ['kube-proxy', 'kube-system', 'kube-proxy', 'conntrack-metrics', 40, 60],
  ['datadog-agent', 'datadog', 'agent', 'trace-agent', 120, 250],
  ['falco', 'falco', 'falco', 'falcoctl', 100, 200],
  ['ebs-csi-node', 'kube-system', 'ebs-plugin', 'node-driver-registrar', 10, 30],
  ['aws-node', 'kube-system', 'aws-node', 'aws-eks-nodeagent', 25, 50],
  ['prometheus-agent', 'monitoring', 'prometheus', 'config-reloader', 200, 400],
  ['otel-collector', 'observability', 'otel-collector', 'file-exporter', 90, 150],
];

export function daemonSets(): SimDaemonSetSpec[] {
  return agents.map(([name, namespace, main, sidecar, cpu, mem], i) => ({
    name,
    namespace,
    containers: [
      {
        name: main,
        requests: { cpu: `${cpu * 2}m`, memory: `${mem * 2}Mi` },
        limits: { memory: `${mem * 8}Mi` },
      },
      { name: sidecar, requests: { cpu: '20m', memory: '32Mi' } },
    ],
    // All DaemonSets tolerate the GPU nodes' taint but one, so some nodes are ignored by one of them.
    ...(i === 0 ? {} : { tolerations: [{ operator: 'Exists' }] }),
    load: {
      cpu,
      memory: `${mem}Mi`,
      containers: { [sidecar]: { cpu: Math.max(2, Math.round(cpu / 10)), memory: '20Mi' } },
      perNode: 'heterogeneous',
      perNodeRange: [0.2 + (i % 3) * 0.1, 3 + (i % 4)],
      diurnalAmplitude: 0.25,
      noise: 0.05,
    },
  }));
}

export function clusterSpec(): SimClusterSpec {
  return { name: CLUSTER, nodes: NODES, seed: 7, vpaCrd: true, daemonSets: daemonSets() };
}

export function vpaObjects(): Record<string, unknown>[] {
  return agents.map(([name, namespace]) => ({
    apiVersion: 'autoscaling.k8s.io/v1',
    kind: 'VerticalPodAutoscaler',
    metadata: { name, namespace, annotations: { 'fleetscope.io/scope': 'node' } },
    spec: {
      targetRef: { apiVersion: 'apps/v1', kind: 'DaemonSet', name },
      updatePolicy: { updateMode: 'Auto' },
    },
  }));
}

/**
 * Workload pods for the balloon run: `perNode` small running pods on every node (apps' replicas, bound
 * by a scheduler long ago), so that with the DaemonSets the cluster holds about 30 pods per node.
 */
export function addWorkloads(
  sim: {
    cluster(name: string): {
      store: { list(r: string): { metadata: { name: string } }[]; put(r: string, o: object): unknown };
    };
  },
  perNode: number,
): void {
  const store = sim.cluster(CLUSTER).store;
  store.put('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'apps' } });
  for (const node of store.list('nodes')) {
    for (let i = 0; i < perNode; i++)
      store.put('pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `app-${i}-${node.metadata.name}`, namespace: 'apps', labels: { app: `app-${i}` } },
        // Defaulted as the apiserver stores a created pod (1.33+: no default resizePolicy), so that a
        // later update (the reads part's annotations) is not refused as a change of the spec.
        spec: defaultPodSpec(
          {
            nodeName: node.metadata.name,
            containers: [
              {
                name: 'app',
                image: 'registry.k8s.io/pause:3.10',
                resources: { requests: { cpu: `${20 + (i % 5) * 10}m`, memory: `${32 + (i % 4) * 32}Mi` } },
              },
            ],
          },
          { resizePolicy: false },
        ),
      });
  }
}
