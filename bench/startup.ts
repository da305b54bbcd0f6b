/**
 * Start times of the CLI as the README runs it: `fleetscope` on PATH after `npm link`, which is
 * bin/fleetscope (a shell launcher that execs the project's Node 24 on the bundle; no npx, no npm).
 * Measured: `--help`, and `cluster list` on an empty state directory, warm (its state server already
 * serving) and cold (a new directory whose server it starts), beside `kubectl version --client` as the
 * reference for what a CLI start costs on this machine, and against the targets. Each is the median wall
 * time of a few runs, after one warm-up run (which also builds the bundle if stale).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../local/runtime.js';

const RUNS = 7;

/** What the README promises, in seconds of wall time on an unloaded machine. */
const TARGETS: Record<string, number> = {
  'fleetscope --help': 0.25,
  'fleetscope cluster list': 0.5,
};

function medianSeconds(cmd: string, args: string[] | (() => string[])): number | undefined {
  const times: number[] = [];
  for (let i = 0; i <= RUNS; i++) {
    const argv = typeof args === 'function' ? args() : args;
    const start = process.hrtime.bigint();
    const r = spawnSync(cmd, argv, { cwd: REPO_ROOT, stdio: 'ignore' });
    if (r.error || r.status !== 0) return undefined;
    if (i > 0) times.push(Number(process.hrtime.bigint() - start) / 1e9);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

export function startupBench(): void {
  const state = mkdtempSync(join(tmpdir(), 'fleetscope-start-'));
  try {
    // The file `npm link` links onto PATH (package.json "bin").
    const fleetscope = join(REPO_ROOT, 'bin', 'fleetscope');
    const kubectl = medianSeconds('kubectl', ['version', '--client']);
    const rows: [string, number | undefined][] = [
      ['fleetscope --help', medianSeconds(fleetscope, ['--help'])],
      ['fleetscope cluster list', medianSeconds(fleetscope, ['cluster', 'list', '--state-dir', state])],
      [
        '  cold (starts its server)',
        medianSeconds(fleetscope, () => [
          'cluster',
          'list',
          '--state-dir',
          mkdtempSync(join(state, 'cold-')),
        ]),
      ],
      ['kubectl version --client', kubectl],
    ];
    console.log(`CLI start, as installed by npm link (median of ${RUNS} runs, wall time):`);
    for (const [name, s] of rows) {
      const ratio = s !== undefined && kubectl ? ` (${(s / kubectl).toFixed(1)}x kubectl)` : '';
      const target = TARGETS[name];
      const verdict =
        s !== undefined && target !== undefined
          ? `  target < ${target} s: ${s < target ? 'met' : 'MISSED'}`
          : '';
      console.log(
        `  ${name.padEnd(28)} ${s === undefined ? 'failed or absent' : `${s.toFixed(3)} s`}${ratio}${verdict}`,
      );
    }
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
}
