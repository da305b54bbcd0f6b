/**
 * The reads a floor repeats (fetch and JSON.parse, nothing else), as each cycle makes them when it
 * lists in full: node scope's (the VPA CRD, VPAs, DaemonSets, nodes, and per node-scoped DaemonSet its
 * pods and PodMetrics), the balloons' (their two objects, every node, every pod, node metrics), and
 * both together (every pod once: node scope's pods come from the balloons' list).
 */
import type { apiFetcher } from './fetcher.js';

type Api = ReturnType<typeof apiFetcher>;
type Vpa = { metadata: { namespace: string }; spec: { targetRef: { name: string } } };
type Ds = {
  metadata: { namespace: string; name: string };
  spec: { selector: { matchLabels: Record<string, string> } };
};

/**
 * Node scope's reads; with `pods: false` its DaemonSets' pods and the nodes are someone else's. With
 * `protobuf`, the pods as the cycle asks for them (protobuf, decoded for the views' fields).
 */
export async function nodescopeReads(api: Api, opts: { pods: boolean; protobuf?: boolean }): Promise<void> {
  await api.get(
    '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/verticalpodautoscalers.autoscaling.k8s.io',
  );
  const vpas = (await api.list('/apis/autoscaling.k8s.io/v1/verticalpodautoscalers')) as Vpa[];
  const dss = (await api.list('/apis/apps/v1/daemonsets')) as Ds[];
  if (opts.pods) await api.list('/api/v1/nodes');
  for (const vpa of vpas) {
    const ds = dss.find(
      (d) => d.metadata.namespace === vpa.metadata.namespace && d.metadata.name === vpa.spec.targetRef.name,
    );
    if (!ds) continue;
    const labelSelector = Object.entries(ds.spec.selector.matchLabels)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    if (opts.pods)
      await api.list(`/api/v1/namespaces/${ds.metadata.namespace}/pods`, { labelSelector }, opts.protobuf);
    await api.get(`/apis/metrics.k8s.io/v1beta1/namespaces/${ds.metadata.namespace}/pods`, { labelSelector });
  }
}

export async function balloonReads(api: Api): Promise<void> {
  await api.get('/apis/scheduling.k8s.io/v1/priorityclasses/fleetscope-balloon');
  await api.get('/apis/apps/v1/namespaces/kube-system/daemonsets/fleetscope-balloon');
  await api.list('/api/v1/nodes');
  await api.list('/api/v1/pods');
  await api.get('/apis/metrics.k8s.io/v1beta1/nodes');
}

export async function readsOf(api: Api, mode: string): Promise<void> {
  if (mode === 'nodescope') return nodescopeReads(api, { pods: true });
  if (mode === 'nodescope-protobuf') return nodescopeReads(api, { pods: true, protobuf: true });
  if (mode === 'balloons') return balloonReads(api);
  if (mode === 'both') {
    await nodescopeReads(api, { pods: false });
    return balloonReads(api);
  }
  throw new Error(`BENCH_MODE must be nodescope, balloons or both, not ${mode}`);
}
