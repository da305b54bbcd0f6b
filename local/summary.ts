import { DynamoBalloonStore } from '../shared/balloons/store-dynamo.js';
import { balloonSummaryLines } from '../shared/balloons/summary.js';
import { claimStoreOf } from '../shared/claims/store-dynamo.js';
import { claimsSummaryLines } from '../shared/claims/summary.js';
import { DynamoFeatureStore } from '../shared/features/store-dynamo.js';
import { featureSummaryLines } from '../shared/features/summary.js';
import { isStale, reachabilityText } from '../shared/fleet/reachability.js';
import { DynamoRegistry } from '../shared/fleet/registry-dynamo.js';
import { textTable } from '../shared/kernel/text-table.js';
import { DynamoNodeScopeStore } from '../shared/nodescope/store-dynamo.js';
import { nodescopeSummaryLines } from '../shared/nodescope/summary.js';
import type { LocalRuntime } from './runtime.js';

/** A capability's part of the cycle summary: lines of text, computed from what is in the table. */
export type SummarySection = (runtime: LocalRuntime) => Promise<string[]>;

/** The summary's sections, in the order printed: the fleet, then each capability's. */
const sections: SummarySection[] = [
  (runtime) => fleetSummaryLines(runtime),
  (runtime) => claimsSummaryLines(claimStoreOf(runtime)),
  (runtime) => nodescopeSummaryLines(new DynamoNodeScopeStore(runtime.db, runtime.table)),
  (runtime) => localBalloonSummaryLines(runtime),
  (runtime) => featureSummaryLines(new DynamoFeatureStore(runtime.db, runtime.table)),
];

/** The balloons' section, wired to the local table: the store, and the clusters registered there. */
export async function localBalloonSummaryLines(
  runtime: Pick<LocalRuntime, 'db' | 'table'>,
): Promise<string[]> {
  const clusters = await new DynamoRegistry(runtime.db, runtime.table).list();
  return balloonSummaryLines(
    new DynamoBalloonStore(runtime.db, runtime.table),
    clusters.map((c) => c.name),
  );
}

export async function fleetSummaryLines(runtime: Pick<LocalRuntime, 'db' | 'table'>): Promise<string[]> {
  const registry = new DynamoRegistry(runtime.db, runtime.table);
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

/**
 * A line as compared between summaries: ages ("3m ago", "in 5m") move on without anything changing,
 * and a longer age widens its column, which moves every cell after it: the words are compared, not the
 * padding.
 */
const comparable = (line: string) =>
  line
    .replace(/\b\d+(\.\d+)?(ms|s|m|h|d) ago\b/g, 'ago')
    .replace(/\bin \d+(\.\d+)?(ms|s|m|h|d)\b/g, 'in')
    .replace(/\s+/g, ' ')
    .trim();

/**
 * What changed since the previous summary, to fit a screen: per section that changed, its headline and
 * up to COMPACT_LINES_PER_SECTION of its new or changed lines, then how many more there are. A section
 * that did not change is left out; when nothing changed state there is nothing to print ([]).
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
  return out.length === 1 ? [] : out;
}

/** A full summary at least this often (wall time); compact ones in between. */
export const FULL_SUMMARY_EVERY_MS = 5 * 60_000;

/**
 * `npm start`'s summaries, numbered: the first in full, then what changed state since the one before
 * (it fits a screen; nothing at all when nothing changed but ages), with the full tables every
 * FULL_SUMMARY_EVERY_MS of wall time, on Enter, and always under --verbose.
 */
export class Summaries {
  private count = 0;
  private previous: string[][] = [];
  private lastFullAt = Number.NEGATIVE_INFINITY;
  private fullNext = false;

  constructor(
    private readonly sections: () => Promise<string[][]>,
    private readonly opts: {
      verbose: boolean;
      /** The simulated clusters' clock (it runs at --speedup), when the fleet is the demo's. */
      simNow?: () => number;
      wallNow?: () => number;
      write?: (text: string) => void;
    },
  ) {}

  /** The next summary is a full one (Enter on the terminal). */
  askFull(): void {
    this.fullNext = true;
  }

  /** Prints the next summary, if there is anything to say; whether it printed. */
  async print(ran?: string): Promise<boolean> {
    const wallMs = (this.opts.wallNow ?? Date.now)();
    const sections = await this.sections();
    const full = this.opts.verbose || this.fullNext || wallMs - this.lastFullAt >= FULL_SUMMARY_EVERY_MS;
    const title = (n: number) => {
      const sim = this.opts.simNow ? `, ${new Date(this.opts.simNow()).toISOString()} sim time` : '';
      const at = `summary ${n} at ${new Date(wallMs).toISOString()} wall time${sim}`;
      return ran === undefined ? at : `${at} (ran: ${ran})`;
    };
    const lines = full
      ? fullSummary(title(this.count + 1), sections)
      : compactSummary(
          `${title(this.count + 1)}: what changed (Enter: full tables)`,
          this.previous,
          sections,
        );
    this.previous = sections;
    if (lines.length === 0) return false;
    if (full) {
      this.lastFullAt = wallMs;
      this.fullNext = false;
    }
    this.count++;
    (this.opts.write ?? console.log)(lines.join('\n'));
    return true;
  }
}
