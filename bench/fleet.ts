/**
 * The fleet run of `npm run bench`: 1,000 small simulated clusters (another process) registered with a
 * local control plane (dynalite, bus, the very handlers Lambda runs), each workers' concurrency set to
 * the reserved concurrency the stack would deploy for that fleet. For every scheduled capability: the
 * time from the schedule's tick to the last cluster done, invocations, events, DynamoDB units, API
 * requests, and the monthly cost of the control plane per cluster at published prices. A few clusters
 * are slow and a few fail, to show they do not hold up the rest. Figures only, never asserted.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type LocalRuntime, startLocalRuntime } from '../local/runtime.js';
import { fleetSummaryLines } from '../local/summary.js';
import { allFunctions, allRules, allSchedules, functionSpec } from '../shared/capabilities.js';
import { claimStoreOf } from '../shared/claims/store-dynamo.js';
import { claimsSummaryLines } from '../shared/claims/summary.js';
import { clusterConnector, resetClusterConnector } from '../shared/fleet/cluster-access.js';
import { PER_CLUSTER_SECONDS, reservedConcurrency } from '../shared/fleet/concurrency.js';
import { DynamoRegistry } from '../shared/fleet/registry-dynamo.js';
import { DEFAULTS } from '../shared/platform/config.js';
import { deps } from '../shared/platform/deps.js';
import { HOURS_PER_MONTH, PRICES } from './cost.js';

const ROOT = join(import.meta.dirname, '..');
const CLUSTERS = Number(process.env.BENCH_FLEET_CLUSTERS ?? 1000);
const SLOW = 3;
const FAILING = 3;
const SLOW_MS = 3000;
/** Each schedule once; claims twice: its first cycle is first contact (claims written and announced). */
const CYCLES = [
  ['inventory', 'inventory'],
  ['claims', 'claims (first)'],
  ['claims', 'claims'],
  ['cycle', 'cycle'],
] as const;
/** Log bytes an invocation of these workers writes at INFO (a few JSON lines); logs are off here. */
const LOG_BYTES_PER_INVOCATION = 1500;
/** Network time per invocation this machine lacks (DynamoDB, EventBridge, the clusters): added to CPU. */
const IO_SECONDS_PER_INVOCATION = 0.1;
/** Lambda gives one vCPU at 1,769 MB, a proportional share below. */
const FULL_VCPU_MB = 1769;

const n = (v: number, d = 0) =>
  v.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const usd = (v: number) => `$${v < 0.01 ? v.toFixed(5) : v.toFixed(4)}`;

/** DynamoDB capacity the handlers consume, from ReturnConsumedCapacity on every request. */
function meterDynamo(client: DynamoDBClient) {
  const units = { read: 0, write: 0, requests: 0 };
  const WRITES = /^(Put|Update|Delete|BatchWrite|TransactWrite)/;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { ReturnConsumedCapacity?: string };
      input.ReturnConsumedCapacity ??= 'TOTAL';
      const out = await next(args);
      const cc = (out.output as { ConsumedCapacity?: unknown }).ConsumedCapacity;
      const total = [cc]
        .flat()
        .reduce((a: number, c) => a + ((c as { CapacityUnits?: number } | undefined)?.CapacityUnits ?? 0), 0);
      units.requests++;
      if (WRITES.test(String(context.commandName))) units.write += total;
      else units.read += total;
      return out;
    },
    { step: 'initialize', name: 'fleetBenchCapacity' },
  );
  return units;
}

interface SimProcess {
  proc: ChildProcess;
  lines: Interface;
  next(): Promise<Record<string, unknown>>;
}

function startSim(dir: string): SimProcess {
  const proc = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(ROOT, 'bench', 'fleet-sim-server.ts'),
      dir,
      String(CLUSTERS),
      String(SLOW),
      String(FAILING),
      String(SLOW_MS),
    ],
    { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: proc.stdout as NodeJS.ReadableStream });
  const queue: string[] = [];
  const waiters: ((l: string) => void)[] = [];
  lines.on('line', (l) => {
    const w = waiters.shift();
    if (w) w(l);
    else queue.push(l);
  });
  return {
    proc,
    lines,
    next: () =>
      new Promise((resolve, reject) => {
        const take = (l: string) => resolve(JSON.parse(l));
        const l = queue.shift();
        if (l !== undefined) take(l);
        else {
          waiters.push(take);
          proc.once('exit', (code) => reject(new Error(`fleet-sim-server exited with ${code}`)));
        }
      }),
  };
}

