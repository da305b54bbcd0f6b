/**
 * What `npm start` starts, in order: the fleet (the simulated demo fleet, or the contexts of a real
 * kubeconfig), the local runtime on the schedule clock, the registrations, and the demo's own setup.
 * Kept apart from main.ts so tests start the very same control plane on a clock they move.
 */

import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { claimStoreOf } from '../shared/claims/store-dynamo.js';
import { joinDemoClusterSets } from '../shared/claims/summary.js';
import type { RegisteredCluster } from '../shared/fleet/cluster.js';
import { clusterAccess } from '../shared/fleet/cluster-access.js';
import { ownerRefusal } from '../shared/fleet/owner-lease.js';
import { registerCluster } from '../shared/fleet/register.js';
import type { Registry } from '../shared/fleet/registry.js';
import { DynamoRegistry } from '../shared/fleet/registry-dynamo.js';
import { describeKubeconfigRef, type KubeconfigRef, kubeconfigRefKey } from '../shared/k8s/kubeconfig-ref.js';
import { deps } from '../shared/platform/deps.js';
import { setElasticPolicy } from './demo-balloons.js';
import { type DemoFleet, startDemoFleet } from './demo-fleet.js';
import { type LocalRuntime, startLocalRuntime } from './runtime.js';
import { type ScheduleClock, speedupClock } from './scheduler.js';

export interface ControlPlaneOptions {
  /** A real kubeconfig whose contexts are the fleet; absent: the simulated demo fleet. */
  kubeconfig: string | undefined;
  clusters: number;
  nodes: number;
  /** Schedule time per wall time: the simulated clusters' clock and the schedules' run this much faster. */
  speedup: number;
  /** Where the state is kept; absent: in memory, for this process only. */
  stateDir: string | undefined;
  /** The demo's clock moves only when the caller advances it (tests); `speedup` then only paces polls. */
  manualClock?: boolean;
  /** Where progress lines go (stdout in `npm start`); errors too, prefixed by what failed. */
  say: (line: string) => void;
}

/** A cluster to register: its name and how to reach it. */
export interface Target {
  name: string;
  ref: KubeconfigRef;
}

/** The fleet `npm start` runs against; `demo` only when it is the simulated one. */
export interface Fleet {
  targets: Target[];
  demo: DemoFleet | undefined;
}

export interface LocalControlPlane {
  runtime: LocalRuntime;
  fleet: Fleet;
  /** Stops what was started, last started first. */
  stop(): Promise<void>;
  /** Adds something to stop before the rest. */
  onStop(stop: () => Promise<void>): void;
}

/** What to stop on the way out, last started first; a stop that fails does not keep the rest running. */
class Stops {
  private readonly stops: (() => Promise<void>)[] = [];
  push(stop: () => Promise<void>): void {
    this.stops.push(stop);
  }
  async run(): Promise<void> {
    for (const stop of this.stops.splice(0).reverse()) await stop().catch(() => undefined);
  }
}

export async function startControlPlane(opts: ControlPlaneOptions): Promise<LocalControlPlane> {
  const stops = new Stops();
  try {
    const fleet = await startFleet(opts, stops);
    // One clock: the schedules, and every wait, lease and backoff of the handlers, run on the fleet's.
    const clock: ScheduleClock = fleet.demo
      ? () => fleet.demo?.sim.clock.now() ?? Date.now()
      : speedupClock(opts.speedup);
    const runtime = await startLocalRuntime({ ...(opts.stateDir ? { stateDir: opts.stateDir } : {}), clock });
    stops.push(() => runtime.stop());
    await registerTargets(runtime, fleet.targets, opts.say);
    if (fleet.demo) await prepareDemo(runtime, fleet.targets, opts.say);
    return { runtime, fleet, stop: () => stops.run(), onStop: (s) => stops.push(s) };
  } catch (err) {
    await stops.run();
    throw err;
  }
}

