/**
 * The floor a cycle's CPU time is compared with: the same API responses fetched (one keep-alive TLS
 * connection, like the cycle) and JSON-parsed, and nothing else. Run in a fresh process, like the cycle.
 */
import { apiFetcher, measureFloor } from './fetcher.js';

const api = apiFetcher(process.env.BENCH_KUBECONFIG ?? '');
type Vpa = { metadata: { namespace: string }; spec: { targetRef: { name: string } } };
type Ds = {
  metadata: { namespace: string; name: string };
  spec: { selector: { matchLabels: Record<string, string> } };
};

await measureFloor(api, async () => {
  await api.get(
    '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/verticalpodautoscalers.autoscaling.k8s.io',
  );
  const vpas = (await api.list('/apis/autoscaling.k8s.io/v1/verticalpodautoscalers')) as Vpa[];
  const dss = (await api.list('/apis/apps/v1/daemonsets')) as Ds[];
  await api.list('/api/v1/nodes');
  for (const vpa of vpas) {
    const ds = dss.find(
      (d) => d.metadata.namespace === vpa.metadata.namespace && d.metadata.name === vpa.spec.targetRef.name,
    );
    if (!ds) continue;
    const labelSelector = Object.entries(ds.spec.selector.matchLabels)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    await api.list(`/api/v1/namespaces/${ds.metadata.namespace}/pods`, { labelSelector });
    await api.get(`/apis/metrics.k8s.io/v1beta1/namespaces/${ds.metadata.namespace}/pods`, { labelSelector });
  }
});
process.exit(0);
