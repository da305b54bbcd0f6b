/**
 * The nodescope part of `npm run bench` (BENCH_ONLY=nodescope): one collect-and-recommend cycle against
 * a simulated cluster of BENCH_NODES nodes (5,000 in the full run) with 10 node-scoped DaemonSets of 2
 * containers (20 scopes a node). Separate processes play the parts:
 *   sim-server.ts     the Kubernetes API (its CPU is not fleetscope's)
 *   dynamo-server.ts  DynamoDB (dynalite)
 *   cycle.ts          the Lambda invocation: one cycle, measured (CPU, wall, peak RSS, requests)
 *   floor.ts          the same API responses fetched and JSON-parsed, nothing else
 * Figures only: nothing here is asserted by the test suite.
 */

import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { cycleCapability } from '../shared/cycle/capability.js';
import { ClusterClient } from '../shared/k8s/client.js';
import { DEFAULT_SETTINGS } from '../shared/nodescope/settings.js';
import { DynamoNodeScopeStore } from '../shared/nodescope/store-dynamo.js';
import { type DaemonSetUse, formatCost, monthlyCost, PRICES } from './cost.js';
import { once, startSimAndDynamo, stopChildren } from './processes.js';
import { seedCluster } from './seed.js';
import { CLUSTER, NODES, SEED_DAYS, SEED_STEP_MINUTES } from './spec.js';

const n = (v: number, d = 0) =>
  v.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
const verdict = (ok: boolean) => (ok ? 'met' : 'NOT MET');
/** List requests (pages) of one kind in a cycle, by fleetscope's own count of operations. */
const listsOf = (r: { byOperation: Record<string, number> }, operation: string) =>
  r.byOperation[operation] ?? 0;

interface CycleReport {
  cpuMs: number;
  processCpuMs: number;
  wallMs: number;
  gcMs: number;
  maxRssMiB: number;
  reads: number;
  writes: number;
  events: number;
  byOperation: Record<string, number>;
  phases: Record<string, number>;
  wireBytes: number;
  decodedBytes: number;
  store: {
    reads: number;
    writes: number;
    readUnits: number;
    writeUnits: number;
    bytesRead: number;
    bytesWritten: number;
  };
  detail: {
    scopes: number;
    samples: number;
    fallbackNodes: number;
    resizes: { requested: number };
    errors: string[];
  };
  daemonSets: {
    name: string;
    folded: boolean;
    logBytes: number;
    baseBytes: number;
    annotated: number;
    readUnits: number;
    writeUnits: number;
    pendingLogs: number;
    pods: number;
  }[];
}

