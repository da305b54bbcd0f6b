/**
 * `npm start`: the fleetscope control plane on a laptop. The same handlers as in Lambda run against an
 * embedded DynamoDB, an in-process bus and scheduler, and a simulated demo fleet (or the contexts of a
 * real kubeconfig with --kubeconfig). `--once` runs every schedule once, prints the summary and exits.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { allSchedules } from '../shared/capabilities.js';
import { ENV } from '../shared/platform/config.js';
import { deps } from '../shared/platform/deps.js';
import { balloonStory } from './demo-balloons.js';
import type { LocalRuntime } from './runtime.js';
import { schedulesLine } from './scheduler.js';
import { hasDemo1, type LocalControlPlane, startControlPlane } from './start.js';
import { compactSummary, fullSummary, summarySections } from './summary.js';

const USAGE = `usage: npm start -- [--once] [--kubeconfig PATH] [--clusters N] [--nodes M] [--state-dir DIR]
                    [--speedup X] [--verbose]

The first summary is in full; the next ones say what changed since the one before, with the full
tables every 5 minutes and when you press Enter. --verbose prints every summary in full, and the
handlers' logs.`;

/** What `npm start` was asked to run. */
interface StartOptions {
  once: boolean;
  /** A real kubeconfig whose contexts are the fleet; absent: the simulated demo fleet. */
  kubeconfig: string | undefined;
  clusters: number;
  nodes: number;
  speedup: number;
  verbose: boolean;
  stateDir: string;
}

async function main(): Promise<number> {
  const options = readOptions();
  if (!options) {
    console.log(USAGE);
    return 0;
  }
  if (!options.verbose) {
    // Handlers' structured logs are for CloudWatch; on a terminal the summary says what happened.
    process.env[ENV.logLevel] ??= 'ERROR';
    process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  }
  console.log(`fleetscope local control plane (state in ${options.stateDir})`);
  const plane = await startControlPlane({ ...options, say: (l) => console.log(l) });
  try {
    const { runtime, fleet } = plane;
    const summaries = new Summaries(runtime, options.verbose, fleet.demo ? runtime.clock : undefined);
    await runtime.scheduler.runOnce();
    await summaries.print();
    if (fleet.demo && hasDemo1(fleet.targets)) {
      console.log('');
      for (const line of await balloonStory(runtime, fleet.demo.sim, deps().publisher)) console.log(line);
    }
    if (!options.once) await runUntilStopped(plane, options.speedup, summaries);
    return 0;
  } finally {
    await plane.stop();
  }
}

/** The command line, validated; undefined for --help. */
function readOptions(): StartOptions | undefined {
  const { values } = parseArgs({
    options: {
      once: { type: 'boolean' },
      kubeconfig: { type: 'string' },
      clusters: { type: 'string', default: '3' },
      nodes: { type: 'string', default: '8' },
      'state-dir': { type: 'string' },
      speedup: { type: 'string', default: '60' },
      verbose: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) return undefined;
  const clusters = positiveInt(values.clusters, '--clusters');
  const nodes = positiveInt(values.nodes, '--nodes');
  const speedup = Number(values.speedup);
  if (!(speedup > 0)) throw new Error('--speedup must be a positive number');
  return {
    once: values.once ?? false,
    kubeconfig: values.kubeconfig,
    clusters,
    nodes,
    speedup,
    verbose: values.verbose ?? false,
    stateDir: resolve(values['state-dir'] ?? process.env.FLEETSCOPE_STATE_DIR ?? '.fleetscope'),
  };
}

/** A full summary at least this often (wall time); compact ones in between. */
const FULL_SUMMARY_EVERY_MS = 5 * 60_000;

/**
 * The summaries, numbered: the first in full, then what changed since the one before (it fits a
 * screen), with the full tables every FULL_SUMMARY_EVERY_MS, on Enter, and always under --verbose.
 */
class Summaries {
  private count = 0;
  private previous: string[][] = [];
  private lastFullAt = 0;
  private fullNext = false;
  /** `simNow`: the simulated clusters' clock (it runs at --speedup), when the fleet is the demo's. */
  constructor(
    private readonly runtime: LocalRuntime,
    private readonly verbose: boolean,
    private readonly simNow?: () => number,
  ) {}

  /** The next summary is a full one (Enter on the terminal). */
  askFull(): void {
    this.fullNext = true;
  }

  async print(ran?: string): Promise<void> {
    this.count++;
    const wallMs = Date.now();
    const sim = this.simNow ? `, ${new Date(this.simNow()).toISOString()} sim time` : '';
    const at = `summary ${this.count} at ${new Date(wallMs).toISOString()} wall time${sim}`;
    const title = ran === undefined ? at : `${at} (ran: ${ran})`;
    const sections = await summarySections(this.runtime);
    const full = this.verbose || this.fullNext || wallMs - this.lastFullAt >= FULL_SUMMARY_EVERY_MS;
    if (full) {
      this.lastFullAt = wallMs;
      this.fullNext = false;
    }
    const lines = full
      ? fullSummary(title, sections)
      : compactSummary(`${title}: what changed (Enter: full tables)`, this.previous, sections);
    this.previous = sections;
    console.log(lines.join('\n'));
  }
}

/**
 * Runs the schedules until SIGINT or SIGTERM, on the schedule clock (the demo's clusters' clock, at
 * `speedup`), with one summary per period of the most frequent schedule when something ran since the last.
 */
async function runUntilStopped(
  plane: LocalControlPlane,
  speedup: number,
  summaries: Summaries,
): Promise<void> {
  const schedules = allSchedules();
  const shortestMs = Math.min(...schedules.map((s) => s.everyMinutes)) * 60_000;
  console.log(`\n${schedulesLine(schedules, speedup)} (Ctrl-C stops)`);
  let ran = new Set<string>();
  plane.runtime.scheduler.start(Math.min(1000, shortestMs / speedup / 2), (s) => void ran.add(s.id));
  const printer = setInterval(async () => {
    if (ran.size === 0) return;
    const which = [...ran].join(', ');
    ran = new Set();
    await summaries.print(which);
  }, shortestMs / speedup);
  plane.onStop(async () => clearInterval(printer));
  if (process.stdin.isTTY) {
    // Enter asks for the full tables now (line mode: Ctrl-C still stops).
    process.stdin.on('data', () => {
      summaries.askFull();
      void summaries.print('on request');
    });
    plane.onStop(async () => void process.stdin.pause());
  }
  await new Promise<void>((r) => {
    process.once('SIGINT', r);
    process.once('SIGTERM', r);
  });
}

function positiveInt(value: string | undefined, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} must be a positive whole number`);
  return n;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    const usage = err instanceof TypeError && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS');
    console.error(
      `fleetscope: ${err instanceof Error ? err.message : String(err)}${usage ? `\n${USAGE}` : ''}`,
    );
    process.exit(usage ? 2 : 1);
  },
);
