/**
 * Grow on demand, end to end (`npm run bench`, or BENCH_ONLY=grow): the latency from a workload
 * waiting for room on a ballooned node to it being served, through the real path (the local runtime's
 * schedules on the simulator's manual clock: the minute's `balloons-grow` dispatch, the `balloons-grow`
 * handler, its pass, the balloon deflate, the kubelet admitting the resize or binding the pod), and what
 * the pass costs per 1,000 nodes-month. Two kinds of waiting work, a few trials each, starting at
 * different seconds of the minute:
 *   - node scope's per-node upsize of a DaemonSet pod Deferred on a full node (the resize completes);
 *   - a pod Pending for resources in the policy-sized pool (it runs).
 * Latency = simulated time from the kubelet's or scheduler's answer to the pass that served it (the
 * clock steps a second at a time, the schedules run when due) + that pass's wall time. Nothing is
 * preempted: every trial checks that no pod was replaced or stopped. Figures only, nothing asserted.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalRuntime } from '../local/runtime.js';
import { startSimulator } from '../local/sim/index.js';
import { serveDemand } from '../shared/balloons/grow.js';
import { validatePolicy } from '../shared/balloons/policy.js';
import { DynamoBalloonStore } from '../shared/balloons/store-dynamo.js';
import { DynamoRegistry } from '../shared/fleet/registry-dynamo.js';
import { ClusterClient } from '../shared/k8s/client.js';
import { RawReader } from '../shared/k8s/raw-reader.js';
import { rawResizeApi } from '../shared/resize/raw-api.js';
import { HOURS_PER_MONTH, PRICES } from './cost.js';

const NODES = Number(process.env.BENCH_GROW_NODES ?? 100);
const TRIALS = 4;
const CLUSTER = 'grow';
const START = Date.UTC(2026, 10, 2);
const SECOND = 1_000;
/** The grow function's memory (the stack's default for workers), for the Lambda price. */
const LAMBDA_GB = 1769 / 1024;

const n = (v: number, d = 0) =>
  v.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

interface Trial {
  kind: 'deferred' | 'pending';
  /** Simulated ms from the answer (Deferred, Unschedulable) to the serving pass. */
  waitMs: number;
  /** Wall ms of the schedules that ran at the serving step (the pass that served it). */
  passMs: number;
  servedBy: string[];
  disrupted: number;
}

