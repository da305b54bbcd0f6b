import { balloonSummaryLines } from '../shared/balloons/summary.js';
import { claimsSummaryLines } from '../shared/claims/summary.js';
import { featureSummaryLines } from '../shared/features/summary.js';
import { isStale, reachabilityText } from '../shared/fleet/reachability.js';
import { RegistryStore } from '../shared/fleet/registry-store.js';
import { textTable } from '../shared/kernel/text-table.js';
import { nodescopeSummaryLines } from '../shared/nodescope/summary.js';
import type { LocalRuntime } from './runtime.js';

/** A capability's part of the cycle summary: lines of text, computed from what is in the table. */
export type SummarySection = (runtime: LocalRuntime) => Promise<string[]>;

/** The summary's sections, in the order printed: the fleet, then each capability's. */
const sections: SummarySection[] = [
  (runtime) => fleetSummaryLines(runtime),
  (runtime) => claimsSummaryLines(runtime),
  (runtime) => nodescopeSummaryLines(runtime),
  (runtime) => balloonSummaryLines(runtime),
  (runtime) => featureSummaryLines(runtime),
];

export async function fleetSummaryLines(runtime: Pick<LocalRuntime, 'db' | 'table'>): Promise<string[]> {
  const registry = new RegistryStore(runtime.db, runtime.table);
  const clusters = await registry.list();
  const statuses = await registry.statuses(clusters.map((c) => c.name));
  const rows = clusters.map((c) => ({ c, s: statuses.get(c.name) }));
  // Inventories are stamped on the wall clock (an observation a person compares with their watch).
  const now = Date.now();
  const reachable = rows.filter((r) => r.s?.reachable && !isStale(r.s, now)).length;
  const lines = [`fleet: ${clusters.length} cluster(s), ${reachable} reachable`];
  if (rows.length > 0) {
    lines.push(
      ...textTable([
        ['CLUSTER', 'REACHABLE', 'VERSION', 'NODES', 'METRICS API', 'KUBE-SYSTEM UID / ERROR'],
        ...rows.map(({ c, s }) => [
          c.name,
          reachabilityText(s, now),
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

/** Every section of the summary, in order, each as its lines (a failed section says so in one line). */
export async function summarySections(runtime: LocalRuntime): Promise<string[][]> {
  const out: string[][] = [];
  for (const section of sections) {
    try {
      out.push(await section(runtime));
    } catch (err) {
      out.push([`(summary section failed: ${err instanceof Error ? err.message : String(err)})`]);
    }
  }
  out.push(deliverySection(runtime));
  return out;
}

export function fullSummary(title: string, sections: string[][]): string[] {
  return [`\n=== ${title} ===`, ...sections.flatMap((lines) => [...lines, ''])].slice(0, -1);
}

/** Lines shown per section in a compact summary; the rest are counted. */
export const COMPACT_LINES_PER_SECTION = 4;

/** A line as compared between summaries: ages ("3m ago") move on without anything changing. */
const comparable = (line: string) => line.replace(/\b\d+(\.\d+)?(ms|s|m|h|d) ago\b/g, 'ago').trimEnd();

/**
 * What changed since the previous summary, to fit a screen: per section that changed, its headline and
 * up to COMPACT_LINES_PER_SECTION of its new or changed lines, then how many more there are. A section
 * that did not change is left out; nothing changed at all is one line.
 */
export function compactSummary(title: string, previous: string[][], next: string[][]): string[] {
  const out = [`--- ${title} ---`];
  next.forEach((lines, i) => {
    const before = new Set((previous[i] ?? []).map(comparable));
    const changed = lines.filter((l) => l.trim() && !before.has(comparable(l)));
    if (changed.length === 0) return;
    const [headline, ...rest] = lines;
    const shown = changed.filter((l) => l !== headline);
    out.push(headline ?? '');
    out.push(...shown.slice(0, COMPACT_LINES_PER_SECTION).map((l) => `  ${l.trim()}`));
    if (shown.length > COMPACT_LINES_PER_SECTION)
      out.push(`  ... ${shown.length - COMPACT_LINES_PER_SECTION} more changed line(s) of ${rest.length}`);
  });
  if (out.length === 1) out.push('no change since the last summary');
  return out;
}
