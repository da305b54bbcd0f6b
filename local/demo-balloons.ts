/**
 * The balloons part of the demo (KEP-5620): an "elastic" node pool in demo-1 sized by a policy, shown
 * being shrunk to its workloads plus headroom, then grown as more work arrives; one explicit resize
 * request (the cloud-provider story); a pod upsize Deferred on a full pool node (as node scope's can be), served
 * by the minute's grow pass (the balloon deflates, the resize completes, nothing is preempted); and one
 * reclaim blocked by pods that took the space first, explained. Simulated nodes and pods only: a real fleet's pools and policies are the operator's.
 */
import { amounts } from '../shared/balloons/amounts.js';
import { BALLOONS } from '../shared/balloons/events.js';
import { validatePolicy } from '../shared/balloons/policy.js';
import type { NodeState } from '../shared/balloons/store.js';
import { DynamoBalloonStore } from '../shared/balloons/store-dynamo.js';
import { blockedText } from '../shared/balloons/summary-model.js';
import { CYCLE } from '../shared/cycle/capability.js';
import { ClusterClient } from '../shared/k8s/client.js';
import { RawReader } from '../shared/k8s/raw-reader.js';
import { pairWords } from '../shared/kernel/units-format.js';
import type { EventPublisher } from '../shared/platform/publisher.js';
import { rawResizeApi } from '../shared/resize/raw-api.js';
import type { LocalRuntime } from './runtime.js';
import type { Simulator } from './sim/index.js';

const CLUSTER = 'demo-1';
const POOL = ['elastic-1', 'elastic-2', 'elastic-3'];

function batchPod(sim: Simulator, name: string, cpu: string, memory: string): void {
  sim.cluster(CLUSTER).store.put('pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default', labels: { app: 'batch' } },
    spec: {
      nodeSelector: { pool: 'elastic' },
      containers: [
        { name: 'work', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu, memory } } },
      ],
    },
  });
}

/** Adds the elastic pool and its first workloads to the simulated demo-1 (before the first cycle). */
export function addElasticPool(sim: Simulator): void {
  const c = sim.cluster(CLUSTER);
  for (const name of POOL)
    c.addNode({
      name,
      cpu: '8',
      memory: '32Gi',
      reserved: { cpu: '100m', memory: '1Gi' },
      labels: { pool: 'elastic', 'kubernetes.io/os': 'linux' },
    });
  for (let i = 0; i < 6; i++) batchPod(sim, `batch-${i}`, '1', '2Gi');
}

export async function setElasticPolicy(runtime: LocalRuntime): Promise<void> {
  await new DynamoBalloonStore(runtime.db, runtime.table).putPolicy(
    CLUSTER,
    validatePolicy({
      name: 'elastic',
      selector: 'pool=elastic',
      headroomPercent: 20,
      headroomMin: { cpu: '500m', memory: '1Gi' },
      min: { cpu: '1', memory: '2Gi' },
      max: { cpu: '7', memory: '28Gi' },
      step: { cpu: '500m', memory: '1Gi' },
      shrinkCooldownMinutes: 0,
    }),
  );
}

/** One dispatch of a capability's schedule (the 5-minute cycle, or the minute's grow pass); the state after. */
async function cycle(runtime: LocalRuntime, capability = CYCLE): Promise<Record<string, NodeState>> {
  await runtime.invoker.invokeAsync('dispatch', { capability }, 'demo:balloons');
  await runtime.bus.drain();
  return (await new DynamoBalloonStore(runtime.db, runtime.table).state(CLUSTER))?.nodes ?? {};
}

// The narrative quotes the records the balloons table draws (BalloonStore's state), each pair with its
// units: a sentence has no column header to say them.
const offers = (nodes: Record<string, NodeState>, n: string) => pairWords(nodes[n]?.size);

