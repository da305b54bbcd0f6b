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
import { schedulesLine } from './scheduler.js';
import { hasDemo1, type LocalControlPlane, startControlPlane } from './start.js';
import { Summaries, summarySections } from './summary.js';

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
    const summaries = new Summaries(() => summarySections(runtime), {
      verbose: options.verbose,
      ...(fleet.demo ? { simNow: runtime.clock } : {}),
    });
    await runtime.scheduler.runOnce();
    // The story runs before the first tables are drawn, so that they show the state it ends in: the
    // narrative below them quotes the same records.
    const story =
      fleet.demo && hasDemo1(fleet.targets)
        ? await balloonStory(runtime, fleet.demo.sim, deps().publisher)
        : [];
    await summaries.print();
    if (story.length) console.log(['', ...story].join('\n'));
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
