/**
 * `fleetscope recommendations history`: per node, what node scope sent to its pod, when, and what came
 * of it (actuated, deferred, infeasible, error, refused, guarded by a LimitRange, a ResourceQuota or
 * the memory in use, reverted and why), from the bounded history in the nodescope store.
 */
import { textTable } from '../../shared/kernel/text-table.js';
import {
  amountFields,
  change,
  NONE,
  readableCpu,
  readableMemory,
  timeCell,
} from '../../shared/kernel/units-format.js';
import type { HistoryEntry } from '../../shared/nodescope/guards/history.js';
import type { NodeHistory } from '../../shared/nodescope/store.js';
import { DynamoNodeScopeStore } from '../../shared/nodescope/store-dynamo.js';
import type { ContainerChange } from '../../shared/resize/index.js';
import type { CliContext } from '../context.js';
import { registeredCluster } from '../context.js';
import { type OutputFormat, print } from '../output.js';

export interface HistoryTarget {
  cluster: string;
  ds: string;
  namespace: string;
  name: string;
  node?: string;
}

export async function printHistory(ctx: CliContext, t: HistoryTarget, format: OutputFormat): Promise<number> {
  await registeredCluster(ctx, t.cluster);
  const store = new DynamoNodeScopeStore(ctx.db, ctx.table);
  const found = t.node
    ? [await store.getHistory(t.cluster, t.ds, t.node)]
    : await store.listHistory(t.cluster, t.ds);
  const nodes = found.filter((h) => h.entries.length > 0).sort((a, b) => (a.node < b.node ? -1 : 1));
  // Thrown, not printed: it reads "fleetscope recommendations: ..." and exits 1 (cli/main.ts).
  if (nodes.length === 0)
    throw new Error(
      `no resize history for ${t.ds}${t.node ? ` on node ${t.node}` : ''} in cluster ${t.cluster}`,
    );
  const doc = {
    cluster: t.cluster,
    daemonSet: t.ds,
    nodes: nodes.map((h) => ({
      cluster: t.cluster,
      namespace: t.namespace,
      daemonset: t.name,
      node: h.node,
      entries: h.entries.map(entryView),
    })),
  };
  print(format, doc, (wide) => historyTable(nodes, wide));
  return 0;
}

/** An entry in the JSON/YAML vocabulary: RFC 3339 times, amounts with their units. */
function entryView(e: HistoryEntry) {
  const pair = (p: { cpu?: number; memory?: number } | undefined) => (p ? amountFields(p) : undefined);
  return {
    ...e,
    at: new Date(e.at).toISOString(),
    ...(e.changes
      ? {
          changes: e.changes.map((c) => ({
            name: c.name,
            before: { requests: pair(c.before.requests), limits: pair(c.before.limits) },
            after: { requests: pair(c.after.requests), limits: pair(c.after.limits) },
          })),
        }
      : {}),
  };
}

/** One row per entry, newest last per node: the requests' change per container, and why. */
function historyTable(nodes: readonly NodeHistory[], wide: boolean): string[] {
  const head = ['NODE', 'TIME', 'OUTCOME', 'CONTAINER', 'CPU REQUEST', 'MEMORY REQUEST', 'WHY'];
  if (wide) head.push('CPU LIMIT', 'MEMORY LIMIT', 'POD');
  const rows: string[][] = [];
  for (const h of nodes)
    for (const e of h.entries) {
      const changes: (ContainerChange | undefined)[] = e.changes?.length ? e.changes : [undefined];
      for (const c of changes)
        rows.push([
          h.node,
          timeCell(e.at),
          e.outcome === 'guarded' ? `guarded-by ${e.by}` : e.outcome,
          c?.name ?? NONE,
          c ? change(c.before.requests?.cpu, c.after.requests?.cpu, readableCpu) : NONE,
          c ? change(c.before.requests?.memory, c.after.requests?.memory, readableMemory) : NONE,
          why(e),
          ...(wide
            ? [
                c ? change(c.before.limits?.cpu, c.after.limits?.cpu, readableCpu) : NONE,
                c ? change(c.before.limits?.memory, c.after.limits?.memory, readableMemory) : NONE,
                e.pod,
              ]
            : []),
        ]);
    }
  return textTable([head, ...rows]);
}

function why(e: HistoryEntry): string {
  const parts = [
    ...(e.refusal && e.outcome === 'refused' ? [e.refusal] : []),
    ...(e.reason ? [e.reason] : []),
    ...(e.capped?.length ? [`capped: ${e.capped.join(', ')}`] : []),
  ];
  return parts.length ? parts.join(': ') : NONE;
}
