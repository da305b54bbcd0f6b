/**
 * One cluster cycle's balloon part in a fresh process, as the cycle Lambda runs it, against the
 * simulator and DynamoDB in other processes. BENCH_MODE=balloons runs the balloon phase alone over a
 * snapshot that lists every pod; BENCH_MODE=both runs node scope then balloons over one snapshot, as
 * the worker does. Prints one JSON line: CPU, wall, peak RSS, requests by operation, bytes read.
 */
import { runBalloonPhase } from '../shared/balloons/phase.js';
import { DynamoBalloonStore } from '../shared/balloons/store-dynamo.js';
import { ClusterSnapshot } from '../shared/cycle/snapshot.js';
import { RawReader } from '../shared/k8s/raw-reader.js';
import { requestGrowth } from '../shared/nodescope/bus-events.js';
import { runCycle } from '../shared/nodescope/cycle.js';
import { DynamoNodeScopeStore } from '../shared/nodescope/store-dynamo.js';
import { env, invocation } from './invocation.js';
import { CLUSTER } from './spec.js';

const { client, db, close } = invocation();
const now = Number(env('BENCH_NOW'));
const mode = env('BENCH_MODE');

const balloonStore = new DynamoBalloonStore(db, 'fleetscope');
await balloonStore.state('warm-up'); // the DynamoDB client's lazily loaded parts, before measuring

const reader = new RawReader(client);
const snapshot = new ClusterSnapshot(reader, { pageSize: 1000, allPods: true });
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const cycleKey = new Date(now).toISOString();
const ns =
  mode === 'both'
    ? await runCycle({
        cluster: CLUSTER,
        cycleId: `cycle/${cycleKey}`,
        cycleKey,
        client,
        snapshot,
        store: new DynamoNodeScopeStore(db, 'fleetscope'),
        now: () => now,
      })
    : undefined;
const nsCpu = process.cpuUsage(cpu0);
const result = await runBalloonPhase({
  cluster: CLUSTER,
  cycleId: `cycle/${cycleKey}`,
  client,
  snapshot,
  store: new DynamoBalloonStore(db, 'fleetscope'),
  settings: {
    settleMs: 0,
    ...(process.env.BENCH_WRITE_BUDGET ? { writeBudget: Number(process.env.BENCH_WRITE_BUDGET) } : {}),
  },
  now: () => now,
  ...(ns ? { growth: requestGrowth(ns) } : {}),
});
const wallMs = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
await balloonStore.state(CLUSTER); // the state item's size, read after the measured part
const s = result.summary;
process.stdout.write(
  `${JSON.stringify({
    cpuMs: (cpu.user + cpu.system) / 1000,
    nodescopeCpuMs: (nsCpu.user + nsCpu.system) / 1000,
    wallMs,
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
    byOperation: { ...reader.stats.byOperation, ...prefixed(client.stats().byOperation) },
    requests: reader.stats.requests + client.stats().requests,
    wireBytes: reader.stats.wireBytes,
    decodedBytes: reader.stats.decodedBytes,
    nodes: s.nodes,
    pods: (await snapshot.allPods()).length,
    resizes: result.reports.filter((r) => r.kind === 'resized' && r.outcome === 'Requested').length,
    blockedNodes: s.blockedNodes,
    errors: result.errors.slice(0, 3),
    stateBytes: balloonStore.stats.stateBytes,
    nodescopeDaemonSets: ns?.detail.daemonSets,
    writes:
      reader.stats.writes +
      (client.stats().byOperation['resize pod'] ?? 0) +
      (client.stats().byOperation['record balloon event'] ?? 0),
  })}\n`,
);
function prefixed(ops: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(ops).map(([k, v]) => [`client: ${k}`, v]));
}
await close();
process.exit(0);