/** The story after the first cycle, act by act; returns the lines to print. */
export async function balloonStory(
  runtime: LocalRuntime,
  sim: Simulator,
  publisher: EventPublisher,
): Promise<string[]> {
  // The first cycle created the DaemonSet after the cycle's one read of the pods: this one sizes them.
  const shrunk = await cycle(runtime);
  const lines = [
    'balloons demo (demo-1):',
    `  policy "elastic" shrank the pool to its requests + 20%: ${POOL.map((n) => `${n} offers ${offers(shrunk, n)} of ${pairWords(shrunk[n]?.allocatable)}`).join(', ')}`,
  ];
  lines.push(...(await deferredUpsizeGrows(runtime, sim)));
  lines.push(await moreWorkArrives(runtime, sim, shrunk));
  lines.push(...(await vmResized(runtime, sim, publisher)));
  lines.push(...(await reclaimBlocked(runtime)));
  lines.push(await poolNow(runtime));
  return lines;
}

/** Where the story leaves the pool: what the balloons table shows for it, in words. */
async function poolNow(runtime: LocalRuntime): Promise<string> {
  const nodes = (await new DynamoBalloonStore(runtime.db, runtime.table).state(CLUSTER))?.nodes ?? {};
  const each = POOL.map(
    (n) =>
      `${n} offers ${offers(nodes, n)} of ${pairWords(nodes[n]?.allocatable)}, balloon ${pairWords(nodes[n]?.balloon)}`,
  );
  return `  the pool now (the balloons table above): ${each.join('; ')}`;
}

/** Pods the shrunk pool cannot schedule: the policy grows it, the kubelets deflate, the pods bind. */
async function moreWorkArrives(
  runtime: LocalRuntime,
  sim: Simulator,
  shrunk: Record<string, NodeState>,
): Promise<string> {
  for (let i = 6; i < 14; i++) batchPod(sim, `batch-${i}`, '1', '2Gi');
  const waiting = () =>
    sim
      .cluster(CLUSTER)
      .store.list('pods', 'default')
      .filter((p: { spec?: { nodeName?: string } }) => !p.spec?.nodeName).length;
  const queued = waiting();
  const grown = await cycle(runtime);
  sim.clock.advance(1000); // the kubelets actuate the deflates; the scheduler then binds the waiting pods
  return `  8 more batch pods arrived (${queued} could not be scheduled); the policy grew the pool: ${POOL.map((n) => `${n} ${offers(shrunk, n)} -> ${offers(grown, n)}`).join(', ')}; ${waiting()} still waiting`;
}

/** The cloud-provider story: a node outside the pool is told its VM now offers 2 cores / 4Gi. */
async function vmResized(
  runtime: LocalRuntime,
  sim: Simulator,
  publisher: EventPublisher,
): Promise<string[]> {
  const general = (await sim.cluster(CLUSTER).store.list('nodes'))
    .map((n: { metadata: { name: string } }) => n.metadata.name)
    .find((n: string) => !POOL.includes(n));
  if (!general) return [];
  await publisher.publish([
    {
      detailType: 'NodeResizeRequested',
      detail: {
        cluster: CLUSTER,
        node: general,
        cpu: '2',
        memory: '4Gi',
        requestedBy: 'demo: VM resize',
        requestedAt: new Date().toISOString(),
      },
      resources: [],
    },
  ]);
  await runtime.bus.drain();
  const s = (await new DynamoBalloonStore(runtime.db, runtime.table).state(CLUSTER))?.nodes[general];
  return [
    `  explicit NodeResizeRequested: ${general} should offer ${pairWords(amounts(2000, 4 * 2 ** 30))} (its VM is being resized) -> balloon ${pairWords(s?.balloon)}, the node offers ${pairWords(s?.size)}`,
  ];
}

type DemoPod = {
  metadata: { name: string; uid: string };
  spec: { nodeName?: string };
  status?: {
    phase?: string;
    conditions?: { type: string; reason?: string }[];
    containerStatuses?: { resources?: { requests?: Record<string, string> } }[];
  };
};

