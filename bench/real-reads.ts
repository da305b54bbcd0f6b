/**
 * The reads on a real kube-apiserver beside the simulator (BENCH_ONLY=real): the reads part's cycles
 * (reads.ts: node scope, balloons and both; cold, steady, after 1% changed; the floors and the
 * upstream-like reader) run first against kube-apiserver 1.36.2 of FLEETSCOPE_KUBE_ASSETS over a
 * real etcd, then against the simulator at the same size, and the figures are printed side by side.
 *
 * The real cluster is what `fleetscope sim --apiserver` makes of a bare apiserver (local/sim/real/):
 * Node objects registered with their status as kubelets report them, the simulated DaemonSet
 * controller's pods created through the API, bound, and their status written by the simulated kubelets,
 * metrics.k8s.io served through the real aggregator; the workload pods are created through the API
 * already bound (spec.nodeName), as a scheduler long ago would have left them, and run by the same
 * kubelets. Every byte the cycles read is the real server's: its JSON, its protobuf, its gzip.
 *
 * BENCH_REAL_NODES sizes it (200 in the default run, 1,000 in the full one): about 30 pods a node, each
 * written through the API two or three times while the cluster is set up; etcd holds 1,000 nodes' pods
 * (about 30,000 objects, a few hundred MB with their revisions) comfortably, but writing them through
 * one client on a shared 2-core machine takes most of the time, and the simulated kubelets' passes read
 * every pod. Skipped, saying why, without the real binaries (FLEETSCOPE_KUBE_ASSETS and etcd on PATH).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { startRealApiserver } from '../local/envtest/apiserver.js';
import { findKubeAssets } from '../local/envtest/assets.js';
import { ManualClock } from '../local/sim/clock.js';
import { LOAD_ANNOTATION } from '../local/sim/daemonsets.js';
import { kubeconfigYaml } from '../local/sim/kubeconfig.js';
import { startSimulatedNodes } from '../local/sim/real/index.js';
import { ClusterClient } from '../shared/k8s/client.js';
import { RawReader } from '../shared/k8s/raw-reader.js';
import { vpaCheckpointCrd, vpaCrd } from '../shared/kernel/crds/vpa.js';
import { child, simControl, stopChildren } from './processes.js';
import {
  measureReads,
  printReads,
  printSideBySide,
  type ReadsBackend,
  type ReadsResult,
  simulatorBackend,
  WORKLOADS_PER_NODE,
} from './reads.js';
import { CLUSTER, daemonSets, vpaObjects } from './spec.js';

const n = (v: number) => v.toLocaleString('en-US');

export async function realReadsBench(): Promise<string | undefined> {
  const found = findKubeAssets();
  if (!found.ok)
    return `${found.why} (the real kube-apiserver of ../shared/k8s: FLEETSCOPE_KUBE_ASSETS=/work/shared/k8s, etcd on PATH)`;
  const nodes = Number(process.env.BENCH_REAL_NODES ?? 200);
  const dir = await mkdtemp(join(tmpdir(), 'fleetscope-bench-real-'));
  const children: ChildProcess[] = [];
  try {
    const onReal = await measureAndClose(await realBackend(found.assets, nodes, dir, children), children);
    printReads(onReal);
    const onSim = await measureAndClose(await simulatorBackend(dir, children, nodes), children);
    printReads(onSim);
    printSideBySide(onReal, onSim);
    return undefined;
  } finally {
    await stopChildren(children, dir);
  }
}

/** The reads measured on a backend, which is closed after, whatever happened. */
async function measureAndClose(b: ReadsBackend, children: ChildProcess[]): Promise<ReadsResult> {
  try {
    return await measureReads(b, children);
  } finally {
    await b.close();
  }
}

/**
 * kube-apiserver 1.36 over etcd, the simulated nodes under it, the bench's cluster written through its
 * API, and DynamoDB in a child: the backend the reads part measures.
 */
