/**
 * `fleetscope sim`: runs the Kubernetes API simulator with a demo fleet (demo-1..demo-N), writes a
 * kubeconfig for it and serves until SIGINT/SIGTERM. The simulated clock follows the wall clock unless
 * --manual-clock is given (then only POST /_sim/clock moves it).
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { demoFleetSpecs, demoVpas } from '../../local/demo-fleet.js';
import { type SimClusterSpec, type Simulator, startSimulator } from '../../local/sim/index.js';
import type { CliCommand } from '../command.js';
import { decimalFlag, UsageError } from '../command.js';
import { isDocument, type OutputFormat, outputFormat, print } from '../output.js';
import { runOnApiserver } from './sim-apiserver.js';

const USAGE = `usage: fleetscope sim --clusters N --nodes M --kubeconfig-out FILE [options]
       fleetscope sim --apiserver KUBECONFIG --nodes M [--context C] [--seed S] [--metrics MODE]

Runs simulated Kubernetes clusters demo-1..demo-N over HTTPS on 127.0.0.1, each with M nodes and two
DaemonSets whose load differs widely from node to node, and writes a kubeconfig (one context per
cluster) to FILE. Runs until interrupted.

options:
  --clusters N            number of clusters (1..100)
  --nodes M               nodes per cluster (0..10000)
  --kubeconfig-out FILE   where to write the kubeconfig
  --port-base P           cluster i listens on P+i-1 (default: ephemeral ports)
  --seed S                seed of the deterministic fleet (default 1)
  --metrics MODE          metrics.k8s.io: available (default), absent or unavailable
  --kubernetes-version V  server version to simulate (default 1.35.0; 1.32.13 reproduces the recordings)
  --manual-clock          keep the simulated clock still (advance it with POST /_sim/clock)
  --rbac                  enforce RBAC as kube-apiserver does (the kubeconfig's admin stays in system:masters)
  --demo                  also run npm start's demo workloads: the node-agent DaemonSet (load 0.25x to 4x
                          from node to node) with a VerticalPodAutoscaler asking for node scope (Auto on
                          demo-1, Off elsewhere), and netd (uniform load, mode Off) on demo-1; then
                          cluster register + run --once gives recommendations (recommendations list)
  --force                 overwrite FILE if it exists (otherwise an existing file is refused)
  -o FORMAT               table (default), wide, json or yaml: what is printed at start (clusters, servers,
                          kubeconfig path, clock)

against an existing kube-apiserver (as kwok does):
  --apiserver KUBECONFIG  run M simulated nodes, their kubelets, the scheduler, the DaemonSet controller,
                          the namespace defaults and metrics.k8s.io for that server instead of a simulated
                          one: Node objects are registered, pods bound through pods/binding, pod status,
                          resizes and DaemonSet status written through the API (the server judges every
                          write). The kubeconfig's user needs what those components do (system:masters
                          in a test cluster). metrics.k8s.io is served from a loopback HTTPS port behind
                          an APIService and an ExternalName Service 127.0.0.1 (the server must run on
                          this machine, with the front-proxy flags); --metrics absent leaves it out.
                          The simulated clock follows wall time. Not with --clusters, --kubeconfig-out,
                          --port-base, --rbac, --demo or --manual-clock.
  --context C             the kubeconfig's context (default: its current context)`;

interface Options {
  clusters: number;
  nodes: number;
  out: string;
  portBase?: number;
  seed: number;
  metrics: 'available' | 'absent' | 'unavailable';
  version: string;
  manualClock: boolean;
  force: boolean;
  rbac?: boolean;
  demo?: boolean;
  apiserver?: string;
  context?: string;
  versionGiven?: boolean;
  output?: string;
  json?: boolean;
  format?: OutputFormat;
}

const intArg = (name: string, v: string | undefined, min: number, max: number): number =>
  decimalFlag(name, v, { integer: true, min, max });

/** The flags that take no value, and what each sets. */
const SWITCHES: Record<string, (o: Partial<Options>) => void> = {
  '--manual-clock': (o) => {
    o.manualClock = true;
  },
  '--force': (o) => {
    o.force = true;
  },
  '--rbac': (o) => {
    o.rbac = true;
  },
  '--demo': (o) => {
    o.demo = true;
  },
  '--json': (o) => {
    o.json = true;
  },
};

function metricsOf(m: string): Options['metrics'] {
  if (m !== 'available' && m !== 'absent' && m !== 'unavailable')
    throw new UsageError(`--metrics must be available, absent or unavailable, got ${JSON.stringify(m)}`);
  return m;
}

function versionOf(v: string): string {
  if (!/^v?1\.\d+(\.\d+)?$/.test(v))
    throw new UsageError(`--kubernetes-version must look like 1.35.0, got ${JSON.stringify(v)}`);
  return v.replace(/^v/, '');
}

