/**
 * Node autoscalers a ballooned node may be managed by, told from what the cluster shows of them: the
 * labels Karpenter puts on every node it launches. (cluster-autoscaler leaves no label of its own on a
 * node: its node groups are configured on the cloud side, e.g. Auto Scaling group tags, invisible from
 * the cluster; docs/balloons.md says what to configure for it.) Pure.
 */

/** Node labels that name the autoscaler which launched the node, most specific first. */
export const AUTOSCALER_LABELS: readonly { label: string; autoscaler: string }[] = [
  { label: 'karpenter.sh/nodepool', autoscaler: 'Karpenter' },
  { label: 'karpenter.sh/provisioner-name', autoscaler: 'Karpenter (v1alpha5 Provisioner)' },
];

/** "Karpenter (karpenter.sh/nodepool=default)", or undefined for a node no known autoscaler labels. */
export function autoscalerOf(labels: Readonly<Record<string, string>>): string | undefined {
  for (const { label, autoscaler } of AUTOSCALER_LABELS)
    if (labels[label] !== undefined) return `${autoscaler} (${label}=${labels[label]})`;
  return undefined;
}

/**
 * The warning `balloons status` prints for ballooned nodes an autoscaler manages: what it sees of the
 * balloon and what to configure (docs/balloons.md, "Node autoscalers").
 */
export function autoscalerWarnings(
  nodes: readonly { node: string; pool: string; autoscaler?: string }[],
): string[] {
  const byPool = new Map<string, { autoscaler: string; nodes: string[] }>();
  for (const n of nodes) {
    if (!n.autoscaler) continue;
    const key = `${n.pool}\u0000${n.autoscaler}`;
    const entry = byPool.get(key) ?? { autoscaler: n.autoscaler, nodes: [] };
    entry.nodes.push(n.node);
    byPool.set(key, entry);
  }
  return [...byPool.entries()].map(([key, e]) => {
    const pool = key.split('\u0000')[0];
    return `warning: pool ${pool}: ${e.nodes.length} ballooned node(s) managed by ${e.autoscaler}: it counts the balloon's requests as used (consolidation sees a full node) and may launch nodes for pending pods before a balloon deflates; see docs/balloons.md "Node autoscalers"`;
  });
}

/** Marks each decided node with the autoscaler its labels name (kept in the stored state for status). */
export function noteAutoscalers(
  decisions: readonly { node: string; state: { autoscaler?: string } }[],
  nodes: readonly { name: string; labels: Readonly<Record<string, string>> }[],
): void {
  const labels = new Map(nodes.map((n) => [n.name, n.labels]));
  for (const d of decisions) {
    const by = autoscalerOf(labels.get(d.node) ?? {});
    if (by) d.state.autoscaler = by;
  }
}
