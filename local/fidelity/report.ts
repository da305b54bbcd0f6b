/** What `npm run fidelity` prints: per version, the exchanges compared and the divergences by kind. */
import type { Writable } from 'node:stream';
import type { ScenarioResult } from './behaviour.js';
import { LEFT_ASIDE } from './compare.js';
import type { ReplayResult } from './replay.js';

export interface VersionReport {
  version: string;
  results: ReplayResult[];
  /** Recordings of clusters pinned to another minor version, not replayed against this one. */
  otherVersions: number;
  /** Recordings of clusters configured without pods/resize, which every real 1.33+ server serves. */
  withoutResize: number;
}

interface Group {
  count: number;
  problems: Map<string, number>;
  example: string;
}

export function summarize(report: VersionReport) {
  const groups = new Map<string, Group>();
  const skipped = new Map<string, number>();
  const refused = new Map<string, number>();
  let replayed = 0;
  let matched = 0;
  for (const r of report.results) {
    replayed += r.replayed;
    matched += r.matched;
    for (const [k, n] of r.skipped) skipped.set(k, (skipped.get(k) ?? 0) + n);
    for (const [k, n] of r.refusedWrites) refused.set(k, (refused.get(k) ?? 0) + n);
    for (const d of r.divergences) {
      const g = groups.get(d.signature) ?? {
        count: 0,
        problems: new Map(),
        example: `${d.request} (${r.testFile ?? r.recording})`,
      };
      g.count++;
      for (const p of d.problems) g.problems.set(p, (g.problems.get(p) ?? 0) + 1);
      groups.set(d.signature, g);
    }
  }
  return { replayed, matched, skipped, refused, groups };
}

export function printReport(reports: VersionReport[], out: Writable): void {
  for (const report of reports) {
    const s = summarize(report);
    const diverged = s.replayed - s.matched;
    out.write(
      `\nkube-apiserver ${report.version}: ${report.results.length} recordings, ${s.replayed} requests replayed, ${s.matched} alike, ${diverged} divergent (${s.groups.size} kinds)\n`,
    );
    for (const [signature, g] of [...s.groups].sort((a, b) => b[1].count - a[1].count)) {
      out.write(`  ${g.count}× ${signature}\n     e.g. ${g.example}\n`);
      for (const [p, n] of [...g.problems].sort((a, b) => b[1] - a[1]).slice(0, 4))
        out.write(`     ${n}× ${p}\n`);
    }
    for (const [why, n] of s.skipped) out.write(`  not compared: ${n} ${why}\n`);
    if (report.otherVersions)
      out.write(
        `  not replayed here: ${report.otherVersions} recordings of clusters pinned to another version\n`,
      );
    if (report.withoutResize)
      out.write(
        `  not replayed here: ${report.withoutResize} recordings of clusters configured without pods/resize\n`,
      );
    for (const [what, n] of s.refused)
      out.write(`  simulator-side write refused by the real server ${n}×: ${what}\n`);
  }
  out.write('\nleft aside by the comparison, and why:\n');
  for (const { what, why } of LEFT_ASIDE) out.write(`  ${what}: ${why}\n`);
  // The figures last, one line per version, for whoever reads only the end.
  out.write('\n');
  for (const report of reports) {
    const s = summarize(report);
    out.write(
      `divergences on kube-apiserver ${report.version}: ${s.replayed - s.matched} of ${s.replayed} requests (${s.groups.size} kinds)\n`,
    );
  }
}

/** The behaviour scenarios: per scenario its divergences, then every excused one with its reason. */
export function printBehaviour(results: ScenarioResult[], out: Writable): void {
  out.write('\nkubelet, scheduler and DaemonSet controller: the simulator against a whole real cluster\n');
  for (const r of results) {
    out.write(`  ${r.divergences.length} divergent, ${r.excused.length} excused: ${r.scenario}\n`);
    if (r.error) out.write(`     did not finish: ${r.error}\n`);
    for (const d of r.divergences) out.write(`     ${d}\n`);
  }
  const why = new Map<string, string[]>();
  for (const r of results)
    for (const e of r.excused) why.set(e.why, [...(why.get(e.why) ?? []), `${r.scenario}: ${e.divergence}`]);
  out.write('\nexcused, and why:\n');
  for (const [reason, list] of why) out.write(`  ${list.length}× ${reason}\n     e.g. ${list[0]}\n`);
  const total = results.reduce((n, r) => n + r.divergences.length, 0);
  const failed = results.filter((r) => r.error).length;
  out.write(
    `\nbehaviour divergences: ${total} in ${results.length} scenarios (${results.reduce((n, r) => n + r.excused.length, 0)} excused${failed ? `, ${failed} did not finish` : ''})\n`,
  );
}