export async function growLatencyBench(): Promise<void> {
  console.log(
    `\nfleetscope grow-on-demand latency: 1 cluster of ${n(NODES)} nodes, a balloon policy on every node, through the local runtime's schedules on a manual clock`,
  );
  const sim = await startSimulator({
    clusters: [
      {
        name: CLUSTER,
        nodes: NODES,
        daemonSets: [
          { name: 'agent', containers: [{ name: 'a', requests: { cpu: '100m', memory: '64Mi' } }] },
        ],
      },
    ],
    now: START,
  });
  const dir = await mkdtemp(join(tmpdir(), 'fleetscope-bench-grow-'));
  // The handlers' logs and metrics would drown the figures; the settle wait is for inflates only.
  const saved = { ...process.env };
  process.env.FLEETSCOPE_LOG_LEVEL = 'SILENT';
  process.env.POWERTOOLS_METRICS_DISABLED = 'true';
  process.env.FLEETSCOPE_BALLOONS_SETTLE_MS = '0';
  const runtime = await startLocalRuntime({ clock: () => sim.clock.now(), retryDelayMs: 5 });
  const client = ClusterClient.fromKubeconfig(sim.kubeconfig(), { cluster: CLUSTER, context: CLUSTER });
  const cluster = sim.cluster(CLUSTER);
  try {
    const path = join(dir, 'kubeconfig.yaml');
    await sim.writeKubeconfig(path);
    await new DynamoRegistry(runtime.db, runtime.table).add({
      name: CLUSTER,
      kubeconfig: { kind: 'file', path, context: CLUSTER },
      labels: {},
      registeredAt: new Date(START).toISOString(),
    });
    // Every node offers its requests plus 500m, at least 1 cpu: a node is "full" at about 1 cpu.
    await new DynamoBalloonStore(runtime.db, runtime.table).putPolicy(
      CLUSTER,
      validatePolicy({
        name: 'all',
        selector: 'kubernetes.io/os=linux',
        headroomPercent: 0,
        headroomMin: { cpu: '500m', memory: '1Gi' },
        min: { cpu: '1', memory: '2Gi' },
        max: { cpu: '64', memory: '256Gi' },
        step: { cpu: '500m', memory: '1Gi' },
        shrinkCooldownMinutes: 0,
      }),
    );
    // Converge: the objects are created, then every balloon inflated.
    for (let i = 0; i < 3; i++) {
      sim.clock.advance(5 * 60 * SECOND);
      await runtime.scheduler.runOnce();
    }
    const idle = await idlePass(sim.clock.now.bind(sim.clock), client, runtime, () => cluster.stats().total);
    const trials: Trial[] = [];
    const nodes = cluster.store.list('nodes').map((x) => x.metadata.name as string);
    for (let t = 0; t < TRIALS; t++) {
      // Each trial starts at another second of the minute the schedules run on.
      sim.clock.advance((7 + 13 * t) * SECOND);
      trials.push(await deferredTrial(nodes[t % nodes.length]!));
      sim.clock.advance((11 + 17 * t) * SECOND);
      trials.push(await pendingTrial(`wants-room-${t}`));
    }
    report(idle, trials);
  } finally {
    await client.close();
    await runtime.stop();
    await sim.stop();
    for (const k of ['FLEETSCOPE_LOG_LEVEL', 'POWERTOOLS_METRICS_DISABLED', 'FLEETSCOPE_BALLOONS_SETTLE_MS'])
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    await rm(dir, { recursive: true, force: true });
  }

  /** Steps the clock a second at a time, running the schedules when due, until `done`; 10 minutes at most. */
  async function until(done: () => boolean, kind: Trial['kind']): Promise<Trial> {
    const t0 = sim.clock.now();
    const before = new Map(cluster.store.list('pods').map((p) => [p.metadata.uid as string, p]));
    // The schedules that ran last and their wall time: the pass that served it (the kubelet admits
    // or binds on the next tick of its clock, after the pass deflated the balloon).
    let last = { ran: [] as string[], ms: 0 };
    for (let step = 0; step < 600; step++) {
      sim.clock.advance(SECOND);
      const w0 = performance.now();
      const ran = await runtime.scheduler.runDue();
      if (ran.length > 0) last = { ran: ran.map((s) => s.id), ms: performance.now() - w0 };
      if (!done()) continue;
      const now = new Set(
        cluster.store
          .list('pods')
          .filter((p) => p.status?.phase === 'Running')
          .map((p) => p.metadata.uid as string),
      );
      const disrupted = [...before.values()].filter(
        (p) => p.status?.phase === 'Running' && !now.has(p.metadata.uid),
      ).length;
      return {
        kind,
        waitMs: sim.clock.now() - t0,
        passMs: last.ms,
        servedBy: last.ran,
        disrupted,
      };
    }
    throw new Error(`${kind}: not served within 10 minutes of simulated time`);
  }

  /** Node scope's per-node upsize of the agent on a full node: 1500m where the node offers 1 cpu. */
  async function deferredTrial(node: string): Promise<Trial> {
    const agent = () =>
      cluster.store
        .list('pods', 'kube-system')
        .find((p) => p.metadata.name.startsWith('agent-') && p.spec.nodeName === node);
    const a = agent();
    const cpu = '1500m';
    await rawResizeApi(new RawReader(client)).patchResize('kube-system', a.metadata.name, {
      spec: { containers: [{ name: 'a', resources: { requests: { cpu, memory: '64Mi' } } }] },
    });
    const deferred = () =>
      agent()?.status?.conditions?.some((c: { type: string; reason?: string }) => c.reason === 'Deferred');
    if (!deferred()) throw new Error(`the upsize on ${node} was not Deferred: the node was not full`);
    return until(
      () => !deferred() && agent()?.status?.containerStatuses?.[0]?.resources?.requests?.cpu === cpu,
      'deferred',
    );
  }

  /** A pod asking for 1500m, more than any node of the pool offers now: Pending for resources. */
  async function pendingTrial(name: string): Promise<Trial> {
    await client.core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name },
        spec: {
          containers: [
            {
              name: 'app',
              image: 'registry.k8s.io/pause:3.10',
              resources: { requests: { cpu: '1500m', memory: '1Gi' } },
            },
          ],
        },
      },
    });
    const pod = () => cluster.store.get('pods', `default/${name}`);
    if (pod()?.spec?.nodeName) throw new Error(`${name} was bound at once: the pool was not full`);
    return until(() => pod()?.status?.phase === 'Running', 'pending');
  }
}