/** The flags that take a value, and what each sets from it. */
const VALUED: Record<string, (o: Partial<Options>, v: string, flag: string) => void> = {
  '--clusters': (o, v, f) => {
    o.clusters = intArg(f, v, 1, 100);
  },
  '--nodes': (o, v, f) => {
    o.nodes = intArg(f, v, 0, 10_000);
  },
  '--kubeconfig-out': (o, v) => {
    o.out = v;
  },
  '--port-base': (o, v, f) => {
    o.portBase = intArg(f, v, 1, 65_000);
  },
  '--seed': (o, v, f) => {
    o.seed = intArg(f, v, 0, 2 ** 31 - 1);
  },
  '--metrics': (o, v) => {
    o.metrics = metricsOf(v);
  },
  '--apiserver': (o, v) => {
    o.apiserver = v;
  },
  '--context': (o, v) => {
    o.context = v;
  },
  '--kubernetes-version': (o, v) => {
    o.version = versionOf(v);
    o.versionGiven = true;
  },
  '-o': (o, v) => {
    o.output = v;
  },
  '--output': (o, v) => {
    o.output = v;
  },
};

export function parseSimArgs(args: string[]): Options {
  const o: Partial<Options> = {
    seed: 1,
    metrics: 'available',
    version: '1.35.0',
    manualClock: false,
    force: false,
  };
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    const [flag, inline] = a.includes('=')
      ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)]
      : [a, undefined];
    const valued = VALUED[flag];
    const toggle = SWITCHES[flag];
    if (toggle && inline === undefined) toggle(o);
    else if (valued) {
      const v = inline ?? args[++i];
      if (v === undefined || v.startsWith('--')) throw new UsageError(`${flag} needs a value`);
      valued(o, v, flag);
    } else throw new UsageError(`unknown option ${JSON.stringify(a)}`);
  }
  o.format = outputFormat({ output: o.output, json: o.json });
  if (o.apiserver !== undefined) return apiserverMode(o);
  if (o.context !== undefined) throw new UsageError('--context goes with --apiserver');
  if (o.clusters === undefined) throw new UsageError('--clusters is required');
  if (o.nodes === undefined) throw new UsageError('--nodes is required');
  if (!o.out) throw new UsageError('--kubeconfig-out is required');
  return o as Options;
}

/** --apiserver: the nodes' count is needed; the options of a simulated server are refused, not ignored. */
function apiserverMode(o: Partial<Options>): Options {
  if (o.nodes === undefined) throw new UsageError('--nodes is required');
  const clash = [
    ['--clusters', o.clusters !== undefined],
    ['--kubeconfig-out', o.out !== undefined],
    ['--port-base', o.portBase !== undefined],
    ['--rbac', o.rbac],
    ['--demo', o.demo],
    ['--manual-clock', o.manualClock],
    ['--kubernetes-version', o.versionGiven],
    ['--metrics unavailable', o.metrics === 'unavailable'],
  ].find(([, set]) => set);
  if (clash) throw new UsageError(`${clash[0]} does not apply with --apiserver`);
  return { ...o, clusters: 0, out: '' } as Options;
}

/** The demo fleet: two DaemonSets per cluster with node-to-node load spreads of 16x. */
export function demoFleet(
  o: Pick<Options, 'clusters' | 'nodes' | 'seed' | 'metrics' | 'version'>,
): SimClusterSpec[] {
  return Array.from({ length: o.clusters }, (_, i) => ({
    name: `demo-${i + 1}`,
    nodes: o.nodes,
    seed: o.seed + i,
    kubernetesVersion: o.version,
    metricsApi: o.metrics,
    vpaCrd: true,
    daemonSets: [
      {
        name: 'node-exporter',
        namespace: 'monitoring',
        tolerations: [{ operator: 'Exists' }],
        containers: [
          {
            name: 'node-exporter',
            image: 'quay.io/prometheus/node-exporter:v1.9.1',
            requests: { cpu: '50m', memory: '64Mi' },
            limits: { memory: '180Mi' },
          },
          {
            name: 'kube-rbac-proxy',
            image: 'quay.io/brancz/kube-rbac-proxy:v0.19.1',
            requests: { cpu: '10m', memory: '20Mi' },
            limits: { memory: '40Mi' },
          },
        ],
        load: {
          perNode: 'heterogeneous',
          containers: {
            'node-exporter': { cpu: '25m', memory: '40Mi' },
            'kube-rbac-proxy': { cpu: '2m', memory: '14Mi' },
          },
          diurnalAmplitude: 0.3,
        },
      },
      {
        name: 'fluent-bit',
        namespace: 'logging',
        containers: [
          {
            name: 'fluent-bit',
            image: 'cr.fluentbit.io/fluent/fluent-bit:4.0.3',
            requests: { cpu: '100m', memory: '128Mi' },
            limits: { memory: '512Mi' },
          },
        ],
        load: {
          perNode: 'heterogeneous',
          cpu: '60m',
          memory: '80Mi',
          diurnalAmplitude: 0.5,
          memoryGrowthPerHour: 0.05,
        },
      },
    ],
  }));
}

