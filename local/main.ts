/**
 * `npm start`: the fleetscope control plane on a laptop. The same handlers as in Lambda run against an
 * embedded DynamoDB, an in-process bus and scheduler, and a simulated demo fleet (or the contexts of a
 * real kubeconfig with --kubeconfig). `--once` runs every schedule once, prints the summary and exits.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { balloonSummaryLines } from '../shared/balloons/summary.js';
import { allSchedules } from '../shared/capabilities.js';
import { claimsSummaryLines, joinDemoClusterSets } from '../shared/claims/summary.js';
import { featureSummaryLines } from '../shared/features/summary.js';
import type { RegisteredCluster } from '../shared/fleet/cluster.js';
import { clusterAccess } from '../shared/fleet/cluster-access.js';
import { registerCluster } from '../shared/fleet/register.js';
import { RegistryStore } from '../shared/fleet/registry-store.js';
import { describeKubeconfigRef, type KubeconfigRef, kubeconfigRefKey } from '../shared/k8s/kubeconfig-ref.js';
import { nodescopeSummaryLines } from '../shared/nodescope/summary.js';
import { ENV } from '../shared/platform/config.js';
import { deps } from '../shared/platform/deps.js';
import { balloonStory, setElasticPolicy } from './demo-balloons.js';
import { type DemoFleet, startDemoFleet } from './demo-fleet.js';
import { type LocalRuntime, startLocalRuntime } from './runtime.js';
import { addSummarySection, printSummary } from './summary.js';

addSummarySection(claimsSummaryLines);
addSummarySection((runtime) => nodescopeSummaryLines(runtime));
addSummarySection((runtime) => balloonSummaryLines(runtime));
addSummarySection((runtime) => featureSummaryLines(runtime));

const USAGE = `usage: npm start -- [--once] [--kubeconfig PATH] [--clusters N] [--nodes M] [--state-dir DIR]
                    [--speedup X] [--verbose]`;

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

/** A cluster to register: its name and how to reach it. */
interface Target {
  name: string;
  ref: KubeconfigRef;
}

/** The fleet `npm start` runs against; `demo` only when it is the simulated one. */
interface Fleet {
  targets: Target[];
  demo: DemoFleet | undefined;
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

