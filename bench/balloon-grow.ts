/**
 * The grow-on-demand pass (shared/balloons/grow.ts) in a fresh process, as its Lambda runs it every
 * minute per cluster: once with nothing waiting (the pass every cluster pays), then once after a
 * workload pod on one node asked for nearly the whole node (the kubelet Defers it), served by that
 * node alone. Prints one JSON line per pass: wall, CPU, requests, bytes read, whether it was served.
 */
import { serveDemand } from '../shared/balloons/grow.js';
import { BalloonStore } from '../shared/balloons/store.js';
import { RawReader } from '../shared/k8s/raw-reader.js';
import { rawResizeApi } from '../shared/resize/raw-api.js';
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
    db,
    table: 'fleetscope',
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
await new BalloonStore(db, 'fleetscope').state('warm-up');
await client.core.listNode({ limit: 1 });
const idle = await pass('idle');
// A pod on the first node asks for the node's allocatable less 100m: the kubelet Defers it.
const nodes = await client.core.listNode({ limit: 1 });
const node = nodes.items[0]!;
const pods = await client.core.listPodForAllNamespaces({
  fieldSelector: `spec.nodeName=${node.metadata!.name}`,
});
// A DaemonSet's pod (its spec is as the apiserver defaults it; the bench's workload pods are loaded raw).
const pod = pods.items.find(
  (p) => p.spec!.containers[0]!.resizePolicy && !p.metadata!.labels?.['fleetscope.io/balloon'],
)!;
const cpuM = Math.round(Number.parseFloat(String(node.status!.allocatable!.cpu)) * 1000) - 100;
const container = pod.spec!.containers[0]!;
await rawResizeApi(new RawReader(client)).patchResize(pod.metadata!.namespace!, pod.metadata!.name!, {
  spec: {
    containers: [
      {
        name: container.name,
        resources: { requests: { ...container.resources?.requests, cpu: `${cpuM}m` } },
      },
    ],
  },
});
const deferred = await pass('deferred');
process.stdout.write(`${JSON.stringify({ idle, deferred, node: node.metadata!.name })}\n`);
await close();
process.exit(0);