const clusterName = (i: number) => `fleet-${String(i).padStart(4, '0')}`;

interface Phase {
  capability: string;
  label: string;
  wallMs: number;
  p50Ms: number;
  p99Ms: number;
  invocations: number;
  workerMs: number;
  /** CPU of this process (handlers, dynalite, bus) during the phase. */
  cpuMs: number;
  events: number;
  rru: number;
  wru: number;
  apiRequests: number;
  kubeconfigLoads: number;
  unreachable: number;
  concurrency: number;
}

async function runPhase(
  runtime: LocalRuntime,
  capability: string,
  label: string,
  units: { read: number; write: number },
): Promise<Phase> {
  const worker = capability;
  const stat = () => runtime.invoker.stats.get(worker) ?? { invocations: 0, totalMs: 0 };
  const before = {
    ...stat(),
    ...units,
    events: runtime.bus.stats.published,
    api: clusterConnector().stats(),
  };
  const done: number[] = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  runtime.invoker.onInvoked = (fn) => {
    if (fn === worker) done.push(performance.now() - t0);
  };
  // The schedule's tick: EventBridge Scheduler invokes dispatch asynchronously; then the fan-out drains.
  await runtime.invoker.invokeAsync('dispatch', { capability }, `schedule:${capability}`);
  await runtime.bus.drain();
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  runtime.invoker.onInvoked = undefined;
  done.sort((a, b) => a - b);
  const api = clusterConnector().stats();
  const statuses =
    capability === 'inventory'
      ? await new DynamoRegistry(runtime.db, runtime.table).statuses(names())
      : undefined;
  return {
    capability,
    label,
    wallMs,
    p50Ms: done[Math.floor(done.length * 0.5)] ?? 0,
    p99Ms: done[Math.floor(done.length * 0.99)] ?? 0,
    invocations: stat().invocations - before.invocations,
    workerMs: stat().totalMs - before.totalMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    events: runtime.bus.stats.published - before.events,
    rru: units.read - before.read,
    wru: units.write - before.write,
    // The cycle reads through its raw reader, which reports its requests in node scope's cycle event.
    apiRequests:
      capability === 'cycle'
        ? runtime.bus.log
            .slice(before.events)
            .filter((e) => e.detailType === 'NodeScopeCycleCompleted')
            .reduce((a, e) => a + Number((e.detail as { apiRequests?: number }).apiRequests ?? 0), 0)
        : api.requests - before.api.requests,
    kubeconfigLoads: api.kubeconfigLoads - before.api.kubeconfigLoads,
    unreachable: statuses ? [...statuses.values()].filter((s) => !s.reachable).length : 0,
    concurrency: concurrencyFor(worker),
  };
}

const names = () => Array.from({ length: CLUSTERS }, (_, i) => clusterName(i));
const concurrencyFor = (fn: string) =>
  reservedConcurrency(functionSpec(fn), CLUSTERS, allSchedules(), allRules()) ?? 1;
const periodOf = (capability: string) =>
  allSchedules().find((s) => s.target === 'dispatch' && s.input.capability === capability)?.everyMinutes ??
  15;

