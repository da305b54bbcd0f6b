/**
 * The balloons part of `npm start`'s cycle summary: per cluster, capacity that doesn't exist next to
 * what workloads request and what is free; per node, where its size comes from and any blocked reclaim.
 * Read from the balloons' store only (no cluster is contacted), like the CLI.
 */
import { textTable } from '../kernel/text-table.js';
import { readableUsd } from '../kernel/units-format.js';
import { pairText } from './amounts.js';
import type { BalloonStore, NodeState } from './store.js';
import {
  blockedText,
  figuresOf,
  CAPACITY_COLUMNS as K,
  poolOf,
  resizePreemptionText,
  summarize,
} from './summary-model.js';

export function sourceText(s: NodeState): string {
  switch (s.source?.kind) {
    case 'explicit':
      return `explicit (${s.source.via})`;
    case 'policy':
      return `policy ${s.source.policy}${s.source.held ? ' (shrink held: cool-down)' : ''}`;
    case 'host':
      return `1/${s.source.kubelets} of host ${s.source.host}`;
    default:
      return 'none: deflated';
  }
}

/** The lines for the clusters named (the registered ones), each from its stored state. */
export async function balloonSummaryLines(
  store: BalloonStore,
  clusters: readonly string[],
): Promise<string[]> {
  const lines: string[] = [];
  for (const name of clusters) {
    const state = await store.state(name);
    if (!state) continue;
    if (state.unsupported) {
      lines.push(`  ${name}: ${state.unsupported}`);
      continue;
    }
    const nodes = Object.entries(state.nodes).sort(([a], [b]) => a.localeCompare(b));
    if (nodes.length === 0) continue;
    const total = summarize(
      nodes.map(([, s]) => s),
      state.at,
    );
    lines.push(
      `  ${name}: ${total.nodes} node(s); allocatable ${pairText(total.allocatable)}, doesn't exist (balloons) ${pairText(total.balloon)}, workloads ${pairText(total.workloads)}, free ${pairText(total.free)}${total.used ? `, used ${pairText(total.used)}` : ''}; ballooned capacity worth ${readableUsd(total.monthlyUsd)}/month`,
    );
    const rows = nodes.map(([n, s]) => {
      const f = figuresOf(s);
      return [
        n,
        poolOf(s),
        sourceText(s),
        pairText(f.allocatable),
        pairText(s.size),
        pairText(f.balloon),
        pairText(f.workloads),
        pairText(f.free),
      ];
    });
    lines.push(
      ...textTable([
        [`    ${K.node}`, K.pool, K.source, K.allocatable, K.offers, K.balloon, K.workloads, K.free],
        ...rows.map((r) => [`    ${r[0]}`, ...r.slice(1)]),
      ]),
    );
    for (const [n, s] of nodes) {
      const b = blockedText(n, s);
      if (b) lines.push(`    ${b}`);
      if (s.overcommitted) lines.push(`    ${n}: over-committed by ${pairText(s.overcommitted)}`);
      if (s.overcommittedByUsage)
        lines.push(
          `    ${n}: over-committed by usage: ${pairText(s.overcommittedByUsage)} beyond allocatable`,
        );
      if (s.usageFloor) lines.push(`    ${n}: bounded by usage: offers at least ${pairText(s.usageFloor)}`);
      if (s.unsound) lines.push(`    ${n}: balloon held at the floor: ${s.unsound.join('; ')}`);
      const kep5836 = s.resizePreemption?.held?.length || s.resizePreemption?.problem;
      if (kep5836) lines.push(`    ${n}: resize preemption (KEP-5836): ${resizePreemptionText(s)}`);
    }
    for (const p of state.impostors ?? [])
      lines.push(
        `    impostor ${p.namespace}/${p.name}: carries the balloon label, not fleetscope's (never resized)`,
      );
  }
  return lines.length ? ["balloons (KEP-5620): capacity that doesn't exist, per node", ...lines] : [];
}
