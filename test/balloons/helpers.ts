import type { CoreV1Api } from '@kubernetes/client-node';
import { type SimClusterSpec, startSimulator } from '../../local/sim/index.js';
import { type Amounts, amounts } from '../../shared/balloons/amounts.js';
import type { ClusterRead, FreshPods } from '../../shared/balloons/cluster-read.js';
import { runBalloonCycle } from '../../shared/balloons/cycle.js';
import { freshPods } from '../../shared/balloons/fresh-read.js';
import { BalloonObjects } from '../../shared/balloons/incluster.js';
import type { BalloonCycleResult } from '../../shared/balloons/ledger.js';
import { BALLOON_LABEL } from '../../shared/balloons/manifests.js';
import { validatePolicy } from '../../shared/balloons/policy.js';
import { snapshotRead } from '../../shared/balloons/read.js';
import type { BalloonStore } from '../../shared/balloons/store.js';
import { MemoryBalloonStore } from '../../shared/balloons/store-memory.js';
import { ClusterSnapshot } from '../../shared/cycle/snapshot.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import { RawReader } from '../../shared/k8s/raw-reader.js';
import { parseCpu, parseMemory } from '../../shared/kernel/quantity.js';
import { Resizer, rawResizeApi } from '../../shared/resize/index.js';
import { coreClient } from '../sim/helpers.js';

export const START = Date.UTC(2026, 10, 2, 0, 0, 0);

/** Every node of the cluster, sized to its requests (no headroom), between 1 core / 2Gi and 64 / 256Gi. */
export const WHOLE_CLUSTER_POLICY = validatePolicy({
  name: 'all',
  selector: 'kubernetes.io/os=linux',
  headroomPercent: 0,
  headroomMin: { cpu: '500m', memory: '1Gi' },
  min: { cpu: '1', memory: '2Gi' },
  max: { cpu: '64', memory: '256Gi' },
  step: { cpu: '500m', memory: '1Gi' },
  shrinkCooldownMinutes: 0,
});

/** Every node of the cluster offers exactly 2 cores and 4Gi. */
export const FIXED_SIZE_POLICY = validatePolicy({
  name: 'all',
  selector: 'kubernetes.io/os=linux',
  headroomPercent: 0,
  headroomMin: { cpu: '0', memory: '0' },
  min: { cpu: '2', memory: '4Gi' },
  max: { cpu: '2', memory: '4Gi' },
  shrinkCooldownMinutes: 0,
});
export type Sim = Awaited<ReturnType<typeof startSimulator>>;

export interface BalloonEnv {
  sim: Sim;
  /** In memory: the balloon suites need no DynamoDB-protocol server (the contract test holds both adapters alike). */
  store: BalloonStore;
  client: ClusterClient;
  core: CoreV1Api;
  cluster: string;
  /** One balloon cycle (fresh snapshot), optionally with the read altered (to stage a race). */
  cycle(opts?: {
    alterRead?: (r: ClusterRead) => ClusterRead;
    /** The re-read after an inflate (the bind race), altered. */
    alterFresh?: (f: FreshPods) => FreshPods;
    onlyNode?: string;
    drain?: boolean;
    /** The kubelet answers after the settle window: the cycle's read-back sees no answer yet. */
    lateKubelet?: boolean;
    /** Run as another identity (its RBAC), instead of the cluster admin. */
    client?: ClusterClient;
  }): Promise<BalloonCycleResult>;
  stop(): Promise<void>;
}

