/** The soak's printed figures: what ran, what was injected, and the invariant table. */
import { textTable } from '../shared/kernel/text-table.js';
import type { SoakReport } from './run.js';

export function formatReport(r: SoakReport): string {
  const c = r.config;
  const lines = [
    `soak: ${c.clusters} clusters x ${c.nodes} nodes, ${r.cycles} cycles (${c.settleCycles} clean at the end), ${r.seconds} s`,
    `cycles per cluster: ${Object.entries(r.capabilityCycles)
      .map(
        ([k, v]) => `${k} ${v.attempted}${Number.isNaN(v.clean) ? '' : ` (${v.clean} complete and clean)`}`,
      )
      .join(', ')}`,
    `runtime kills (SIGKILL) and restarts: ${r.kills}; cycles with two runtimes racing: ${r.raceCycles}`,
    `faults injected: ${fmt(r.faults)}`,
    `CLI commands during the run: ${fmt(r.cli)}; resize requests reaching the apiservers: ${r.resizes}`,
    '',
  ];
  const rows = r.invariants.map((i) => [
    i.violations.length === 0 ? 'held' : 'BROKEN',
    i.capability,
    i.name,
    `${i.checked} ${i.unit}`,
    String(i.violations.length),
  ]);
  lines.push(...textTable([['', 'capability', 'invariant', 'checked', 'violations'], ...rows]));
  for (const i of r.invariants) for (const v of i.violations.slice(0, 5)) lines.push(`  ${i.name}: ${v}`);
  const broken = r.invariants.filter((i) => i.violations.length > 0).length;
  lines.push('', broken === 0 ? 'every invariant held' : `${broken} invariant(s) broken`);
  return lines.join('\n');
}

const fmt = (m: Record<string, number>) =>
  Object.keys(m).length === 0
    ? 'none'
    : Object.entries(m)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ');
