/**
 * A warm cycle Lambda for the reads table: one process (one ClusterClient, as a warm container keeps
 * it) that runs the worker's cluster cycle (runClusterCycle: node scope, balloons or both over one
 * snapshot) each time a line `cycle <now ms>` arrives on stdin, and prints one JSON line per cycle: CPU
 * (node scope's part apart), wall, peak RSS so far, and what it read from the Kubernetes API (counted
 * on the responses, tapKubernetesApi). Consecutive cycles in one process exercise whatever the reader
 * keeps between cycles (the kept lists: a warm container's, passed as the function module passes them).
 * A line `follow <now ms>` runs the follow between cycles (shared/cycle/follow.ts) on those lists, as the
 * same warm function does every minute, and prints what it read and its wall and CPU time.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { DynamoBalloonStore } from '../shared/balloons/store-dynamo.js';
import { keptScope, runClusterCycle } from '../shared/cycle/cluster-cycle.js';
import { followCluster, UNREAD_AFTER_MS } from '../shared/cycle/follow.js';
import { KeptLists } from '../shared/cycle/kept-lists.js';
import { RawReader } from '../shared/k8s/raw-reader.js';
import { DEFAULT_SETTINGS } from '../shared/nodescope/settings.js';
import { DynamoNodeScopeStore } from '../shared/nodescope/store-dynamo.js';
import { env, invocation } from './invocation.js';
import { CLUSTER } from './spec.js';
import { tapKubernetesApi } from './wire-tap.js';

const mode = env('BENCH_MODE');
if (!['nodescope', 'balloons', 'both'].includes(mode))
  throw new Error(`BENCH_MODE must be nodescope, balloons or both, not ${mode}`);
const tap = tapKubernetesApi();
const { client, db, close } = invocation();
const quiet = { info: () => {}, warn: () => {} };
// BENCH_NS_WRITE_BUDGET: the set-up's converging cycles size every pod at once (reads.ts).
const budget = process.env.BENCH_NS_WRITE_BUDGET
  ? { writeBudget: Number(process.env.BENCH_NS_WRITE_BUDGET) }
  : {};
// The function module's lists kept between invocations (functions/cluster-cycle.ts), one per process.
const kept = new KeptLists();

// BENCH_PROFILE=DIR: a V8 CPU profile of each cycle (reads-<mode>-<n>.cpuprofile: 1 primes, 2 is steady).
const profileDir = process.env.BENCH_PROFILE;
const session = profileDir ? new Session() : undefined;
session?.connect();
await session?.post('Profiler.enable');
let cycles = 0;

async function cycle(now: number) {
  const cycleKey = new Date(now).toISOString();
  tap.reset();
  cycles++;
  await session?.post('Profiler.start');
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await runClusterCycle({
    cluster: CLUSTER,
    cycleId: `cycle/${cycleKey}`,
    cycleKey,
    client,
    nodescopeStore: new DynamoNodeScopeStore(db, 'fleetscope'),
    balloonStore: new DynamoBalloonStore(db, 'fleetscope'),
    pageSize: DEFAULT_SETTINGS.pageSize,
    ...(mode !== 'balloons' ? { nodescope: { ...DEFAULT_SETTINGS, ...budget } } : {}),
    ...(mode !== 'nodescope' ? { balloons: { settleMs: 0 } } : {}),
    now: () => now,
    logger: quiet,
    kept,
  });
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  if (session && profileDir) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(join(profileDir, `reads-${mode}-${cycles}.cpuprofile`), JSON.stringify(profile));
  }
  const ns = result.nodescope;
  return {
    cpuMs: (cpu.user + cpu.system) / 1000,
    wallMs,
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
    ...tap.reset(),
    nodescope: ns && {
      // The phases' CPU (their sub-parts, "collect: ...", are inside "collect").
      cpuMs: Object.entries(ns.phases)
        .filter(([k]) => !k.includes(':'))
        .reduce((a, [, v]) => a + v, 0),
      errors: ns.detail.errors,
      scopes: ns.detail.scopes,
      resizes: ns.detail.resizes.requested,
      phases: ns.phases,
    },
    balloons: result.balloons && { errors: result.balloons.errors.slice(0, 3) },
    reads: result.reads,
  };
}

/** One follow of the lists kept: what it read, its time, and how each list was taken up. */
async function follow(now: number) {
  tap.reset();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const r = await followCluster(new RawReader(client), kept, keptScope(client), {
    now,
    afterMs: UNREAD_AFTER_MS,
  });
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { cpuMs: (cpu.user + cpu.system) / 1000, wallMs, ...tap.reset(), lists: r.lists, kept: r.kept };
}

// A warm container: the DynamoDB client's lazily loaded parts are in memory before the first cycle.
await new DynamoNodeScopeStore(db, 'fleetscope').getCluster('warm-up');
const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  const [what, at] = line.trim().split(' ');
  if (what === 'cycle') process.stdout.write(`${JSON.stringify(await cycle(Number(at)))}\n`);
  else if (what === 'follow') process.stdout.write(`${JSON.stringify(await follow(Number(at)))}\n`);
  else break;
}
await close();
process.exit(0);
