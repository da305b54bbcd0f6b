/**
 * The grow-on-demand pass (shared/balloons/grow.ts) in a fresh process, as its Lambda runs it every
 * minute per cluster: once with nothing waiting (the pass every cluster pays), then once after a
 * DaemonSet's pod on one node asked for nearly the whole node (the kubelet Defers it), served by that
 * node alone. Prints one JSON line per pass: wall, CPU, requests, bytes read, whether it was served.
 */
import { serveDemand } from '../shared/balloons/grow.js';
import { DynamoBalloonStore } from '../shared/balloons/store-dynamo.js';
import { deferOneResize } from './grow-deferred.js';
import { env, invocation } from './invocation.js';
import { CLUSTER } from './spec.js';

const { client, db, close } = invocation();
const now = Number(env('BENCH_NOW'));

async function pass(id: string) {
  const before = client.stats().requests;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const r = await serveDemand({
    cluster: CLUSTER,
    client,
    store: new DynamoBalloonStore(db, 'fleetscope'),
    settings: { settleMs: 0 },
    now: () => now,
    passId: id,
  });
  const cpu = process.cpuUsage(cpu0);
  return {
    wallMs: performance.now() - t0,
    cpuMs: (cpu.user + cpu.system) / 1000,
    clientRequests: client.stats().requests - before,
    deferred: r.demand?.deferred.length ?? 0,
    pending: r.demand?.pending.length ?? 0,
    served: r.results.length,
    resizes: r.results.flatMap((x) => x.reports).filter((x) => x.kind === 'resized').length,
  };
}

// Warm: the DynamoDB client's lazily loaded parts and the cluster connection, as in a warm Lambda.
await new DynamoBalloonStore(db, 'fleetscope').state('warm-up');
await client.core.listNode({ limit: 1 });
const idle = await pass('idle');
// A DaemonSet's pod on the first node asks for the node's allocatable less 100m: the kubelet Defers it.
const { node } = await deferOneResize(client);
const deferred = await pass('deferred');
process.stdout.write(`${JSON.stringify({ idle, deferred, node })}\n`);
await close();
process.exit(0);