interface Idle {
  wallMs: number;
  cpuMs: number;
  requests: number;
}

/** The pass every cluster pays every minute when nothing waits: the median of a few, warm. */
async function idlePass(
  now: () => number,
  client: ClusterClient,
  runtime: Awaited<ReturnType<typeof startLocalRuntime>>,
  served: () => number,
): Promise<Idle> {
  const runs: Idle[] = [];
  for (let i = 0; i < 5; i++) {
    const r0 = served();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const r = await serveDemand({
      cluster: CLUSTER,
      client,
      store: new DynamoBalloonStore(runtime.db, runtime.table),
      settings: { settleMs: 0 },
      now,
      passId: `idle-${i}`,
    });
    if (r.results.length > 0) throw new Error('the idle pass found work waiting');
    const cpu = process.cpuUsage(cpu0);
    runs.push({
      wallMs: performance.now() - t0,
      cpuMs: (cpu.user + cpu.system) / 1000,
      requests: served() - r0,
    });
  }
  return {
    wallMs: median(runs.map((r) => r.wallMs)),
    cpuMs: median(runs.map((r) => r.cpuMs)),
    requests: median(runs.map((r) => r.requests)),
  };
}

function report(idle: Idle, trials: Trial[]): void {
  for (const kind of ['deferred', 'pending'] as const) {
    const ts = trials.filter((t) => t.kind === kind);
    const total = ts.map((t) => t.waitMs + t.passMs);
    const what =
      kind === 'deferred'
        ? "node scope's per-node upsize Deferred on a full node -> balloon deflated -> resize completed"
        : 'a pod Pending for resources -> balloon deflated -> pod bound and running';
    console.log(`  ${what}:`);
    console.log(
      `    latency over ${ts.length} trials: median ${n(median(total) / 1000, 1)} s, max ${n(Math.max(...total) / 1000, 1)} s (wait for the minute's pass: ${ts.map((t) => n(t.waitMs / 1000)).join(', ')} s; serving pass wall: ${ts.map((t) => n(t.passMs)).join(', ')} ms); schedules run at the serving step: ${[...new Set(ts.flatMap((t) => t.servedBy))].join(', ')}; pods preempted, evicted or stopped: ${ts.reduce((a, t) => a + t.disrupted, 0)}`,
    );
  }
  // Every minute, every cluster where something asks for balloons pays the idle pass.
  console.log(
    `  idle pass (one query, the pending pods and the ResizeDeferred events listed: ${idle.requests} requests to the apiserver): ${n(idle.wallMs)} ms wall, ${n(idle.cpuMs)} ms CPU (median of 5, in process)`,
  );
  // In process the round trips cost nothing; against a real apiserver and DynamoDB they are most of it.
  for (const [label, wallMs] of [
    ['as measured', idle.wallMs],
    ['at 300 ms wall (three round trips of 100 ms to a real cluster and DynamoDB)', 300],
  ] as const) {
    const { perCluster, lambda } = monthly(wallMs);
    console.log(
      `  monthly, a pass a minute, ${label}: $${n(perCluster, 2)} per cluster (Lambda $${n(lambda, 2)}) = $${n((perCluster / NODES) * 1000, 2)} per 1,000 nodes-month at ${n(NODES)} nodes a cluster, $${n(perCluster / 5, 2)} at 5,000`,
    );
  }
}

/** A cluster's month of idle passes: Lambda, one DynamoDB query (<= 4 KiB), two events (dispatch, work). */
function monthly(wallMs: number): { perCluster: number; lambda: number } {
  const passes = 60 * HOURS_PER_MONTH;
  const lambda = passes * ((wallMs / 1000) * LAMBDA_GB * PRICES.lambdaGbSecond + PRICES.lambdaRequest);
  const dynamo = passes * PRICES.dynamoReadUnit;
  const events = passes * 2 * PRICES.eventBridgeEvent;
  return { perCluster: lambda + dynamo + events, lambda };
}
