/**
 * The balloon part of `npm run bench`: balloon cycles on the 5,000-node cluster with every pod listed
 * (the DaemonSets' pods plus 20 workload pods per node: about 30 per node), in separate processes as in
 * the node-scope run:
 *   sim-server.ts       the Kubernetes API, with BENCH_WORKLOAD_PODS=20
 *   dynamo-server.ts    DynamoDB (dynalite)
 *   balloon-cycle.ts    the cycle's balloon phase alone (BENCH_MODE=balloons), or node scope then
 *                       balloons over one snapshot (BENCH_MODE=both), measured
 *   balloon-floor.ts    the same API responses fetched and JSON-parsed, nothing else
 * Figures only: nothing here is asserted by the test suite.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validatePolicy } from '../shared/balloons/policy.js';
import { DynamoBalloonStore } from '../shared/balloons/store-dynamo.js';
import { cycleCapability } from '../shared/cycle/capability.js';
import { DEFAULT_SETTINGS } from '../shared/nodescope/settings.js';
import { HOURS_PER_MONTH, PRICES } from './cost.js';
import { once, startSimAndDynamo, stopChildren } from './processes.js';
import { CLUSTER, NODES } from './spec.js';

const WORKLOADS_PER_NODE = 20;
const n = (v: number, d = 0) =>
  v.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const verdict = (ok: boolean) => (ok ? 'met' : 'NOT MET');

interface BalloonRun {
  cpuMs: number;
  nodescopeCpuMs: number;
  wallMs: number;
  maxRssMiB: number;
  byOperation: Record<string, number>;
  requests: number;
  /** Response bytes on the wire (gzip-compressed as the server sent them), and decoded. */
  wireBytes: number;
  decodedBytes: number;
  nodes: number;
  pods: number;
  resizes: number;
  blockedNodes: number;
  errors: string[];
  stateBytes: number;
  writes: number;
  nodescopeDaemonSets?: number;
}

export async function balloonBench(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'fleetscope-bench-balloons-'));
  const children: ChildProcess[] = [];
  try {
    console.log(
      `\nfleetscope balloons benchmark: 1 cluster of ${n(NODES)} nodes, the DaemonSets' pods plus ${WORKLOADS_PER_NODE} workload pods per node, a balloon policy on every node`,
    );
    const t0 = performance.now();
    const { kubeconfig, endpoint, control, ddb, db } = await startSimAndDynamo(
      dir,
      children,
      { BENCH_WORKLOAD_PODS: String(WORKLOADS_PER_NODE) },
      16_000,
    );
    console.log(`  simulator up in ${n((performance.now() - t0) / 1000, 1)} s`);
    await new DynamoBalloonStore(db, 'fleetscope').putPolicy(
      CLUSTER,
      validatePolicy({
        name: 'all',
        selector: 'kubernetes.io/os=linux',
        headroomPercent: 20,
        max: { cpu: '64', memory: '256Gi' },
        shrinkCooldownMinutes: 0,
      }),
    );
    let now = (await control('GET', '/_sim/clock')).now as number;
    const run = async (mode: 'balloons' | 'both', budget?: number): Promise<BalloonRun> => {
      now += DEFAULT_SETTINGS.periodMinutes * 60_000;
      await control('POST', '/_sim/clock', { advanceMs: DEFAULT_SETTINGS.periodMinutes * 60_000 });
      await control('DELETE', '/_sim/stats');
      return (await once('balloon-cycle.ts', {
        BENCH_KUBECONFIG: kubeconfig,
        BENCH_DYNAMO: endpoint,
        BENCH_NOW: String(now),
        BENCH_MODE: mode,
        ...(budget ? { BENCH_WRITE_BUDGET: String(budget) } : {}),
      })) as unknown as BalloonRun;
    };
    // Converge first (one cycle creates the objects, the next sizes every balloon, with no write budget),
    // so the measured cycles are the steady state; then one busy cycle after a policy change.
    const first = await run('balloons');
    const converge = await run('balloons', NODES * 2);
    console.log(
      `  setup: the first cycle created the PriorityClass and DaemonSet (${n(first.wallMs / 1000, 1)} s); the next sized ${n(converge.resizes)} balloons without a budget (${n(converge.wallMs / 1000, 1)} s)`,
    );
    const runs: BalloonRun[] = [];
    for (let i = 0; i < 3; i++) runs.push(await run('balloons'));
    const floor = (await once('balloon-floor.ts', { BENCH_KUBECONFIG: kubeconfig })) as {
      cpuMs: number;
      requests: number;
      wireBytes: number;
      decodedBytes: number;
    };
    await new DynamoBalloonStore(db, 'fleetscope').putPolicy(
      CLUSTER,
      validatePolicy({
        name: 'all',
        selector: 'kubernetes.io/os=linux',
        headroomPercent: 40,
        max: { cpu: '64', memory: '256Gi' },
        shrinkCooldownMinutes: 0,
      }),
    );
    const busy = await run('balloons');
    const both = await run('both');
    report(runs, floor, busy, both);
    now += 60_000;
    await control('POST', '/_sim/clock', { advanceMs: 60_000 });
    const grow = (await once('balloon-grow.ts', {
      BENCH_KUBECONFIG: kubeconfig,
      BENCH_DYNAMO: endpoint,
      BENCH_NOW: String(now),
    })) as unknown as { idle: GrowPass; deferred: GrowPass; node: string };
    growReport(grow, worstOf(runs).stateBytes);
    await ddb.destroy();
  } finally {
    await stopChildren(children, dir);
  }
}

