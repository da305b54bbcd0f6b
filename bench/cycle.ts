/**
 * One nodescope cycle in a fresh process, as a Lambda invocation would run it (the worker's runCycle,
 * against the simulator and DynamoDB in other processes). Prints one JSON line: CPU time, wall time and
 * peak RSS of the cycle, Kubernetes and DynamoDB requests, and what each DaemonSet did.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { runCycle } from '../shared/nodescope/cycle.js';
import { DynamoNodeScopeStore } from '../shared/nodescope/store-dynamo.js';
import { env, invocation } from './invocation.js';
import { CLUSTER } from './spec.js';

const { client, db, close } = invocation();
const now = Number(env('BENCH_NOW'));
const cycleKey = env('BENCH_CYCLE_KEY');

const store = new DynamoNodeScopeStore(db, 'fleetscope');

// A warm invocation: the DynamoDB client's lazily loaded parts are in memory before the measured cycle.
await store.getCluster('warm-up');

// BENCH_PROFILE=DIR: a V8 CPU profile of the measured cycle only.
const profileDir = process.env.BENCH_PROFILE;
const session = profileDir ? new Session() : undefined;
if (session) {
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
}
let gcMs = 0;
const gcObserver = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcMs += e.duration;
});
gcObserver.observe({ entryTypes: ['gc'] });
const rssBefore = process.memoryUsage().rss;
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const result = await runCycle({
  cluster: CLUSTER,
  cycleId: `nodescope/${cycleKey}`,
  cycleKey,
  client,
  store,
  now: () => now,
});
const wallMs = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
gcObserver.disconnect();
if (session && profileDir) {
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(
    join(profileDir, `cycle-${cycleKey.replace(/[:.]/g, '-')}.cpuprofile`),
    JSON.stringify(profile),
  );
  session.disconnect();
}
const total = process.cpuUsage();
process.stdout.write(
  `${JSON.stringify({
    cpuMs: (cpu.user + cpu.system) / 1000,
    processCpuMs: (total.user + total.system) / 1000,
    wallMs,
    gcMs,
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
    rssBeforeMiB: rssBefore / 2 ** 20,
    detail: result.detail,
    reads: result.reads,
    writes: result.writes,
    wireBytes: result.wireBytes,
    decodedBytes: result.decodedBytes,
    byOperation: result.requestsByOperation,
    phases: result.phases,
    store: store.stats,
    events: 1 + result.newlyRejected.length + result.resizeReports.length,
    daemonSets: result.daemonSets.map((d) => ({
      name: `${d.namespace}/${d.name}`,
      folded: d.folded,
      logBytes: d.logBytes,
      baseBytes: d.baseBytes,
      scopes: d.scopes,
      pods: d.pods,
      eligible: d.eligible,
      fallbackNodes: d.fallbackNodes,
      resizes: d.resizes,
      annotated: d.annotated,
      readUnits: d.readUnits,
      writeUnits: d.writeUnits,
      pendingLogs: d.pendingLogs,
    })),
  })}\n`,
);
await close();
process.exit(0);
