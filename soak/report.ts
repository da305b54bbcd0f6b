/** The soak's printed figures: what ran, what was injected, and the invariant table. */
import { textTable } from '../shared/kernel/text-table.js';
import type { SoakReport } from './run.js';

/** A check that looked at nothing proves nothing: it is said so, never "held". */
export const verdict = (i: { checked: number; violations: string[] }): string =>
  i.violations.length > 0 ? 'BROKEN' : i.checked === 0 ? 'nothing checked' : 'held';

export function formatReport(r: SoakReport): string {
  const c = r.config;
  const b = r.balloons;
  const lines = [
    `soak: ${c.clusters} clusters x ${c.nodes} nodes, ${r.cycles} cycles (${c.settleCycles} clean at the end), ${r.seconds} s`,
    `cycles per cluster: ${Object.entries(r.capabilityCycles)
      .map(
        ([k, v]) => `${k} ${v.attempted}${Number.isNaN(v.clean) ? '' : ` (${v.clean} complete and clean)`}`,
      )
      .join(', ')}`,
    `runtime kills (SIGKILL) and restarts: ${r.kills}; cycles with two runtimes racing: ${r.raceCycles}`,
    `faults injected: ${faultText(r.faults)}`,
    `CLI commands during the run: ${fmt(r.cli)}; resize requests reaching the apiservers: ${r.resizes}`,
    `balloons: ${b.clusters} clusters with a policy, ${b.pods} balloon pods, ${b.inflates} inflates and ${b.deflates} deflates accepted; batch pods ${b.batchAdded} added, ${b.batchRemoved} removed; policies put back after on: ${b.policiesRestored}`,
    `feature flips: ${r.flips.length ? r.flips.join(', ') : 'none'}`,
    `lifecycle faults hit: ${fmt(r.injected)}`,
    '',
  ];
  const rows = r.invariants.map((i) => [
    verdict(i),
    i.capability,
    i.name,
    `${i.checked} ${i.unit}`,
    String(i.violations.length),
  ]);
  lines.push(...textTable([['', 'capability', 'invariant', 'checked', 'violations'], ...rows]));
  for (const i of r.invariants) for (const v of i.violations.slice(0, 5)) lines.push(`  ${i.name}: ${v}`);
  const broken = r.invariants.filter((i) => i.violations.length > 0).length;
  const empty = r.invariants.filter((i) => verdict(i) === 'nothing checked').map((i) => i.name);
  lines.push(
    '',
    broken > 0
      ? `${broken} invariant(s) broken`
      : empty.length > 0
        ? `no invariant broken, but ${empty.length} checked nothing: ${empty.join(', ')}`
        : 'every invariant held',
  );
  return lines.join('\n');
}

const fmt = (m: Record<string, number>) =>
  Object.keys(m).length === 0
    ? 'none'
    : Object.entries(m)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ');

/** Per kind: applied, of the requests it could apply to. */
const faultText = (f: SoakReport['faults']) => {
  const kinds = Object.keys({ ...f.eligible, ...f.applied });
  if (kinds.length === 0) return 'none';
  const total = Object.values(f.applied).reduce((a, n) => a + n, 0);
  return `${total} (${kinds
    .map(
      (k) => `${k} ${f.applied[k] ?? 0}${f.eligible[k] !== undefined ? ` of ${f.eligible[k]} requests` : ''}`,
    )
    .join(', ')})`;
};