interface GrowPass {
  wallMs: number;
  cpuMs: number;
  clientRequests: number;
  deferred: number;
  pending: number;
  served: number;
  resizes: number;
}

const worstOf = (runs: BalloonRun[]) => runs.reduce((a, r) => (r.cpuMs > a.cpuMs ? r : a));

/**
 * Grow on demand: the pass every cluster pays every minute (nothing waiting), and one that serves a
 * Deferred resize; latency is the schedule's minute (30 s on average) plus the serving pass; cost is
 * the idle pass's, as the rare serving passes are within its noise.
 */
function growReport(g: { idle: GrowPass; deferred: GrowPass; node: string }, stateBytes: number): void {
  const { idle, deferred } = g;
  console.log(
    `\n  grow on demand (every minute): idle pass (one query, the pending pods and the ResizeDeferred events listed) ${n(idle.wallMs)} ms wall, ${n(idle.cpuMs)} ms CPU; with a Deferred resize on ${g.node}: ${deferred.deferred} Deferred pod(s) found, ${deferred.served} node(s) sized alone in ${n(deferred.wallMs)} ms wall, ${deferred.resizes} balloon resize(s)`,
  );
  console.log(
    `    latency: at most 60 s (30 s on average) from the Deferred answer to the pass, plus ${n(deferred.wallMs / 1000, 2)} s to serve: ${verdict(deferred.served > 0 && deferred.wallMs < 60_000)} (within a minute of the next pass)`,
  );
  const passes = 60 * HOURS_PER_MONTH;
  const memGb = 1769 / 1024;
  const lambda = passes * ((idle.wallMs / 1000) * memGb * PRICES.lambdaGbSecond + PRICES.lambdaRequest);
  const rru = Math.ceil(stateBytes / 4096);
  const dynamo = passes * rru * PRICES.dynamoReadUnit;
  const events = passes * PRICES.eventBridgeEvent;
  const total = lambda + dynamo + events;
  console.log(
    `    monthly: ${n(passes)} passes x (${n(idle.wallMs / 1000, 2)} s x ${n(memGb, 3)} GB Lambda + a request) = $${n(lambda, 2)}; DynamoDB ${rru} RRU each (the balloon items, state included) = $${n(dynamo, 2)}; one dispatch event each = $${n(events, 2)}; total $${n(total, 2)} per cluster = $${n((total / NODES) * 1000, 2)} per 1,000 nodes at ${n(NODES)} nodes (a cluster of 50 nodes pays the same $${n(total, 2)}: $${n((total / 50) * 1000, 2)} per 1,000 nodes)`,
  );
}

