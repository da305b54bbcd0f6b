/**
 * `fleetscope cluster refresh`: the inventory now (the inventory function, as the schedule runs it, for
 * the named clusters or all), and what it changed in each cluster's status.
 */
import type { ClusterStatus, RegisteredCluster } from '../../shared/fleet/cluster.js';
import { workRequests } from '../../shared/fleet/dispatch.js';
import { INVENTORY } from '../../shared/inventory/capability.js';
import { describeChanges, type StatusChange, statusChanges } from '../../shared/inventory/changes.js';
import { textTable } from '../../shared/kernel/text-table.js';
import { type CliContext, registeredCluster, withContext } from '../context.js';
import { isDocument, outputFormat, print } from '../output.js';
import type { Flags } from './cluster-flags.js';

export interface Refreshed {
  cluster: string;
  changes: StatusChange[];
  before: ClusterStatus | null;
  after: ClusterStatus | null;
}

export async function refresh(values: Flags): Promise<number> {
  const format = outputFormat(values);
  return withContext(values, async (ctx) => {
    const clusters = values.cluster?.length
      ? await Promise.all([...new Set(values.cluster)].map((n) => registeredCluster(ctx, n)))
      : await ctx.registry.list();
    if (clusters.length === 0 && !isDocument(format)) {
      console.log('no clusters registered (fleetscope cluster register adds one)');
      return 0;
    }
    const names = clusters.map((c) => c.name);
    const before = await ctx.registry.statuses(names);
    const startedAt = new Date();
    await inventory(ctx, clusters, startedAt);
    const after = await ctx.registry.statuses(names);
    const rows: Refreshed[] = names.map((n) => {
      const a = after.get(n);
      const fresh = a && Date.parse(a.observedAt) >= startedAt.getTime() - 1000 ? a : undefined;
      return {
        cluster: n,
        changes: fresh ? statusChanges(before.get(n), fresh) : [],
        before: before.get(n) ?? null,
        after: fresh ?? null,
      };
    });
    print(format, rows, (wide) => refreshTable(rows, wide));
    return rows.some((r) => !r.after?.reachable) ? 1 : 0;
  });
}

/** Locally the inventory function runs before this returns; with --aws, waits (bounded) for it. */
async function inventory(ctx: CliContext, clusters: RegisteredCluster[], at: Date): Promise<void> {
  const requests = workRequests(INVENTORY, clusters, at);
  if (ctx.runtime) {
    await Promise.all(requests.map((r) => ctx.runtime!.bus.deliver(r)));
    await ctx.runtime.bus.drain();
    return;
  }
  await ctx.publisher.publish(requests);
  for (let waited = 0; waited < 90_000; waited += 2000) {
    const s = await ctx.registry.statuses(clusters.map((c) => c.name));
    if (clusters.every((c) => Date.parse(s.get(c.name)?.observedAt ?? '') >= at.getTime())) return;
    await new Promise((r) => setTimeout(r, 2000));
  }
}

export function refreshTable(rows: Refreshed[], wide: boolean): string[] {
  return textTable([
    ['NAME', 'REACHABLE', ...(wide ? ['OBSERVED (WALL TIME)'] : []), 'CHANGES'],
    ...rows.map((r) => [
      r.cluster,
      r.after ? (r.after.reachable ? 'yes' : 'no') : 'no result',
      ...(wide ? [r.after?.observedAt ?? ''] : []),
      r.after ? changesCell(r) : 'the inventory did not report back (see the inventory function log)',
    ]),
  ]);
}

/** What changed, the error said once: as the change that made it, or after the changes when it is not new. */
function changesCell(r: Refreshed): string {
  const changes = describeChanges(r.changes, r.before === null);
  const error = r.after?.error;
  if (!error || r.changes.some((c) => c.field === 'error')) return changes;
  return `${changes}; error: ${error}`;
}