/** The contexts of --kubeconfig, or a simulated demo fleet started for this run. */
async function startFleet(opts: ControlPlaneOptions, stops: Stops): Promise<Fleet> {
  if (opts.kubeconfig) {
    const targets = await contextsOf(resolve(opts.kubeconfig));
    opts.say(`targeting ${targets.length} context(s) of ${opts.kubeconfig}`);
    return { targets, demo: undefined };
  }
  const dir = opts.stateDir ?? (await mkdtemp(join(tmpdir(), 'fleetscope-demo-')));
  if (opts.stateDir) await mkdir(dir, { recursive: true });
  else stops.push(() => rm(dir, { recursive: true, force: true }));
  const demo = await startDemoFleet({
    clusters: opts.clusters,
    nodes: opts.nodes,
    kubeconfigPath: join(dir, 'demo-kubeconfig.yaml'),
    clockSpeedup: opts.speedup,
    manualClock: opts.manualClock ?? false,
  });
  stops.push(() => demo.stop());
  opts.say(
    `simulated demo fleet: ${demo.targets.length} cluster(s) of ${opts.nodes} nodes (kubeconfig: ${demo.kubeconfigPath})`,
  );
  return { targets: demo.targets, demo };
}

export const hasDemo1 = (targets: Target[]) => targets.some((t) => t.name === 'demo-1');

/** The demo puts its clusters into two ClusterSets; a real fleet's memberships are the operator's. */
async function prepareDemo(
  runtime: LocalRuntime,
  targets: Target[],
  say: (l: string) => void,
): Promise<void> {
  const names = targets.map((t) => t.name);
  for (const line of await joinDemoClusterSets(claimStoreOf(runtime), deps().publisher, names)) say(line);
  await runtime.bus.drain();
  if (hasDemo1(targets)) await setElasticPolicy(runtime);
}

/** Registers each target not registered yet; a target that cannot be reached is reported and skipped. */
async function registerTargets(runtime: LocalRuntime, targets: Target[], say: (l: string) => void) {
  const store = new DynamoRegistry(runtime.db, runtime.table);
  const access = clusterAccess();
  for (const t of targets) {
    const existing = await store.get(t.name);
    if (existing) {
      if (kubeconfigRefKey(existing.kubeconfig) !== kubeconfigRefKey(t.ref))
        await repoint(store, existing, t, say);
      continue;
    }
    try {
      await registerCluster(
        { name: t.name, kubeconfig: t.ref, labels: { 'fleetscope.io/source': 'local' } },
        {
          store,
          publisher: deps().publisher,
          verify: (n, r) => access.verify(n, r),
          holdOwner: async (n, r) => ownerRefusal(n, await access.client(n, r), runtime.clock()),
        },
      );
      say(`registered ${t.name}`);
    } catch (err) {
      say(`could not register ${t.name}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  await runtime.bus.drain();
}

/**
 * A name registered in an earlier run with another kubeconfig (the demo's, or another file): re-point it
 * when the new kubeconfig reaches the same cluster (same kube-system UID), else leave it and say why.
 */
async function repoint(
  store: Registry,
  existing: RegisteredCluster,
  target: Target,
  say: (l: string) => void,
): Promise<void> {
  try {
    const { kubeSystemUid } = await clusterAccess().verify(target.name, target.ref);
    if (existing.kubeSystemUid && existing.kubeSystemUid !== kubeSystemUid) {
      say(
        `${target.name} is already registered for another cluster (kube-system UID ${existing.kubeSystemUid}); ` +
          `deregister it or use another --state-dir`,
      );
      return;
    }
    await store.updateKubeconfig(target.name, target.ref);
    say(`${target.name}: registration now uses ${describeKubeconfigRef(target.ref)}`);
  } catch (err) {
    say(`could not re-point ${target.name}: ${err instanceof Error ? err.message : String(err)}`);
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