function report(
  runs: BalloonRun[],
  floor: { cpuMs: number; requests: number; wireBytes: number; decodedBytes: number },
  busy: BalloonRun,
  both: BalloonRun,
): void {
  const worst = worstOf(runs);
  const pages = (op: string, r: BalloonRun) => r.byOperation[op] ?? 0;
  const ratio = worst.cpuMs / floor.cpuMs;
  const rss = Math.max(...runs.map((r) => r.maxRssMiB));
  console.log(
    `  per cycle (steady state, worst of ${runs.length}): ${n(worst.nodes)} nodes, ${n(worst.pods)} pods listed, ${worst.resizes} resizes, ${worst.blockedNodes} blocked reclaims`,
  );
  const lists = pages('list pods', worst) + pages('list nodes', worst);
  const reads = worst.requests - worst.writes;
  const table: [string, string, string, string][] = [
    [
      'Kubernetes API reads',
      `${reads}: ${pages('list pods', worst)} pod pages + ${pages('list nodes', worst)} node pages + ${reads - lists} (PriorityClass, DaemonSet, node metrics)`,
      'list pages + a constant',
      verdict(reads - lists <= 4),
    ],
    ['Kubernetes API writes', `${worst.writes}`, '0 at steady state', verdict(worst.writes === 0)],
    [
      'bytes read from the apiserver',
      `${n(worst.wireBytes / 1e6, 1)} MB on the wire (gzip), ${n(worst.decodedBytes / 1e6, 1)} MB decoded (floor: ${n(floor.wireBytes / 1e6, 1)} / ${n(floor.decodedBytes / 1e6, 1)} MB)`,
      '',
      '',
    ],
    [
      'CPU / floor (fetch + parse only)',
      `${n(worst.cpuMs)} ms / ${n(floor.cpuMs)} ms = ${n(ratio, 2)}x`,
      '<= 3x',
      verdict(ratio <= 3),
    ],
    ['peak RSS', `${n(rss)} MiB`, '< 1 GiB', verdict(rss < 1024)],
    [
      'state stored (one item, compressed)',
      `${n(worst.stateBytes / 1024, 1)} KiB`,
      '< 400 KB',
      verdict(worst.stateBytes < 400_000),
    ],
    [
      'busy cycle (after a policy change)',
      `${busy.resizes} resizes, ${busy.writes} writes, ${busy.requests - busy.writes} reads, ${n(busy.cpuMs)} ms CPU (${n(busy.cpuMs / floor.cpuMs, 2)}x), ${n(busy.maxRssMiB)} MiB`,
      'writes <= budget x 2',
      verdict(busy.writes <= 400),
    ],
  ];
  for (const [what, value, target, ok] of table)
    console.log(`  ${what.padEnd(36)} ${value.padEnd(64)} ${target.padEnd(24)} ${ok}`);
  const nsPods = pages('list pods', both);
  console.log(
    `  node scope and balloons in one cycle: ${nsPods} pod list pages for ${n(both.pods)} pods (${both.nodescopeDaemonSets ?? 0} node-scoped DaemonSets served from the same list): no pod read twice (${verdict(nsPods === pages('list pods', worst))}); ${n(both.cpuMs)} ms CPU (node scope ${n(both.nodescopeCpuMs)} ms), peak RSS ${n(both.maxRssMiB)} MiB (${verdict(both.maxRssMiB < 1024)})`,
  );
  cost(worst);
}

function cost(r: BalloonRun): void {
  const cycles = (60 / DEFAULT_SETTINGS.periodMinutes) * HOURS_PER_MONTH;
  const memGb = (cycleCapability.functions[0]?.memoryMb ?? 1769) / 1024;
  const lambda = cycles * (r.wallMs / 1000) * memGb * PRICES.lambdaGbSecond;
  const rru = Math.ceil(r.stateBytes / 4096);
  const wru = Math.ceil(r.stateBytes / 1024);
  const dynamo = cycles * (rru * PRICES.dynamoReadUnit + wru * PRICES.dynamoWriteUnit);
  const events = cycles * PRICES.eventBridgeEvent;
  const total = lambda + dynamo + events;
  const per1000 = (total / NODES) * 1000;
  console.log(
    `\n  monthly AWS cost of balloons on this cluster (a cycle every ${DEFAULT_SETTINGS.periodMinutes} min = ${n(cycles)} cycles; the balloon phase runs inside the cycle's ${n(memGb * 1024)} MB Lambda):`,
  );
  console.log(
    `    Lambda   ${n(cycles)} x ${n(r.wallMs / 1000, 2)} s x ${n(memGb, 3)} GB x $${PRICES.lambdaGbSecond}/GB-s = $${n(lambda, 2)}`,
  );
  console.log(
    `    DynamoDB ${n(cycles)} x (${rru} RRU x $${PRICES.dynamoReadUnit * 1e6}/M + ${wru} WRU x $${PRICES.dynamoWriteUnit * 1e6}/M) (one ${n(r.stateBytes / 1024, 1)} KiB state item read and written) = $${n(dynamo, 2)}`,
  );
  console.log(
    `    EventBridge ${n(cycles)} x 1 BalloonCycleCompleted x $1/M = $${n(events, 2)} (plus one PodResized per resize while sizes move)`,
  );
  console.log(`    total $${n(total, 2)}/month for ${n(NODES)} nodes = $${n(per1000, 2)} per 1,000 nodes`);
  console.log(
    `    (Lambda bills wall time: here mostly the simulator serving ${n(r.decodedBytes / 1e6)} MB (${n(r.wireBytes / 1e6)} MB gzip-compressed) on a shared 2-core machine; fleetscope's own CPU was ${n(r.cpuMs / 1000, 1)} s, which at 1 vCPU would bill $${n(((cycles * (r.cpuMs / 1000) * memGb * PRICES.lambdaGbSecond) / NODES) * 1000, 2)} per 1,000 nodes for Lambda)`,
  );
}