  const runtime = await startLocalRuntime({ stateDir: options.stateDir });
  const stops = new Stops(() => runtime.stop());
  try {
    const fleet = await startFleet(options, stops);
    await registerTargets(runtime, fleet.targets);
    if (fleet.demo) await prepareDemo(runtime, fleet.targets);
    const summaries = new Summaries(
      runtime,
      fleet.demo ? () => fleet.demo?.sim.clock.now() ?? Date.now() : undefined,
    );
    await runtime.scheduler.runOnce();
    await summaries.print();
    if (fleet.demo && hasDemo1(fleet.targets)) {
      console.log('');
      for (const line of await balloonStory(runtime, fleet.demo.sim, deps().publisher)) console.log(line);
    }
    if (!options.once) await runUntilStopped(runtime, options.speedup, summaries, stops);
    await stops.run();
    return 0;
  } catch (err) {
    await stops.run();
    throw err;
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

/** What to stop on the way out, last started first; a stop that fails does not keep the rest running. */
class Stops {
  private readonly stops: (() => Promise<void>)[];
  constructor(first: () => Promise<void>) {
    this.stops = [first];
  }
  push(stop: () => Promise<void>): void {
    this.stops.push(stop);
  }
  async run(): Promise<void> {
    for (const stop of this.stops.reverse()) await stop().catch(() => undefined);
  }
}

/** The contexts of --kubeconfig, or a simulated demo fleet started for this run. */
async function startFleet(options: StartOptions, stops: Stops): Promise<Fleet> {
  if (options.kubeconfig) {
    const targets = await contextsOf(resolve(options.kubeconfig));
    console.log(`targeting ${targets.length} context(s) of ${options.kubeconfig}`);
    return { targets, demo: undefined };
  }
  const demo = await startDemoFleet({
    clusters: options.clusters,
    nodes: options.nodes,
    kubeconfigPath: join(options.stateDir, 'demo-kubeconfig.yaml'),
  });
  stops.push(() => demo.stop());
  console.log(
    `simulated demo fleet: ${demo.targets.length} cluster(s) of ${options.nodes} nodes (kubeconfig: ${demo.kubeconfigPath})`,
  );
  return { targets: demo.targets, demo };
}

const hasDemo1 = (targets: Target[]) => targets.some((t) => t.name === 'demo-1');

/** The demo puts its clusters into two ClusterSets; a real fleet's memberships are the operator's. */
async function prepareDemo(runtime: LocalRuntime, targets: Target[]): Promise<void> {
  const names = targets.map((t) => t.name);
  for (const line of await joinDemoClusterSets(runtime, deps().publisher, names)) console.log(line);
  await runtime.bus.drain();
  if (hasDemo1(targets)) await setElasticPolicy(runtime);
}

/** The summary after each cycle, numbered. */
class Summaries {
  private cycle = 0;
  /** `simNow`: the simulated clusters' clock (it runs at --speedup), when the fleet is the demo's. */
  constructor(
    private readonly runtime: LocalRuntime,
    private readonly simNow?: () => number,
  ) {}
  async print(ran?: string): Promise<void> {
    this.cycle++;
    const wall = `${new Date().toISOString()} wall time`;
    const sim = this.simNow ? `, ${new Date(this.simNow()).toISOString()} sim time` : '';
    const at = `cycle ${this.cycle} at ${wall}${sim}`;
    await printSummary(this.runtime, ran === undefined ? at : `${at} (ran: ${ran})`);
  }
}

/**
 * Runs the schedules at `speedup` until SIGINT or SIGTERM, with one summary per period of the most
 * frequent schedule, and only when something ran since the last.
 */
async function runUntilStopped(
  runtime: LocalRuntime,
  speedup: number,
  summaries: Summaries,
  stops: Stops,
): Promise<void> {
  const schedules = allSchedules();
  console.log(
    `\nrunning at --speedup ${speedup} (Ctrl-C stops); schedules: ${schedules
      .map(
        (s) =>
          `${s.id} every ${s.everyMinutes} min of schedule time (${seconds((s.everyMinutes * 60) / speedup)} of wall time)`,
      )
      .join(', ')}`,
  );
  let ran = new Set<string>();
  runtime.scheduler.start(speedup, (s) => void ran.add(s.id));
  const everyMs = (Math.min(...schedules.map((s) => s.everyMinutes)) * 60_000) / speedup;
  const printer = setInterval(async () => {
    if (ran.size === 0) return;
    const which = [...ran].join(', ');
    ran = new Set();
    await summaries.print(which);
  }, everyMs);
  stops.push(async () => clearInterval(printer));
  await new Promise<void>((r) => {
    process.once('SIGINT', r);
    process.once('SIGTERM', r);
  });
}

/** Registers each target not registered yet; a target that cannot be reached is reported and skipped. */
async function registerTargets(runtime: LocalRuntime, targets: Target[]) {
  const store = new RegistryStore(runtime.db, runtime.table);
  const access = clusterAccess();
  for (const t of targets) {
    const existing = await store.get(t.name);
    if (existing) {
      if (kubeconfigRefKey(existing.kubeconfig) !== kubeconfigRefKey(t.ref))
        await repoint(store, existing, t);
      continue;
    }
    try {
      await registerCluster(
        { name: t.name, kubeconfig: t.ref, labels: { 'fleetscope.io/source': 'local' } },
        { store, publisher: deps().publisher, verify: (n, r) => access.verify(n, r) },
      );
      console.log(`registered ${t.name}`);
    } catch (err) {
      console.error(`could not register ${t.name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  await runtime.bus.drain();
}

/**
 * A name registered in an earlier run with another kubeconfig (the demo's, or another file): re-point it
 * when the new kubeconfig reaches the same cluster (same kube-system UID), else leave it and say why.
 */
async function repoint(store: RegistryStore, existing: RegisteredCluster, target: Target): Promise<void> {
  try {
    const { kubeSystemUid } = await clusterAccess().verify(target.name, target.ref);
    if (existing.kubeSystemUid && existing.kubeSystemUid !== kubeSystemUid) {
      console.error(
        `${target.name} is already registered for another cluster (kube-system UID ${existing.kubeSystemUid}); ` +
          `deregister it or use another --state-dir`,
      );
      return;
    }
    await store.updateKubeconfig(target.name, target.ref);
    console.log(`${target.name}: registration now uses ${describeKubeconfigRef(target.ref)}`);
  } catch (err) {
    console.error(`could not re-point ${target.name}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Each context of a kubeconfig becomes a cluster named after it (as an RFC 1123 label). */
async function contextsOf(path: string): Promise<Target[]> {
  let doc: { contexts?: { name?: string }[] };
  try {
    doc = parseYaml(await readFile(path, 'utf8'));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(
      `cannot read kubeconfig ${path}: ${code === 'ENOENT' ? 'no such file' : (code ?? 'not valid YAML')}`,
    );
  }
  const contexts = (doc?.contexts ?? []).map((c) => c.name).filter((n): n is string => Boolean(n));
  if (contexts.length === 0) throw new Error(`kubeconfig ${path} has no contexts`);
  return contexts.map((context) => ({ name: clusterNameFor(context), ref: { kind: 'file', path, context } }));
}

/** EKS contexts are ARNs (".../cluster/NAME"): keep the last part, lower-case, as an RFC 1123 label. */
function clusterNameFor(context: string): string {
  const last = context.split('/').pop() ?? context;
  const name = last
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
  return name || 'cluster';
}

function seconds(s: number): string {
  return s >= 1 ? `${Number(s.toFixed(1))} s` : `${Math.round(s * 1000)} ms`;
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
