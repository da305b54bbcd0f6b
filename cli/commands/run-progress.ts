/**
 * What `fleetscope run` prints: one line per cluster and capability as each completes, a live progress
 * line beneath them when standard output is a terminal (plain lines only when it is not), and a summary.
 * With -o json|yaml nothing is printed until the end, then the results as one document.
 */
import type { RunStep } from '../../shared/run-plan.js';
import { headersWanted, type OutputFormat, print } from '../output.js';

/** The cluster column of a fleet-wide schedule's line. */
export const FLEET = '(fleet)';

export interface RunResult {
  cluster: string;
  capability: string;
  schedule: string;
  ok: boolean;
  text: string;
  ms: number;
  /** Not this control plane's to run (another one owns the cluster). */
  notOurs?: boolean;
}

/** A wall-clock duration for people: "850 ms", "4.2 s", "3 min 5 s". */
export function wallSeconds(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${Number(s.toFixed(1))} s`;
  return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

export class ProgressReporter {
  private readonly results: (RunResult & { finishedAt: string })[] = [];
  private readonly started0 = performance.now();
  private readonly live: boolean;
  private readonly widths: { cluster: number; capability: number };
  private current?: { schedule: string; total: number; done: number };
  private headed = false;

  /** Whether the plan has per-cluster steps: then a run that reached no cluster did nothing. */
  private readonly perCluster: boolean;

  constructor(
    private readonly format: OutputFormat,
    scope: { clusters: string[]; plan: RunStep[] },
    private readonly tty = Boolean(process.stdout.isTTY),
  ) {
    this.perCluster = scope.plan.some((s) => s.kind === 'per-cluster');
    this.live = this.tty && (format === 'table' || format === 'wide');
    this.widths = {
      cluster: Math.max(7, ...scope.clusters.map((c) => c.length)),
      capability: Math.max(10, ...scope.plan.map((s) => s.capability.length)),
    };
  }

  private get text(): boolean {
    return this.format === 'table' || this.format === 'wide';
  }

  private clearLive(): void {
    if (this.live && this.current) process.stdout.write('\r\x1b[K');
  }

  private drawLive(): void {
    if (!this.live || !this.current) return;
    const c = this.current;
    const elapsed = wallSeconds(performance.now() - this.started0);
    process.stdout.write(`\r\x1b[K${c.schedule}: ${c.done}/${c.total} done (${elapsed} wall time)`);
  }

  private row(cells: string[]): string {
    const [cluster, capability, result, time, ...rest] = cells;
    return [
      (cluster ?? '').padEnd(this.widths.cluster),
      (capability ?? '').padEnd(this.widths.capability),
      (result ?? '').padEnd(6),
      (time ?? '').padStart(9),
      ...rest,
    ].join('  ');
  }

  private header(): void {
    if (this.headed || !this.text) return;
    this.headed = true;
    if (!headersWanted()) return;
    const wide = this.format === 'wide' ? ['SCHEDULE', 'FINISHED (WALL TIME)'] : [];
    console.log(this.row(['CLUSTER', 'CAPABILITY', 'RESULT', 'WALL TIME', ...wide, 'DETAIL']));
  }

  started(schedule: string, total: number): void {
    this.header();
    this.clearLive();
    this.current = { schedule, total, done: 0 };
    this.drawLive();
  }

  completed(r: RunResult): void {
    const finishedAt = new Date().toISOString();
    this.results.push({ ...r, finishedAt });
    if (this.current && r.schedule === this.current.schedule) this.current.done++;
    if (!this.text) return;
    this.header();
    this.clearLive();
    const wide = this.format === 'wide' ? [r.schedule, finishedAt] : [];
    console.log(
      this.row([r.cluster, r.capability, r.ok ? 'ok' : 'FAILED', wallSeconds(r.ms), ...wide, r.text]),
    );
    this.drawLive();
  }

  /** A line of context (the schedules it keeps running on): tables only. */
  note(line: string): void {
    if (!this.text) return;
    this.clearLive();
    this.current = undefined;
    console.log(line);
  }

  /**
   * Prints the summary (or the whole document) and returns the exit code: 1 when anything failed, or
   * when per-cluster capabilities were asked for and reached no cluster (a cron job must not read a run
   * that did nothing as a success).
   */
  finish(): number {
    this.clearLive();
    this.current = undefined;
    const failed = this.results.filter((r) => !r.ok).length;
    const reachedNone = this.perCluster && !this.results.some((r) => r.cluster !== FLEET && !r.notOurs);
    const wallMs = performance.now() - this.started0;
    const summary = {
      ok: this.results.length - failed,
      failed,
      reachedNoCluster: reachedNone,
      wallTimeMs: Math.round(wallMs),
    };
    const exit = failed || reachedNone ? ' (exit 1)' : '';
    if (reachedNone)
      console.error(
        'fleetscope run: no cycle ran on any cluster: none is registered that this control plane owns (fleetscope cluster list)',
      );
    if (this.text)
      console.log(`run: ${summary.ok} ok, ${failed} failed in ${wallSeconds(wallMs)} wall time${exit}`);
    else {
      const results = this.results.map(({ ms, text, ...r }) => ({
        ...r,
        detail: text,
        tookMs: Math.round(ms),
      }));
      print(this.format, { results, summary }, () => []);
    }
    return failed || reachedNone ? 1 : 0;
  }
}