export async function nodescopeBench(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'fleetscope-bench-'));
  const children: ChildProcess[] = [];
  try {
    console.log(
      `fleetscope nodescope benchmark: 1 cluster of ${n(NODES)} nodes, 10 node-scoped DaemonSets x 2 containers (simulator in another process)`,
    );
    const t0 = performance.now();
    const { kubeconfig, endpoint, control, ddb, db } = await startSimAndDynamo(dir, children, {}, 12_000);
    console.log(
      `  simulator up in ${n((performance.now() - t0) / 1000, 1)} s; DynamoDB (dynalite) at ${endpoint}`,
    );

    const client = ClusterClient.fromKubeconfig(await readFile(kubeconfig, 'utf8'), {
      cluster: CLUSTER,
      context: CLUSTER,
      timeoutMs: 60_000,
    });
    const simNow = (await control('GET', '/_sim/clock')).now as number;
    const t1 = performance.now();
    const seeded = await seedCluster(client, new DynamoNodeScopeStore(db, 'fleetscope'), CLUSTER, simNow);
    const { targets } = seeded;
    console.log(
      `  stored history: ${SEED_DAYS} days every ${SEED_STEP_MINUTES} min for ${n(seeded.scopes)} scopes of ${targets.length} DaemonSets (${n(seeded.chunks)} chunks, ${n(seeded.bytes / 1e6, 1)} MB), in ${n((performance.now() - t1) / 1000, 1)} s`,
    );

    const runCycle = async (now: number): Promise<{ r: CycleReport; sim: Record<string, unknown> }> => {
      await control('DELETE', '/_sim/stats');
      const r = (await once('cycle.ts', {
        BENCH_KUBECONFIG: kubeconfig,
        BENCH_DYNAMO: endpoint,
        BENCH_NOW: String(now),
        BENCH_CYCLE_KEY: new Date(now).toISOString(),
      })) as unknown as CycleReport;
      return { r, sim: await control('GET', '/_sim/stats') };
    };

    // Every DaemonSet's base is two hours old, so each is due to fold; one folds per cycle (the cap at
    // the default schedule), the others append. Run until each has folded once: that is an hour's work
    // of every DaemonSet (one fold, appends), measured.
    const runs: { r: CycleReport; sim: { total: number; byMethodAndKind: Record<string, number> } }[] = [];
    for (let i = 0; i < targets.length + 1 && i < 16; i++) {
      if (i > 0) await control('POST', '/_sim/clock', { advanceMs: DEFAULT_SETTINGS.periodMinutes * 60_000 });
      const run = await runCycle(simNow + i * DEFAULT_SETTINGS.periodMinutes * 60_000);
      runs.push(run as (typeof runs)[number]);
      if (
        new Set(runs.flatMap((x) => x.r.daemonSets.filter((d) => d.folded).map((d) => d.name))).size >=
        targets.length
      )
        break;
    }
    // The floor varies by a few percent from run to run: the median of three fresh processes.
    type Floor = { cpuMs: number; wallMs: number; requests: number; wireBytes: number; decodedBytes: number };
    const floors: Floor[] = [];
    for (let i = 0; i < 3; i++)
      floors.push((await once('floor.ts', { BENCH_KUBECONFIG: kubeconfig })) as Floor);
    floors.sort((a, b) => a.cpuMs - b.cpuMs);
    const floor = floors[1] as Floor;

    // What is stored: every nodescope item's size (keys, attribute names and values).
    let storedBytes = 0;
    let items = 0;
    let start: Record<string, unknown> | undefined;
    do {
      const page = await db.send(new ScanCommand({ TableName: 'fleetscope', ExclusiveStartKey: start }));
      for (const item of page.Items ?? []) {
        if (!String(item.sk).startsWith('nodescope#')) continue;
        items++;
        for (const [k, v] of Object.entries(item))
          storedBytes +=
            k.length + (v instanceof Uint8Array ? v.length : Buffer.byteLength(JSON.stringify(v)));
      }
      start = page.LastEvaluatedKey;
    } while (start);
    const scopes = runs[0]?.r.detail.scopes ?? 0;

    const first = runs[0] as (typeof runs)[number];
    const { r } = first;
    console.log(
      `\none cycle (${r.daemonSets.filter((d) => d.folded).length} DaemonSet folds, ${r.daemonSets.filter((d) => !d.folded).length} append; ${n(r.detail.scopes)} scopes, ${n(r.detail.samples)} samples, ${r.detail.resizes.requested} resizes requested${r.detail.errors.length ? `, ERRORS ${r.detail.errors.join('; ')}` : ''})`,
    );
    console.log(
      `  Kubernetes API requests   ${String(first.sim.total).padStart(8)}   (simulator's count; fleetscope counted ${r.reads} reads + ${r.writes} writes)`,
    );
    console.log(`    by kind: ${JSON.stringify(first.sim.byMethodAndKind)}`);
    console.log(
      `    list requests (pages): pods ${listsOf(r, 'list pods')}, nodes ${listsOf(r, 'list nodes')} (fleetscope's count; each object read once)`,
    );
    console.log(
      `    bytes read: ${n(r.wireBytes / 1e6, 1)} MB on the wire (gzip, as kube-apiserver compresses bodies over 128 KiB), ${n(r.decodedBytes / 1e6, 1)} MB decoded`,
    );
    console.log(
      `  fleetscope CPU time       ${n(r.cpuMs / 1000, 2).padStart(8)} s (garbage collection ${n(r.gcMs / 1000, 2)} s; whole process incl. module loading ${n(r.processCpuMs / 1000, 2)} s; wall ${n(r.wallMs / 1000, 2)} s)`,
    );
    console.log(
      `    CPU by phase: ${Object.entries(r.phases)
        .map(([k, v]) => `${k} ${n(v / 1000, 2)} s`)
        .join(', ')}`,
    );
    console.log(
      `  floor: fetch + JSON.parse ${n(floor.cpuMs / 1000, 2).padStart(8)} s (same ${floor.requests} reads, ${n(floor.wireBytes / 1e6, 1)} MB on the wire (gzip), ${n(floor.decodedBytes / 1e6, 1)} MB decoded; median of ${floors.map((f) => n(f.cpuMs / 1000, 2)).join(', ')} s in fresh processes)`,
    );
    console.log(`  peak RSS                  ${n(r.maxRssMiB).padStart(8)} MiB`);
    console.log(
      `  DynamoDB                  ${n(r.store.reads)} item reads (${n(r.store.readUnits, 1)} RRU, ${n(r.store.bytesRead / 1e6, 1)} MB), ${n(r.store.writes)} writes (${n(r.store.writeUnits)} WRU, ${n(r.store.bytesWritten / 1e6, 2)} MB)`,
    );
    console.log(
      `    per DaemonSet (WRU/RRU): ${r.daemonSets.map((d) => `${d.name.split('/')[1]} ${d.folded ? `fold ${n(d.baseBytes / 1024)} KiB` : `log ${n(d.logBytes / 1024, 1)} KiB`} ${n(d.writeUnits)}/${n(d.readUnits)}`).join(', ')}`,
    );

    console.log(`\nall ${runs.length} cycles (5 minutes apart, until every DaemonSet had folded once):`);
    console.log(
      '  #  FOLDED              API REQ  POD/NODE LISTS  CPU s  FLOOR RATIO  PEAK RSS MiB  WRU     RRU',
    );
    runs.forEach((x, i) => {
      const folded =
        x.r.daemonSets
          .filter((d) => d.folded)
          .map((d) => d.name.split('/')[1])
          .join(',') || '-';
      console.log(
        `  ${String(i + 1).padStart(2)} ${folded.padEnd(19)} ${String(x.sim.total).padStart(7)}  ${`${listsOf(x.r, 'list pods')}/${listsOf(x.r, 'list nodes')}`.padStart(14)}  ${n(x.r.cpuMs / 1000, 2).padStart(5)}  ${n(x.r.cpuMs / floor.cpuMs, 2).padStart(10)}x  ${n(x.r.maxRssMiB).padStart(12)}  ${n(x.r.store.writeUnits).padStart(6)}  ${n(x.r.store.readUnits).padStart(6)}`,
      );
    });
    const maxRequests = Math.max(...runs.map((x) => x.sim.total));
    const maxRatio = Math.max(...runs.map((x) => x.r.cpuMs / floor.cpuMs));
    const maxRss = Math.max(...runs.map((x) => x.r.maxRssMiB));
    const perScope = storedBytes / scopes;

    // Cost: each DaemonSet's fold and appends as measured, reads adjusted to the mean number of pending
    // log entries of the default schedule.
    const uses: DaemonSetUse[] = targets.map((t) => {
      const name = `${t.ds.namespace}/${t.ds.name}`;
      const mine = runs
        .map((x) => x.r.daemonSets.find((d) => d.name === name))
        .filter((d) => d !== undefined);
      const folds = mine.filter((d) => d.folded);
      const appends = mine.filter((d) => !d.folded);
      const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
      const logRru = mean(appends.map((d) => Math.max(1, Math.ceil((d.logBytes + 100) / 4096))));
      return {
        name,
        foldWriteUnits: mean(folds.map((d) => d.writeUnits)),
        appendWriteUnits: mean(appends.map((d) => d.writeUnits)),
        baseReadUnits: mean(appends.map((d) => d.readUnits - d.pendingLogs * logRru)),
        logReadUnits: logRru,
      };
    });
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    const cost = monthlyCost({
      periodMinutes: DEFAULT_SETTINGS.periodMinutes,
      foldEveryMinutes: DEFAULT_SETTINGS.foldEveryMs / 60_000,
      lambdaMemoryMb: cycleCapability.functions[0]?.memoryMb ?? 1769,
      daemonSets: uses,
      cycleWriteUnits: mean(
        runs.map((x) => x.r.store.writeUnits - x.r.daemonSets.reduce((a, d) => a + d.writeUnits, 0)),
      ),
      cycleReadUnits: mean(
        runs.map((x) => x.r.store.readUnits - x.r.daemonSets.reduce((a, d) => a + d.readUnits, 0)),
      ),
      wallSeconds: mean(runs.map((x) => x.r.wallMs / 1000)),
      eventsPerCycle: 2,
      bytesStored: storedBytes,
      logBytesPerInvocation: 3000,
      customMetrics: 16,
      nodes: NODES,
    });

    console.log('\ntargets (worst of the cycles):');
    console.log(
      `  Kubernetes API requests per cycle   ${String(maxRequests).padStart(10)}      <= 150        ${verdict(maxRequests <= 150)}`,
    );
    console.log(
      `  CPU time / floor                    ${`${n(maxRatio, 2)}x`.padStart(10)}      <= 3x         ${verdict(maxRatio <= 3)}`,
    );
    console.log(
      `  peak RSS                            ${`${n(maxRss)} MiB`.padStart(10)}      < 1024 MiB    ${verdict(maxRss < 1024)}`,
    );
    console.log(
      `  bytes stored per scope              ${`${n(perScope)} B`.padStart(10)}      <= 1024 B     ${verdict(perScope <= 1024)}   (${n(items)} items, ${n(storedBytes / 1e6, 2)} MB for ${n(scopes)} scopes)`,
    );
    console.log(
      `  monthly cost per 1,000 nodes        ${`$${n(cost.perThousandNodes, 2)}`.padStart(10)}      < $5          ${verdict(cost.perThousandNodes < 5)}`,
    );
    console.log(
      `\nmonthly AWS cost at the default schedule (a cycle every ${DEFAULT_SETTINGS.periodMinutes} min; each DaemonSet folds once every ${DEFAULT_SETTINGS.foldEveryMs / 60_000} min and appends a log entry in the other cycles; Lambda ${cycleCapability.functions[0]?.memoryMb} MB arm64):`,
    );
    console.log(formatCost(cost).join('\n'));
    console.log(
      `  this cluster: $${n(cost.cluster, 2)}/month = $${n(cost.perThousandNodes, 2)} per 1,000 nodes`,
    );
    console.log(
      `  plus $${n(cost.fleet, 2)}/month once for the whole fleet (schedule, dispatch, metrics); a fleet of only this cluster: $${n(((cost.cluster + cost.fleet) / NODES) * 1000, 2)} per 1,000 nodes`,
    );
    const podsTotal = runs[0]?.r.daemonSets.reduce((a, d) => a + d.pods, 0) ?? 0;
    console.log(
      `  one-off while converging in update mode Auto: ${n(podsTotal)} pods to size at <= ${DEFAULT_SETTINGS.writeBudget} cluster writes per cycle (~${n(((podsTotal / DEFAULT_SETTINGS.writeBudget) * DEFAULT_SETTINGS.periodMinutes) / 60, 0)} h), one PodResized event each: ~$${n((podsTotal * 2) / 1e6, 2)}`,
    );
    console.log(
      "  Lambda wall time is the simulator's serving time plus fleetscope's; a real apiserver and DynamoDB differ.",
    );
    console.log(
      `\nprices (us-east-1, on-demand, published; no free tier counted): DynamoDB $${PRICES.dynamoWriteUnit * 1e6}/M WRU, $${PRICES.dynamoReadUnit * 1e6}/M RRU, $${PRICES.dynamoStorageGbMonth}/GB-month (aws.amazon.com/dynamodb/pricing/on-demand); Lambda arm64 $${PRICES.lambdaGbSecond}/GB-s, $0.20/M requests (aws.amazon.com/lambda/pricing); EventBridge $1/M events, Scheduler $1/M invocations (aws.amazon.com/eventbridge/pricing); CloudWatch Logs $0.50/GB, $0.30/metric-month (aws.amazon.com/cloudwatch/pricing); Secrets Manager $0.05/10k calls (aws.amazon.com/secrets-manager/pricing)`,
    );
    await client.close();
    ddb.destroy();
  } finally {
    await stopChildren(children, dir);
  }
}
