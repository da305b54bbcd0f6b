/**
 * The balloons part of `npm start`'s cycle summary: per cluster, capacity that doesn't exist next to
 * what workloads request and what is free; per node, where its size comes from and any blocked reclaim.
 * Read from DynamoDB only, like the CLI.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { RegistryStore } from '../fleet/registry-store.js';
import { textTable } from '../kernel/text-table.js';
import { readableUsd } from '../kernel/units-format.js';
import { pairText } from './amounts.js';
import { BalloonStore, type NodeState } from './store.js';
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

export async function balloonSummaryLines(target: {
  db: DynamoDBDocumentClient;
  table: string;
}): Promise<string[]> {
  const store = new BalloonStore(target.db, target.table);
  const clusters = await new RegistryStore(target.db, target.table).list();
  const lines: string[] = [];
  for (const c of clusters) {
    const state = await store.state(c.name);
    if (!state) continue;
    if (state.unsupported) {
      lines.push(`  ${c.name}: ${state.unsupported}`);
      continue;
    }
    const nodes = Object.entries(state.nodes).sort(([a], [b]) => a.localeCompare(b));
    if (nodes.length === 0) continue;
    const total = summarize(
      nodes.map(([, s]) => s),
      state.at,
    );
    lines.push(
      `  ${c.name}: ${total.nodes} node(s); allocatable ${pairText(total.allocatable)}, doesn't exist (balloons) ${pairText(total.balloon)}, workloads ${pairText(total.workloads)}, free ${pairText(total.free)}${total.used ? `, used ${pairText(total.used)}` : ''}; ballooned capacity worth ${readableUsd(total.monthlyUsd)}/month`,
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
