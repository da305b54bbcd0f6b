/**
 * The nodescope part of `npm start`'s cycle summary: for each node-scoped DaemonSet, each node's
 * recommendation next to the DaemonSet-wide one (what upstream VPA would give every node), and what
 * per-node sizing saves or adds in total. Read from the store only, like the CLI.
 */
import { textTable } from '../kernel/text-table.js';
import { cpuCell, memoryCell } from '../kernel/units-format.js';
import type { Amounts, NodeRec } from './model.js';
import { getRecommendations, listDaemonSets } from './query.js';
import type { ClusterRecord, DsHead, NodeScopeStore } from './store.js';

// The tables' one vocabulary (m below a core, Mi below a Gi), as in the CLI and the report.
const cpu = cpuCell;
const mem = memoryCell;

function sum(recs: Iterable<NodeRec>): Amounts & { cpu: number; memory: number } {
  let c = 0;
  let m = 0;
  for (const r of recs)
    for (const x of Object.values(r.containers)) {
      c += x.target.cpu ?? 0;
      m += x.target.memory ?? 0;
    }
  return { cpu: c, memory: m };
}

function change(perNode: number, wide: number, what: 'cpu' | 'memory'): string {
  if (!wide) return `${what} -`;
  const d = perNode - wide;
  if (d === 0) return `${what} unchanged`;
  const f = what === 'cpu' ? (x: number) => cpu(Math.abs(x)) : (x: number) => mem(Math.abs(x));
  return `${what} ${d <= 0 ? 'saves' : 'adds'} ${f(d)} (${d <= 0 ? '-' : '+'}${Math.abs((d / wide) * 100).toFixed(0)}%)`;
}

type ClusterCycles = Map<string, ClusterRecord | undefined>;
type Recommendations = NonNullable<Awaited<ReturnType<typeof getRecommendations>>>;

/** Lines for the summary; `maxNodes` rows per DaemonSet (the busiest and the idlest are kept). */
export async function nodescopeSummaryLines(
  store: NodeScopeStore,
  opts: { maxNodes?: number } = {},
): Promise<string[]> {
  const heads = await listDaemonSets(store);
  const clusters = [...new Set(heads.map((h) => h.cluster))];
  const lines = [`nodescope: ${heads.length} DaemonSet(s) sized per node in ${clusters.length} cluster(s)`];
  const cycles: ClusterCycles = new Map();
  for (const c of clusters) {
    const rec = await store.getCluster(c);
    cycles.set(c, rec);
    const line = lastCycleLine(rec?.lastCycle);
    if (line) lines.push(`  ${c}: ${line}`);
    for (const n of rec?.notices ?? [])
      lines.push(
        `    ${n.kind === 'skipped' ? 'skipped' : 'warning'}: VPA ${n.namespace}/${n.vpa}: ${n.reason}`,
      );
  }
  for (const h of heads) {
    const recs = await getRecommendations(store, h.cluster, h.namespace, h.name, { live: true });
    if (recs) lines.push('', ...daemonSetLines(h, recs, cycles, opts.maxNodes ?? 12));
  }
  return lines;
}

function lastCycleLine(l: ClusterRecord['lastCycle'] | undefined): string | undefined {
  if (!l) return undefined;
  const parts = [
    `metrics API ${l.metricsApi}`,
    `${l.nodes} nodes`,
    `${l.samples} samples`,
    `${l.fallbackNodes} on fallback`,
    `resizes ${l.resizes.requested} requested / ${l.resizes.completed} done / ${l.resizes.refused} refused`,
    `${l.apiRequests} API requests`,
  ];
  if (l.rejectedTargets) parts.push(`${l.rejectedTargets} VPA(s) refused`);
  if (l.upstreamVpa)
    parts.push(
      l.upstreamVpa.state === 'unknown'
        ? 'upstream VPA unknown'
        : `upstream VPA: ${l.upstreamVpa.components.join(', ') || 'none'}`,
    );
  if (l.skippedVpas) parts.push(`${l.skippedVpas} VPA(s) left to another recommender`);
  if (l.upstreamWarnings) parts.push(`${l.upstreamWarnings} warning(s) about upstream VPA`);
  if (l.errors.length) parts.push(`errors: ${l.errors.join('; ')}`);
  return parts.join(', ');
}

/** One DaemonSet: each node's targets next to the DaemonSet-wide ones, and the totals. */
function daemonSetLines(h: DsHead, recs: Recommendations, cycles: ClusterCycles, maxNodes: number): string[] {
  const title = `${h.cluster} ${h.namespace}/${h.name} (VPA ${h.vpa.name}, updateMode ${h.updateMode})`;
  if (Object.keys(recs.nodes).length === 0) {
    const metrics = cycles.get(h.cluster)?.lastCycle?.metricsApi;
    return [
      `${title}: no recommendation yet, no samples${metrics && metrics !== 'available' ? ` (metrics API ${metrics})` : ''}`,
    ];
  }
  const containers = h.containers.filter((c) => recs.dsWide[c]);
  const wideTotal = sum([{ source: 'node', containers: recs.dsWide }]);
  const entries = Object.entries(recs.nodes).sort(([, a], [, b]) => sum([b]).cpu - sum([a]).cpu);
  const n = entries.length;
  const perNode = sum(entries.map(([, r]) => r));
  const asWide = { cpu: wideTotal.cpu * n, memory: wideTotal.memory * n };
  return [
    `${title}: targets per node vs DaemonSet-wide`,
    ...textTable(nodeRows(entries, recs.dsWide, containers, maxNodes)).map((x) => `  ${x}`),
    `  total over ${n} node(s): per-node ${cpu(perNode.cpu)} / ${mem(perNode.memory)} vs DaemonSet-wide ${cpu(asWide.cpu)} / ${mem(asWide.memory)}: per-node sizing ${change(perNode.cpu, asWide.cpu, 'cpu')}, ${change(perNode.memory, asWide.memory, 'memory')}`,
  ];
}

function nodeRows(
  entries: [string, NodeRec][],
  wide: Recommendations['dsWide'],
  containers: string[],
  maxNodes: number,
): string[][] {
  const header = ['NODE', 'SOURCE'];
  for (const c of containers) header.push(`${c.toUpperCase()} CPU`, 'MEMORY');
  header.push('VS DS-WIDE');
  const rows: string[][] = [header];
  const wideTotal = sum([{ source: 'node', containers: wide }]);
  const shown =
    entries.length > maxNodes ? [...entries.slice(0, maxNodes - 2), ...entries.slice(-2)] : entries;
  for (const [node, r] of shown) {
    const row = [node, r.source];
    for (const c of containers)
      row.push(cpu(r.containers[c]?.target.cpu), mem(r.containers[c]?.target.memory));
    const s = sum([r]);
    row.push(wideTotal.cpu ? `cpu ${(((s.cpu - wideTotal.cpu) / wideTotal.cpu) * 100).toFixed(0)}%` : '');
    rows.push(row);
  }
  if (shown.length < entries.length)
    rows.splice(rows.length - 2, 0, [`... ${entries.length - shown.length} more`]);
  const wideRow = ['(DaemonSet-wide)', 'upstream'];
  for (const c of containers) wideRow.push(cpu(wide[c]?.target.cpu), mem(wide[c]?.target.memory));
  wideRow.push('');
  rows.push(wideRow);
  return rows;
}
