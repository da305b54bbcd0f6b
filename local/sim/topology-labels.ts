/**
 * The PodTopologyLabels admission (KEP-4742; beta and on by default from 1.35, seen on a real 1.36.2 and
 * not on 1.33.13): a pod bound to a node, at creation with spec.nodeName or through pods/binding, gets
 * the node's region and zone labels.
 */
import type { Json } from './json.js';
import type { SimState } from './state.js';

const COPIED = ['topology.kubernetes.io/region', 'topology.kubernetes.io/zone'];

export function withTopologyLabels(cluster: SimState, pod: Json, nodeName: string): Json {
  if (!cluster.features.podTopologyLabels) return pod;
  const nodeLabels = cluster.store.get('nodes', nodeName)?.metadata?.labels ?? {};
  const copied = COPIED.filter((k) => typeof nodeLabels[k] === 'string');
  if (copied.length === 0) return pod;
  const labels: Record<string, string> = { ...(pod.metadata?.labels ?? {}) };
  for (const k of copied) labels[k] = nodeLabels[k];
  // A Go map: the real server writes its keys sorted.
  const sorted = Object.fromEntries(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return { ...pod, metadata: { ...pod.metadata, labels: sorted } };
}
