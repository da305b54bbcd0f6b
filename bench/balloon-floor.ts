/**
 * The floor a balloon cycle's CPU time is compared with: the same API responses (the two balloon
 * objects, every node, every pod, node metrics) fetched on one keep-alive TLS connection and
 * JSON-parsed, and nothing else, in a fresh process.
 */
import { apiFetcher, measureFloor } from './fetcher.js';

const api = apiFetcher(process.env.BENCH_KUBECONFIG ?? '');
await measureFloor(api, async () => {
  await api.get('/apis/scheduling.k8s.io/v1/priorityclasses/fleetscope-balloon');
  await api.get('/apis/apps/v1/namespaces/kube-system/daemonsets/fleetscope-balloon');
  await api.list('/api/v1/nodes');
  await api.list('/api/v1/pods');
  await api.get('/apis/metrics.k8s.io/v1beta1/nodes');
});
process.exit(0);
