/**
 * The soak's fleet: simulated clusters in the soak's own process (so they survive every kill), with a
 * DaemonSet sized per node in update mode Auto, and canary bearer tokens that must never show up in
 * anything fleetscope writes or prints.
 */
import { randomBytes } from 'node:crypto';
import { demoVpas, NODE_AGENT } from '../local/demo-fleet.js';
import { ApiHandler, type RequestInfo } from '../local/sim/handler.js';
import { type SimClusterSpec, type Simulator, startSimulator } from '../local/sim/index.js';
import type { Json } from '../local/sim/json.js';
import type { StoreEvent } from '../local/sim/store.js';
import { BALLOON_NAME, PRIORITY_CLASS } from '../shared/balloons/manifests.js';
import { resizeDirection } from './invariants/balloons.js';
import { isBalloon } from './invariants/evictions.js';
import type { ObjectDelete, PodRemoval, Preemption, ResizeRequest } from './records.js';

/** Objects a feature's off tasks delete by name: each delete that reaches an apiserver is recorded. */
const FEATURE_DELETED = new Set([`daemonsets/${BALLOON_NAME}`, `priorityclasses/${PRIORITY_CLASS}`]);

const VPA = 'verticalpodautoscalers.autoscaling.k8s.io';

export function soakClusterSpecs(clusters: number, nodes: number, canaries: string[]): SimClusterSpec[] {
  return Array.from({ length: clusters }, (_, i) => ({
    name: `soak-${i + 1}`,
    nodes,
    seed: 1000 + i,
    vpaCrd: true,
    token: canaries[i],
    // The demo's node agent with a flat day: the soak judges histories and resizes, not load shapes.
    daemonSets: [{ ...NODE_AGENT, load: { ...NODE_AGENT.load, diurnalAmplitude: 0 } }],
  }));
}

export async function startSoakFleet(opts: { clusters: number; nodes: number; now: number }) {
  const canaries = Array.from({ length: opts.clusters }, () => `canary-${randomBytes(18).toString('hex')}`);
  const sim = await startSimulator({
    clusters: soakClusterSpecs(opts.clusters, opts.nodes, canaries),
    now: opts.now,
  });
  // The demo's first cluster: node-agent in Auto (resizes), so every cluster resizes.
  for (const c of sim.clusters) for (const vpa of demoVpas(0).slice(0, 1)) c.store.put(VPA, vpa);
  return { sim, canaries };
}

type Handle = (this: ApiHandler, info: RequestInfo, req: unknown, body: string) => { status: number };

/**
 * Records every resize request that reaches an apiserver's handler, with the pod's requests before and
 * after it. Wraps the simulator's handler (the soak's own process), so nothing in the simulator changes.
 */
export function observeResizes(
  sim: Simulator,
  into: ResizeRequest[],
  removals: PodRemoval[] = [],
  deletes: ObjectDelete[] = [],
): () => void {
  const proto = ApiHandler.prototype as unknown as { handle: Handle };
  const original = proto.handle;
  if (typeof original !== 'function') throw new Error('the simulator has no ApiHandler.handle to observe');
  proto.handle = function (this: ApiHandler, info, req, body) {
    const cluster = (this as unknown as { ctx: { cluster: { name: string } } }).ctx.cluster.name;
    if (info.method === 'DELETE' && info.name && FEATURE_DELETED.has(`${info.resource}/${info.name}`)) {
      const record = (status: number) =>
        deletes.push({ cluster, resource: info.resource as string, name: info.name as string, status });
      try {
        const reply = original.call(this, info, req, body);
        record(reply.status);
        return reply;
      } catch (err) {
        record(
          (err as { code?: number; status?: number }).code ?? (err as { status?: number }).status ?? 500,
        );
        throw err;
      }
    }
    const how = removalOf(info);
    if (how)
      return observeRemoval(sim, cluster, info, how, removals, () => original.call(this, info, req, body));
    if (info.subresource !== 'resize' || info.method !== 'PATCH' || !info.name || !info.namespace)
      return original.call(this, info, req, body);
    const read = () => sim.cluster(cluster).store.get('pods', info.name as string, info.namespace);
    const before = read();
    const record = (status: number) => {
      const balloon = isBalloon(before?.metadata?.labels);
      const after = resourcesOf(read());
      const direction = balloon ? resizeDirection(resourcesOf(before), after) : undefined;
      into.push({
        cluster,
        namespace: info.namespace as string,
        pod: info.name as string,
        podUid: before?.metadata?.uid ?? '',
        ...(before?.spec?.nodeName ? { node: before.spec.nodeName as string } : {}),
        at: sim.clock.now(),
        status,
        before: resourcesOf(before),
        after,
        ...(balloon ? { balloon } : {}),
        ...(direction ? { direction } : {}),
      });
    };
    try {
      const reply = original.call(this, info, req, body);
      record(reply.status);
      return reply;
    } catch (err) {
      record((err as { code?: number; status?: number }).code ?? (err as { status?: number }).status ?? 500);
      throw err;
    }
  };
  return () => {
    proto.handle = original;
  };
}

const removalOf = (info: RequestInfo): PodRemoval['how'] | undefined =>
  info.resource !== 'pods' || !info.name
    ? undefined
    : info.method === 'DELETE' && !info.subresource
      ? 'delete'
      : info.method === 'POST' && info.subresource === 'eviction'
        ? 'eviction'
        : undefined;

function observeRemoval(
  sim: Simulator,
  cluster: string,
  info: RequestInfo,
  how: PodRemoval['how'],
  into: PodRemoval[],
  call: () => { status: number },
): { status: number } {
  const pod = sim.cluster(cluster).store.get('pods', info.name as string, info.namespace);
  const record = (status: number) =>
    into.push({
      cluster,
      pod: `${info.namespace}/${info.name}`,
      how,
      status,
      balloon: isBalloon(pod?.metadata?.labels),
    });
  try {
    const reply = call();
    record(reply.status);
    return reply;
  } catch (err) {
    record((err as { code?: number }).code ?? 500);
    throw err;
  }
}

interface PodLike {
  spec?: { containers?: { name: string; resources?: unknown }[] };
}
const resourcesOf = (pod: PodLike | undefined) =>
  JSON.stringify((pod?.spec?.containers ?? []).map((c) => [c.name, c.resources ?? {}]));

type Watchable = Simulator & {
  state(name: string): { store: { subscribe(l: (ev: StoreEvent) => void): () => void } };
};

/** Records every pod the simulated schedulers preempt (the soak's own deletes carry no such mark). */
export function observePreemptions(sim: Simulator, into: Preemption[]): () => void {
  const offs = sim.clusters.map((c) =>
    (sim as Watchable).state(c.name).store.subscribe((ev) => {
      if (ev.type !== 'DELETED' || ev.collection !== 'pods') return;
      const pod: Json = ev.object;
      const cond = (pod?.status?.conditions ?? []).find(
        (x: Json) => x?.type === 'DisruptionTarget' && x.reason === 'PreemptionByScheduler',
      );
      if (!cond) return;
      into.push({
        cluster: c.name,
        pod: `${pod.metadata?.namespace}/${pod.metadata?.name}`,
        balloon: isBalloon(pod.metadata?.labels),
        message: String(cond.message ?? ''),
      });
    }),
  );
  return () => {
    for (const off of offs) off();
  };
}