/**
 * An upsize of netd on a full pool node, made the way node scope makes one (a PATCH of pods/resize) but
 * by the demo, above any target, so that it cannot fit: the kubelet Defers it; the minute's grow pass deflates the balloon by what it needs; the kubelet then
 * completes the resize on its own, and no pod is preempted or evicted.
 */
async function deferredUpsizeGrows(runtime: LocalRuntime, sim: Simulator): Promise<string[]> {
  const prev = (await new DynamoBalloonStore(runtime.db, runtime.table).state(CLUSTER))?.nodes ?? {};
  // The pool node with the most room left under the policy's maximum (7 cpu) to grow into (not the
  // first: it is given an explicit size below, and an explicit size is never grown).
  const cpuOf = (n: string) => prev[n]?.size?.cpu ?? Number.POSITIVE_INFINITY;
  const node = POOL.slice(1).reduce((a, b) => (cpuOf(b) < cpuOf(a) ? b : a));
  const c = sim.cluster(CLUSTER);
  const netd = () =>
    (c.store.list('pods', 'kube-system') as DemoPod[]).find(
      (p) => p.metadata.name.startsWith('netd-') && p.spec.nodeName === node,
    );
  const pod = netd();
  if (!pod) return [];
  const running = () =>
    new Set(
      (c.store.list('pods') as DemoPod[])
        .filter((p) => p.status?.phase === 'Running')
        .map((p) => p.metadata.uid),
    );
  const before = running();
  // More than the node has free (what it offers less what its pods request): the kubelet Defers it.
  const free = (prev[node]?.size?.cpu ?? 0) - (prev[node]?.workloads?.cpu ?? 0);
  const cpu = `${100 + free + 250}m`;
  const client = ClusterClient.fromKubeconfig(sim.kubeconfig(), { cluster: CLUSTER, context: CLUSTER });
  try {
    await rawResizeApi(new RawReader(client)).patchResize('kube-system', pod.metadata.name, {
      spec: { containers: [{ name: 'netd', resources: { requests: { cpu, memory: '64Mi' } } }] },
    });
  } finally {
    await client.close();
  }
  const pending = () => netd()?.status?.conditions?.find((x) => x.type === 'PodResizePending')?.reason;
  const answer = pending() ?? 'accepted at once';
  const grown = await cycle(runtime, BALLOONS);
  sim.clock.advance(1000); // the kubelet actuates the deflate, then retries the Deferred resize
  const now = running();
  const gone = [...before].filter((uid) => !now.has(uid)).length;
  const actual = netd()?.status?.containerStatuses?.[0]?.resources?.requests?.cpu;
  return [
    // The demo's own request, not node scope's target (which the recommendations table shows): sized to
    // be more than the node has free, so that the kubelet must defer it.
    `  a resize of ${pod.metadata.name} on ${node} to ${cpu}, more than the node has free (the demo's own request, not node scope's target): ${answer} by the kubelet; the minute's grow pass deflated the balloon (${node} offers ${offers(prev, node)} -> ${offers(grown, node)}); the resize ${pending() ? `is still ${pending()}` : `completed (${actual})`}; pods preempted or evicted: ${gone}`,
  ];
}

/** An explicit size below what the node's pods request: the balloon cannot take the space back. */
async function reclaimBlocked(runtime: LocalRuntime): Promise<string[]> {
  const squeezed = POOL[0]!;
  await new DynamoBalloonStore(runtime.db, runtime.table).putRequest(CLUSTER, {
    node: squeezed,
    size: amounts(1000, 2 * 2 ** 30),
    requestedAt: Date.now(),
    via: 'demo',
  });
  const after = await cycle(runtime);
  const blocked = after[squeezed] ? blockedText(squeezed, after[squeezed]) : undefined;
  return [
    `  explicit size ${pairWords(amounts(1000, 2 * 2 ** 30))} for ${squeezed}, below what its pods request:`,
    `    ${blocked ?? `${squeezed}: not blocked`}`,
  ];
}