/** Monthly cost per cluster of one capability at its schedule, from one measured cycle of the fleet. */
function costPerCluster(p: Phase) {
  const cyclesPerMonth = (HOURS_PER_MONTH * 60) / periodOf(p.capability);
  const memoryMb = allFunctions().find((f) => f.id === p.capability)?.memoryMb ?? 512;
  // Billed time: the CPU each invocation used here at the function's vCPU share, plus network time.
  const lambdaSeconds =
    (p.cpuMs / 1000 / p.invocations) * Math.max(1, FULL_VCPU_MB / memoryMb) + IO_SECONDS_PER_INVOCATION;
  const perCycle = {
    invocations: p.invocations / CLUSTERS,
    seconds: (lambdaSeconds * p.invocations) / CLUSTERS,
    rru: p.rru / CLUSTERS,
    wru: p.wru / CLUSTERS,
    events: p.events / CLUSTERS,
    // Each worker's containers keep a kubeconfig 5 minutes (FLEETSCOPE_KUBECONFIG_TTL_SECONDS), no longer
    // than a period: one GetSecretValue per cluster and cycle (here one process shares one cache).
    secrets: 1,
  };
  const memoryGb = memoryMb / 1024;
  const lines: [string, number][] = [
    ['Lambda requests', cyclesPerMonth * perCycle.invocations * PRICES.lambdaRequest],
    ['Lambda duration', cyclesPerMonth * perCycle.seconds * memoryGb * PRICES.lambdaGbSecond],
    ['DynamoDB reads', cyclesPerMonth * perCycle.rru * PRICES.dynamoReadUnit],
    ['DynamoDB writes', cyclesPerMonth * perCycle.wru * PRICES.dynamoWriteUnit],
    ['EventBridge events', cyclesPerMonth * perCycle.events * PRICES.eventBridgeEvent],
    ['Secrets Manager', cyclesPerMonth * perCycle.secrets * PRICES.secretsApiCall],
    [
      'CloudWatch Logs',
      ((cyclesPerMonth * perCycle.invocations * LOG_BYTES_PER_INVOCATION) / 1e9) * PRICES.logsIngestGb,
    ],
    // The schedule and the dispatch invocation are once per fleet and cycle: a thousandth each here.
    [
      'Scheduler + dispatch',
      (cyclesPerMonth * (PRICES.schedulerInvocation + PRICES.lambdaRequest)) / CLUSTERS,
    ],
  ];
  return { cyclesPerMonth, perCycle, lines, total: lines.reduce((a, [, v]) => a + v, 0) };
}