export async function startBalloonEnv(spec: Partial<SimClusterSpec> = {}): Promise<BalloonEnv> {
  const cluster = spec.name ?? 'b1';
  const sim = await startSimulator({ clusters: [{ name: cluster, nodes: 3, ...spec }], now: START });
  const store = new MemoryBalloonStore();
  const client = ClusterClient.fromKubeconfig(sim.kubeconfig(), { cluster, context: cluster });
  const core = coreClient(sim, cluster);
  let n = 0;
  return {
    sim,
    store,
    client,
    core,
    cluster,
    async cycle(opts = {}) {
      sim.clock.advance(60_000);
      const as = opts.client ?? client;
      const snapshot = new ClusterSnapshot(new RawReader(as), { pageSize: 500, allPods: true });
      const direct = rawResizeApi(snapshot.reader);
      const api = opts.lateKubelet ? { ...direct, readPod: async () => undefined } : direct;
      const read = snapshotRead(snapshot);
      return runBalloonCycle({
        cluster,
        cycleId: `test/${++n}`,
        store,
        objects: new BalloonObjects(as, snapshot.reader, 'registry.k8s.io/pause:3.10'),
        resizer: new Resizer(api, { now: () => sim.clock.now() }),
        api,
        read: opts.alterRead ? opts.alterRead(read) : read,
        fresh: opts.alterFresh ? opts.alterFresh(freshPods(snapshot.reader)) : freshPods(snapshot.reader),
        settings: { settleMs: 0 },
        now: () => sim.clock.now(),
        ...(opts.onlyNode ? { onlyNode: opts.onlyNode } : {}),
        ...(opts.drain ? { drain: true } : {}),
      });
    },
    async stop() {
      await client.close();
      await sim.stop();
    },
  };
}

export async function nodesOf(env: BalloonEnv) {
  const list = await env.core.listNode();
  return list.items.map((n) => ({
    name: n.metadata!.name!,
    labels: n.metadata!.labels ?? {},
    allocatable: amounts(parseCpu(n.status!.allocatable!.cpu!), parseMemory(n.status!.allocatable!.memory!)),
    capacity: amounts(parseCpu(n.status!.capacity!.cpu!), parseMemory(n.status!.capacity!.memory!)),
  }));
}

/** The balloon pod on a node: its spec requests, what runs, and its resize condition. */
export async function balloonOn(env: BalloonEnv, node: string) {
  const list = await env.core.listNamespacedPod({
    namespace: 'kube-system',
    labelSelector: `${BALLOON_LABEL}=true`,
    fieldSelector: `spec.nodeName=${node}`,
  });
  const pod = list.items[0];
  if (!pod) return undefined;
  const c = pod.spec!.containers[0]!;
  const s = pod.status?.containerStatuses?.[0];
  const q = (l: Record<string, string> | undefined): Amounts =>
    amounts(parseCpu(l?.cpu ?? '0'), parseMemory(l?.memory ?? '0'));
  return {
    name: pod.metadata!.name!,
    uid: pod.metadata!.uid!,
    spec: q(c.resources?.requests),
    actual: q(s?.resources?.requests),
    pending: pod.status?.conditions?.find((x) => x.type === 'PodResizePending'),
  };
}

/** A workload pod bound to a node (the kubelet runs it if it fits). */
export async function workload(
  env: BalloonEnv,
  name: string,
  node: string | undefined,
  cpu: string,
  memory: string,
  namespace = 'default',
) {
  await env.core.createNamespacedPod({
    namespace,
    body: {
      metadata: { name },
      spec: {
        ...(node ? { nodeName: node } : {}),
        containers: [
          { name: 'app', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu, memory } } },
        ],
      },
    },
  });
}

export async function podPhase(env: BalloonEnv, name: string, namespace = 'default') {
  try {
    const p = await env.core.readNamespacedPod({ name, namespace });
    return p.status?.phase;
  } catch {
    return 'Gone';
  }
}

/**
 * One balloon cycle against a real cluster (test/support/real-cluster.ts): the whole cycle as the
 * handler runs it, its settle wait real (the kubelets keep wall time), with the caller's clock.
 */
export function realBalloonCycle(opts: {
  client: ClusterClient;
  store: BalloonStore;
  cluster: string;
  cycleId: string;
  now: () => number;
}): Promise<BalloonCycleResult> {
  const snapshot = new ClusterSnapshot(new RawReader(opts.client), { pageSize: 500, allPods: true });
  const api = rawResizeApi(snapshot.reader);
  return runBalloonCycle({
    cluster: opts.cluster,
    cycleId: opts.cycleId,
    store: opts.store,
    objects: new BalloonObjects(opts.client, snapshot.reader, 'registry.k8s.io/pause:3.10'),
    resizer: new Resizer(api, { now: opts.now }),
    api,
    read: snapshotRead(snapshot),
    fresh: freshPods(snapshot.reader),
    settings: { settleMs: 2000 },
    now: opts.now,
  });
}
