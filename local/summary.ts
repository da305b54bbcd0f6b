import { RegistryStore } from '../shared/fleet/registry-store.js';
import { textTable } from '../shared/kernel/text-table.js';
import type { LocalRuntime } from './runtime.js';

/** A capability's part of the cycle summary: lines of text, computed from what is in the table. */
export type SummarySection = (runtime: LocalRuntime) => Promise<string[]>;

const sections: SummarySection[] = [fleetSummaryLines];

export function addSummarySection(section: SummarySection): void {
  sections.push(section);
}

export async function fleetSummaryLines(runtime: Pick<LocalRuntime, 'db' | 'table'>): Promise<string[]> {
  const registry = new RegistryStore(runtime.db, runtime.table);
  const clusters = await registry.list();
  const statuses = await registry.statuses(clusters.map((c) => c.name));
  const rows = clusters.map((c) => ({ c, s: statuses.get(c.name) }));
  const reachable = rows.filter((r) => r.s?.reachable).length;
  const lines = [`fleet: ${clusters.length} cluster(s), ${reachable} reachable`];
  if (rows.length > 0) {
    lines.push(
      ...textTable([
        ['CLUSTER', 'REACHABLE', 'VERSION', 'NODES', 'METRICS API', 'KUBE-SYSTEM UID / ERROR'],
        ...rows.map(({ c, s }) => [
          c.name,
          s ? (s.reachable ? 'yes' : 'no') : '-',
          s?.serverVersion ?? '-',
          s?.nodeCount?.toString() ?? '-',
          s?.metricsApi ?? '-',
          (s?.reachable ? s.kubeSystemUid : s?.error) ?? '-',
        ]),
      ]),
    );
  }
  return lines;
}

function deliverySection(runtime: LocalRuntime): string[] {
  const { stats } = runtime.bus;
  let retries = 0;
  let invocations = 0;
  for (const s of runtime.invoker.stats.values()) {
    retries += s.retries;
    invocations += s.invocations;
  }
  const dead = runtime.invoker.deadLetters;
  const lines = [
    `bus: ${stats.published} events, ${stats.deliveries} deliveries, ${invocations} invocations, ${retries} retries, ${dead.length} dead letter(s)`,
  ];
  for (const d of dead.slice(-5)) lines.push(`  dead letter: ${d.functionId} (${d.source}): ${d.error}`);
  return lines;
}

export async function printSummary(runtime: LocalRuntime, title: string): Promise<void> {
  const out = [`\n=== ${title} ===`];
  for (const section of sections) {
    try {
      out.push(...(await section(runtime)), '');
    } catch (err) {
      out.push(`(summary section failed: ${err instanceof Error ? err.message : String(err)})`, '');
    }
  }
  out.push(...deliverySection(runtime));
  console.log(out.join('\n'));
}
