/**
 * `npm start`: the fleetscope control plane on a laptop. The same handlers as in Lambda run against an
 * embedded DynamoDB, an in-process bus and scheduler, and a simulated demo fleet (or the contexts of a
 * real kubeconfig with --kubeconfig). `--once` runs every schedule once, prints the summary and exits.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { claimsSummaryLines, joinDemoClusterSets } from '../shared/claims/summary.js';
import { clusterAccess } from '../shared/fleet/cluster-access.js';
import { registerCluster } from '../shared/fleet/register.js';
import { RegistryStore } from '../shared/fleet/registry-store.js';
import type { KubeconfigRef } from '../shared/k8s/kubeconfig-ref.js';
import { ENV } from '../shared/platform/config.js';
import { deps } from '../shared/platform/deps.js';
import { startDemoFleet } from './demo-fleet.js';
import { type LocalRuntime, startLocalRuntime } from './runtime.js';
import { addSummarySection, printSummary } from './summary.js';

addSummarySection(claimsSummaryLines);

const USAGE = `usage: npm start -- [--once] [--kubeconfig PATH] [--clusters N] [--nodes M] [--state-dir DIR]
                    [--speedup X] [--verbose]`;

async function main(): Promise<number> {
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
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const clusters = positiveInt(values.clusters, '--clusters');
  const nodes = positiveInt(values.nodes, '--nodes');
  const speedup = Number(values.speedup);
  if (!(speedup > 0)) throw new Error('--speedup must be a positive number');
  if (!values.verbose) {
    process.env[ENV.logLevel] ??= 'WARN';
    process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  }
  const stateDir = resolve(values['state-dir'] ?? process.env.FLEETSCOPE_STATE_DIR ?? '.fleetscope');
  console.log(`fleetscope local control plane (state in ${stateDir})`);

  const runtime = await startLocalRuntime({ stateDir });
  const stops: (() => Promise<void>)[] = [() => runtime.stop()];
  const shutdown = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  };
  try {
    let targets: { name: string; ref: KubeconfigRef }[];
    if (values.kubeconfig) {
      targets = await contextsOf(resolve(values.kubeconfig));
      console.log(`targeting ${targets.length} context(s) of ${values.kubeconfig}`);
    } else {
      const fleet = await startDemoFleet({
        clusters,
        nodes,
        kubeconfigPath: join(stateDir, 'demo-kubeconfig.yaml'),
      });
      stops.push(() => fleet.stop());
      targets = fleet.targets;
      console.log(
        `simulated demo fleet: ${targets.length} cluster(s) of ${nodes} nodes (kubeconfig: ${fleet.kubeconfigPath})`,
      );
    }
    await registerTargets(runtime, targets);
    if (!values.kubeconfig) {
      // The demo puts its clusters into two ClusterSets; a real fleet's memberships are the operator's.
      const names = targets.map((t) => t.name);
      for (const line of await joinDemoClusterSets(runtime, deps().publisher, names)) console.log(line);
      await runtime.bus.drain();
    }

    let cycle = 0;
    const runCycle = async () => {
      cycle++;
      await runtime.scheduler.runOnce();
      await printSummary(runtime, `cycle ${cycle} at ${new Date().toISOString()}`);
    };
    await runCycle();
    if (values.once) {
      await shutdown();
      return 0;
    }
    console.log(`\nrunning; schedules every ${15 * (60 / speedup)} s at --speedup ${speedup} (Ctrl-C stops)`);
    runtime.scheduler.start(speedup, async (s) => {
      await printSummary(runtime, `schedule ${s.id} at ${new Date().toISOString()}`);
    });
    await new Promise<void>((r) => {
      process.once('SIGINT', r);
      process.once('SIGTERM', r);
    });
    await shutdown();
    return 0;
  } catch (err) {
    await shutdown();
    throw err;
  }
}

/** Registers each target not registered yet; a target that cannot be reached is reported and skipped. */
async function registerTargets(runtime: LocalRuntime, targets: { name: string; ref: KubeconfigRef }[]) {
  const store = new RegistryStore(runtime.db, runtime.table);
  const access = clusterAccess();
  for (const t of targets) {
    const existing = await store.get(t.name);
    if (existing) continue;
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

/** Each context of a kubeconfig becomes a cluster named after it (as an RFC 1123 label). */
async function contextsOf(path: string): Promise<{ name: string; ref: KubeconfigRef }[]> {
  let doc: { contexts?: { name?: string }[] };
  try {
    doc = parseYaml(await readFile(path, 'utf8'));
  } catch (err) {
    throw new Error(`cannot read kubeconfig ${path}: ${(err as NodeJS.ErrnoException).code ?? 'not YAML'}`);
  }
  const contexts = (doc?.contexts ?? []).map((c) => c.name).filter((n): n is string => Boolean(n));
  if (contexts.length === 0) throw new Error(`kubeconfig ${path} has no contexts`);
  return contexts.map((context) => ({ name: clusterNameFor(context), ref: { kind: 'file', path, context } }));
}

/** EKS contexts are ARNs (".../cluster/NAME"): keep the last part, lower-case, as an RFC 1123 label. */
export function clusterNameFor(context: string): string {
  const last = context.split('/').pop() ?? context;
  const name = last
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
  return name || 'cluster';
}

function positiveInt(value: string | undefined, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} must be a positive whole number`);
  return n;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`fleetscope: ${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
    process.exit(1);
  },
);