/** --demo: each cluster also runs npm start's demo DaemonSets (their VPAs are added once it runs). */
function withDemo(o: Options, specs: SimClusterSpec[]): SimClusterSpec[] {
  if (!o.demo) return specs;
  const demo = demoFleetSpecs(specs.length, o.nodes);
  return specs.map((c, i) => ({
    ...c,
    daemonSets: [...(c.daemonSets ?? []), ...(demo[i]?.daemonSets ?? [])],
  }));
}

/** What the simulator serves: its clusters and servers, the kubeconfig, and which clock it keeps. */
export function simStartView(o: Options, sim: Pick<Simulator, 'clusters' | 'clock'>) {
  return {
    kubeconfig: resolve(o.out),
    kubernetesVersion: o.version,
    nodesPerCluster: o.nodes,
    metricsApi: o.metrics,
    demo: Boolean(o.demo),
    clock: o.manualClock ? 'manual' : 'wall',
    simTime: new Date(sim.clock.now()).toISOString(),
    clusters: sim.clusters.map((c) => ({
      name: c.name,
      context: c.name,
      server: c.server,
      ...(o.demo ? { vpas: demoVpas(sim.clusters.indexOf(c)).length } : {}),
    })),
  };
}

function printStart(o: Options, sim: Simulator): void {
  const view = simStartView(o, sim);
  const format = o.format ?? 'table';
  if (isDocument(format)) {
    print(format, view, () => []);
    return;
  }
  const width = Math.max(...sim.clusters.map((c) => c.name.length));
  console.log(
    `fleetscope sim: ${o.clusters} cluster(s) of ${o.nodes} node(s), Kubernetes ${o.version}; kubeconfig written to ${o.out}`,
  );
  for (const c of view.clusters)
    console.log(
      `  context ${c.name.padEnd(width)}  ${c.server}${format === 'wide' ? `  metrics ${o.metrics}${c.vpas ? `, ${c.vpas} node-scoped VPA(s)` : ''}` : ''}`,
    );
  console.log(
    o.manualClock
      ? `clock: sim time stands at ${view.simTime} (POST /_sim/clock moves it)`
      : `clock: sim time follows wall time (now ${view.simTime})`,
  );
  if (o.demo)
    console.log(
      `demo: node-scoped VPAs in every cluster; next: fleetscope cluster register --name demo-1 --kubeconfig ${o.out} --context demo-1, then fleetscope run --once`,
    );
  console.log(`try: kubectl --kubeconfig ${o.out} --context ${sim.clusters[0]?.name} get nodes`);
  console.log('Ctrl-C stops the simulator.');
}

export const command: CliCommand = {
  name: 'sim',
  summary: 'run the Kubernetes API simulator (a fleet of clusters over HTTPS)',
  usage: USAGE,
  outputs: { '': 'data' },
  async run(args: string[]): Promise<number> {
    const o = parseSimArgs(args);
    if (o.apiserver !== undefined)
      return runOnApiserver({ ...o, kubeconfig: o.apiserver, metrics: o.metrics !== 'absent' });
    // A kubeconfig is often someone's real one: never replaced unless asked.
    if (!o.force && existsSync(o.out)) throw new Error(`${o.out} exists; pass --force to overwrite it`);
    const clusters = withDemo(o, demoFleet(o)).map((c) => (o.rbac ? { ...c, rbac: true } : c));
    const sim = await startSimulator({ clusters, basePort: o.portBase });
    if (o.demo)
      sim.clusters.forEach((c, i) => {
        for (const vpa of demoVpas(i)) c.store.put('verticalpodautoscalers.autoscaling.k8s.io', vpa);
      });
    try {
      await writeFile(o.out, sim.kubeconfig(), { mode: 0o600, flag: o.force ? 'w' : 'wx' });
    } catch (err) {
      await sim.stop();
      const code = (err as NodeJS.ErrnoException).code;
      throw new Error(
        code === 'EEXIST'
          ? `${o.out} exists; pass --force to overwrite it`
          : `cannot write ${o.out}: ${code}`,
      );
    }
    printStart(o, sim);
    const started = Date.now();
    const simStart = sim.clock.now();
    const ticker = o.manualClock
      ? undefined
      : setInterval(() => sim.clock.set(simStart + (Date.now() - started)), 5_000);
    const signal = await new Promise<NodeJS.Signals>((resolve) => {
      process.once('SIGINT', () => resolve('SIGINT'));
      process.once('SIGTERM', () => resolve('SIGTERM'));
    });
    if (ticker) clearInterval(ticker);
    await sim.stop();
    if (!isDocument(o.format ?? 'table')) console.log(`fleetscope sim: stopped (${signal})`);
    return 0;
  },
};