export async function runFleetBench(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'fleetscope-fleet-bench-'));
  let sim: SimProcess | undefined;
  let runtime: LocalRuntime | undefined;
  try {
    console.log(
      `\nfleetscope fleet benchmark: ${n(CLUSTERS)} simulated clusters of 2 nodes (simulator in another process; ${SLOW} answer after ${SLOW_MS / 1000} s, ${FAILING} answer 503)`,
    );
    sim = startSim(dir);
    const up = await sim.next();
    console.log(
      `  simulator: ${n(CLUSTERS)} clusters up in ${n(Number(up.startSeconds), 1)} s, RSS ${n(Number(up.rssMiB))} MiB`,
    );

    process.env.FLEETSCOPE_LOG_LEVEL = 'SILENT';
    process.env.POWERTOOLS_METRICS_DISABLED = 'true';
    runtime = await startLocalRuntime({ retryDelayMs: 200, concurrency: concurrencyFor });
    const units = meterDynamo(deps().dynamo);
    const registry = new DynamoRegistry(runtime.db, runtime.table);
    const t0 = performance.now();
    for (let i = 0; i < CLUSTERS; i += 50)
      await Promise.all(
        names()
          .slice(i, i + 50)
          .map((name) =>
            registry.add({
              name,
              kubeconfig: { kind: 'file', path: join(dir, `${name}.yaml`), context: name },
              labels: { 'fleetscope.io/source': 'bench' },
              registeredAt: new Date().toISOString(),
              owner: DEFAULTS.controlPlane,
            }),
          ),
      );
    console.log(`  registry: ${n(CLUSTERS)} clusters written in ${n((performance.now() - t0) / 1000, 1)} s`);

    const phases: Phase[] = [];
    for (const [capability, label] of CYCLES) phases.push(await runPhase(runtime, capability, label, units));
    const tList = performance.now();
    const listed = await registry.list();
    const statuses = await registry.statuses(listed.map((c) => c.name));
    const listMs = performance.now() - tList;
    // The report npm start prints after each cycle: the fleet's and the claims' sections.
    const report: string[] = [];
    for (const [name, section] of [
      ['fleet', fleetSummaryLines],
      ['claims', (rt: LocalRuntime) => claimsSummaryLines(claimStoreOf(rt))],
    ] as const) {
      const t = performance.now();
      const lines = await section(runtime);
      report.push(`${name} ${n(lines.length)} lines in ${n(performance.now() - t)} ms`);
    }
    sim.proc.stdin?.write('rss\n');
    const simRss = Number((await sim.next()).rssMiB);

    console.log(
      `\none cycle of each schedule (tick -> last cluster done; workers at the reserved concurrency the stack deploys for ${n(CLUSTERS)} clusters):`,
    );
    console.log(
      '  CYCLE           CONCURRENCY  TICK->LAST  P50 DONE  P99 DONE  INVOCATIONS  EVENTS  API REQ  RRU      WRU      CPU/INVOCATION',
    );
    for (const p of phases)
      console.log(
        `  ${p.label.padEnd(14)}  ${String(p.concurrency).padStart(11)}  ${`${n(p.wallMs / 1000, 1)} s`.padStart(10)}  ${`${n(p.p50Ms / 1000, 1)} s`.padStart(8)}  ${`${n(p.p99Ms / 1000, 1)} s`.padStart(8)}  ${n(p.invocations).padStart(11)}  ${n(p.events).padStart(6)}  ${n(p.apiRequests).padStart(7)}  ${n(p.rru, 1).padStart(7)}  ${n(p.wru, 1).padStart(7)}  ${n(p.cpuMs / p.invocations, 0)} ms (wall ${n(p.workerMs / p.invocations, 0)} ms at this concurrency; ${PER_CLUSTER_SECONDS[p.capability]} s assumed in Lambda)`,
      );
    const inv = phases.find((p) => p.capability === 'inventory');
    console.log(
      `  unreachable after inventory: ${inv?.unreachable ?? 0} (the ${FAILING} answering 503); dead letters ${runtime.invoker.deadLetters.length}`,
    );
    console.log(
      `  cluster list (registry query + ${Math.ceil(CLUSTERS / 100)} BatchGetItem): ${n(listed.length)} clusters, ${n(statuses.size)} statuses in ${n(listMs)} ms`,
    );
    console.log(`  the report (npm start's summary): ${report.join(', ')}`);
    console.log(
      `  memory: simulator ${n(simRss)} MiB RSS for ${n(CLUSTERS)} clusters; control plane process ${n(process.memoryUsage().rss / 2 ** 20)} MiB RSS (${n(clusterConnector().stats().clientsBuilt)} cluster clients)`,
    );

    console.log(
      '\nmonthly cost of the control plane per cluster (us-east-1 on-demand, published prices; no free tier):',
    );
    let total = 0;
    // Steady state: the last cycle of each capability.
    for (const p of phases.filter(
      (x, i) => !phases.slice(i + 1).some((y) => y.capability === x.capability),
    )) {
      const c = costPerCluster(p);
      total += c.total;
      console.log(
        `  ${p.capability.padEnd(10)} every ${periodOf(p.capability)} min (${n(c.cyclesPerMonth)} cycles): ${usd(c.total)}  = ${c.lines.map(([k, v]) => `${k} ${usd(v)}`).join(', ')}`,
      );
      console.log(
        `             per cluster and cycle: ${n(c.perCycle.invocations, 2)} invocations, ${n(c.perCycle.seconds, 3)} s, ${n(c.perCycle.rru, 1)} RRU, ${n(c.perCycle.wru, 1)} WRU, ${n(c.perCycle.events, 1)} events, ${n(c.perCycle.secrets)} kubeconfig read (5-minute cache)`,
      );
    }
    console.log(
      `  total: ${usd(total)} per cluster per month; $${n(total * CLUSTERS, 2)} a month for ${n(CLUSTERS)} clusters`,
    );
    console.log(
      `  Lambda time = this process's CPU per invocation (handlers, dynalite and bus: an overestimate) at the function's vCPU share (1 vCPU at ${FULL_VCPU_MB} MB) + ${IO_SECONDS_PER_INVOCATION * 1000} ms of network per invocation; logs counted at ${LOG_BYTES_PER_INVOCATION} B per invocation; STS AssumeRole is free; CloudWatch custom metrics ($0.30 each, by function) are fleet-wide, not per cluster.`,
    );
  } finally {
    await resetClusterConnector();
    await runtime?.stop();
    sim?.proc.stdin?.end();
    await new Promise((r) => setTimeout(r, 300));
    if (sim && sim.proc.exitCode === null) sim.proc.kill();
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.filename === process.argv[1])
  runFleetBench().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