async function realBackend(
  assets: Parameters<typeof startRealApiserver>[0],
  nodes: number,
  dir: string,
  children: ChildProcess[],
): Promise<ReadsBackend> {
  const dynamo = child('dynamo-server.ts', []);
  children.push(dynamo.proc);
  const t0 = performance.now();
  const server = await startRealApiserver(assets, { version: '1.36', readyWithinSeconds: 180 });
  const stops: (() => Promise<void>)[] = [() => server.stop()];
  const close = async () => {
    for (const s of stops.splice(0).reverse()) await s().catch(() => {});
  };
  try {
    const admin = await server.credentials();
    const text = kubeconfigYaml([{ name: CLUSTER, server: server.url, caPem: server.caPem, client: admin }]);
    const kubeconfig = join(dir, 'real-kubeconfig.yaml');
    await writeFile(kubeconfig, text, { mode: 0o600 });
    const clock = new ManualClock(Date.now() - (Date.now() % 60_000));
    const problems: string[] = [];
    const sim = await startSimulatedNodes({
      kubeconfig: text,
      nodes,
      name: CLUSTER,
      seed: 7,
      clock,
      onProblem: (m) => problems.push(m),
    });
    stops.push(() => sim.stop());
    const client = ClusterClient.fromKubeconfig(text, { cluster: CLUSTER, timeoutMs: 60_000 });
    stops.push(() => client.close());
    await writeCluster(new RawReader(client), sim.nodeNames, () => sim.sync());
    const pods = await settle(new RawReader(client), () => sim.sync());
    console.log(
      `  real kube-apiserver ${sim.version}: ${n(nodes)} nodes, pods ${pods}, written through its API in ${((performance.now() - t0) / 1000).toFixed(0)} s${problems.length ? ` (${problems.length} writes refused, last: ${problems.at(-1)})` : ''}`,
    );
    const { endpoint } = (await dynamo.first) as { endpoint: string };
    const ddb = new DynamoDBClient({
      endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'l', secretAccessKey: 'l' },
    });
    stops.push(async () => ddb.destroy());
    return {
      name: `kube-apiserver ${sim.version}`,
      nodes,
      kubeconfig,
      endpoint,
      db: DynamoDBDocumentClient.from(ddb, { marshallOptions: { removeUndefinedValues: true } }),
      control: simControl({ server: server.url, ca: server.caPem, cert: admin.certPem, key: admin.keyPem }),
      now: () => clock.now(),
      advance: async (ms) => {
        clock.advance(ms);
        await sim.sync();
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

/** The bench's cluster (bench/spec.ts) through the API: CRDs, namespaces, DaemonSets, VPAs, workload pods. */
async function writeCluster(api: RawReader, nodeNames: string[], sync: () => Promise<void>): Promise<void> {
  for (const crd of [vpaCrd(), vpaCheckpointCrd()])
    await create(api, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
  const specs = daemonSets();
  for (const ns of new Set([...specs.map((d) => d.namespace ?? 'kube-system'), 'apps']))
    await create(api, '/api/v1/namespaces', { metadata: { name: ns } });
  await sync(); // each namespace's default ServiceAccount, without which no pod is admitted
  for (const d of specs) {
    const labels = { 'app.kubernetes.io/name': d.name };
    await create(api, `/apis/apps/v1/namespaces/${d.namespace}/daemonsets`, {
      metadata: { name: d.name, labels, annotations: { [LOAD_ANNOTATION]: JSON.stringify(d.load) } },
      spec: {
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            containers: d.containers.map((c) => ({
              name: c.name,
              image: 'registry.k8s.io/pause:3.10',
              resources: { requests: c.requests, ...(c.limits ? { limits: c.limits } : {}) },
            })),
            ...(d.tolerations ? { tolerations: d.tolerations } : {}),
          },
        },
      },
    });
  }
  await waitForCrd(api);
  for (const vpa of vpaObjects()) {
    const ns = (vpa.metadata as { namespace: string }).namespace;
    await create(api, `/apis/autoscaling.k8s.io/v1/namespaces/${ns}/verticalpodautoscalers`, vpa);
  }
  // The workload pods, bound already, 8 creates in flight at a time.
  const bodies = nodeNames.flatMap((node) =>
    Array.from({ length: WORKLOADS_PER_NODE }, (_, i) => ({
      metadata: { name: `app-${i}-${node}`, namespace: 'apps', labels: { app: `app-${i}` } },
      spec: {
        nodeName: node,
        containers: [
          {
            name: 'app',
            image: 'registry.k8s.io/pause:3.10',
            resources: { requests: { cpu: `${20 + (i % 5) * 10}m`, memory: `${32 + (i % 4) * 32}Mi` } },
          },
        ],
      },
    })),
  );
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < bodies.length) await create(api, '/api/v1/namespaces/apps/pods', bodies[next++]);
    }),
  );
}

/** A create; one that exists already (a retried create) is fine. */
async function create(api: RawReader, path: string, body: unknown): Promise<void> {
  try {
    await api.send('create', 'POST', path, body, 'application/json', { expected: [409] });
  } catch (err) {
    if ((err as { status?: number }).status !== 409) throw err;
  }
}

async function waitForCrd(api: RawReader): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const list = await api
      .get<{ items?: unknown[] }>(
        'read vpas',
        '/apis/autoscaling.k8s.io/v1/verticalpodautoscalers',
        {},
        {
          expected: [404],
        },
      )
      .catch(() => undefined);
    if (list) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('the VerticalPodAutoscaler CRD was not served within 30 s');
}

/**
 * Passes of the simulated nodes until the pods' phases hold still over two passes (a pod that does not
 * fit its node stays Pending, as on any cluster); what they are then, counted by phase.
 */
async function settle(api: RawReader, sync: () => Promise<void>): Promise<string> {
  let last = '';
  for (let pass = 0; pass < 60; pass++) {
    await sync();
    const pods = await api.get<{ items: { status?: { phase?: string } }[] }>('list pods', '/api/v1/pods');
    const phases = new Map<string, number>();
    for (const p of pods.items)
      phases.set(p.status?.phase ?? 'none', (phases.get(p.status?.phase ?? 'none') ?? 0) + 1);
    const now = [...phases].map(([k, v]) => `${n(v)} ${k}`).join(', ');
    if (now === last) return now;
    last = now;
  }
  throw new Error(`the real cluster's pods did not settle after 60 passes (${last})`);
}
