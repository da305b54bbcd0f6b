/**
 * A property test of KEP-5620's two rules over the simulator's scheduler, kubelets and DaemonSet
 * controller: over hundreds of random cycles of pod arrivals (some with sidecars, init containers or pod
 * overhead) and departures, explicit sizes and policy changes on a node pool, and the adversity of issue
 * 15: another writer inflating a balloon past what is free (Deferred) or past the node (Infeasible),
 * impostor pods labelled as balloons, balloons deleted (recreated at the floor), nodes resized from below,
 * and the races of a busy cluster (the simulator's lags): the kubelet admits a bound pod 2 s late and
 * answers a resize 1 s late, the DaemonSet controller recreates a balloon 20 s late, and pods arrive
 * between the cycle's read and its inflates (the bind race). Some rounds run the minute's grow pass
 * (grow.ts) first, which deflates balloons for waiting work;
 *   - no workload pod is ever evicted, preempted or rejected by the kubelet (OutOfcpu), and none is left
 *     unschedulable by a balloon inflate (a pod pending after a round would not have fitted with the
 *     balloons at their sizes before it);
 *   - no balloon is ever replaced (nothing preempts it);
 *   - each node's effective size reaches the desired size whenever free capacity allows it, and where it
 *     does not, the balloon holds all the free capacity and the reclaim is recorded as blocked;
 *   - an impostor is never written; no held-back increase of a balloon survives a cycle.
 * Sizes are read from the pods' status (what the kubelet allocated), not only their spec. The run counts
 * the dangerous paths it exercised, prints the counts, and fails when one was never hit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schedulerRequests } from '../../local/sim/pod-requests.js';
import { type Amounts, amounts, sub } from '../../shared/balloons/amounts.js';
import type { ClusterRead } from '../../shared/balloons/cluster-read.js';
import { serveDemand, waitingServedByDeflate } from '../../shared/balloons/grow.js';
import { BALLOON_LABEL } from '../../shared/balloons/manifests.js';
import { validatePolicy } from '../../shared/balloons/policy.js';
import { podsBoundSinceRead } from '../../shared/balloons/recheck.js';
import { balloonSettingsFromEnv } from '../../shared/balloons/settings.js';
import { balloonTarget } from '../../shared/balloons/sizing.js';
import { prng } from '../../shared/kernel/prng.js';
import { parseCpu, parseMemory } from '../../shared/kernel/quantity.js';
import { raw } from '../sim/helpers.js';
import { type BalloonEnv, startBalloonEnv } from './helpers.js';

// npm test runs a short configuration; `npm run property:balloons` the long one (figures in docs/balloons.md).
const CYCLES = Number(process.env.BALLOON_PROPERTY_CYCLES ?? 300);
const GI = 2 ** 30;
const NODES = ['pool-a', 'pool-b', 'pool-c', 'pool-d'];
const PAUSE = 'registry.k8s.io/pause:3.10';
/** The races: a kubelet that admits after it takes a resize (so a pod bound meanwhile is at risk), late. */
const LAGS = { admitMs: 2_000, resizeMs: 1_000, daemonSetMs: 20_000 };
/** Long enough for every lagging component to have answered. */
const SETTLED = 25_000;
/** How often a round runs the grow pass before its cycle, and races a pod against the cycle's inflates. */
const GROW_ODDS = 0.3;
const RACE_ODDS = 0.3;

interface PodFacts {
  name: string;
  namespace: string;
  node: string;
  phase: string;
  balloon: boolean;
  uid: string;
  generation: number;
  /** What the scheduler counts for it (sidecars, init, overhead; mid-resize max of spec, allocated, actual). */
  requests: Amounts;
  /** The balloon container's spec requests, and what the kubelet allocated to it. */
  spec: Amounts;
  allocated: Amounts;
  /** PodResizePending's reason, if any. */
  pending?: string;
  disrupted: boolean;
  /** A balloon that is not what a balloon must be (issue 28): another priority, or more than its container. */
  unsound: boolean;
  /** A pod pinned to one node by required node affinity (metadata.name), or '' for none. */
  pinned: string;
  /** Its required node affinity selects no node of the cluster. */
  unplaceable: boolean;
}

type PodJson = {
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    generation?: number;
    labels?: Record<string, string>;
    ownerReferences?: { kind: string; name: string; controller?: boolean }[];
  };
  spec?: {
    nodeName?: string;
    priority?: number;
    containers?: { resources?: { requests?: Record<string, string> } }[];
    affinity?: {
      nodeAffinity?: {
        requiredDuringSchedulingIgnoredDuringExecution?: {
          nodeSelectorTerms?: {
            matchFields?: { values?: string[] }[];
            matchExpressions?: { key: string; values?: string[] }[];
          }[];
        };
      };
    };
  };
  status?: {
    phase?: string;
    conditions?: { type: string; reason?: string }[];
    containerStatuses?: { allocatedResources?: Record<string, string> }[];
  };
};

const pair = (l: Record<string, string> | undefined) =>
  amounts(l?.cpu ? parseCpu(l.cpu) : 0, l?.memory ? parseMemory(l.memory) : 0);

/** The cluster's pods as the simulator holds them (the oracle reads its state; the cycle goes over HTTP). */
function podsNow(env: BalloonEnv): PodFacts[] {
  const pods = env.sim.state(env.cluster).store.collection('pods');
  return [...pods.keys()].map((k) => {
    const p = pods.get(k) as PodJson;
    const r = schedulerRequests(p);
    const owner = p.metadata.ownerReferences?.find((o) => o.controller);
    return {
      name: p.metadata.name,
      namespace: p.metadata.namespace,
      node: p.spec?.nodeName ?? '',
      phase: p.status?.phase ?? '',
      balloon: p.metadata.labels?.[BALLOON_LABEL] === 'true' && owner?.kind === 'DaemonSet',
      uid: p.metadata.uid,
      generation: p.metadata.generation ?? 1,
      requests: amounts(r.cpuM, r.mem),
      spec: pair(p.spec?.containers?.[0]?.resources?.requests),
      allocated: pair(p.status?.containerStatuses?.[0]?.allocatedResources),
      pending: p.status?.conditions?.find((c) => c.type === 'PodResizePending')?.reason,
      disrupted: (p.status?.conditions ?? []).some((c) => c.type === 'DisruptionTarget'),
      unsound: (p.spec?.priority ?? 0) !== 1_000_000_000 || (p.spec?.containers?.length ?? 0) !== 1,
      pinned: terms(p)?.[0]?.matchFields?.[0]?.values?.[0] ?? '',
      unplaceable: terms(p)?.[0]?.matchExpressions?.[0]?.key === 'pool',
    };
  });
}

const terms = (p: PodJson) =>
  p.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;

/** A workload's spec: a plain pod, or one with a sidecar, a larger init container, or pod overhead. */
function workloadSpec(rnd: () => number, kind: 'plain' | 'sidecar' | 'init' | 'overhead') {
  const q = () => ({
    cpu: `${100 * (1 + Math.floor(rnd() * 20))}m`,
    memory: `${256 * (1 + Math.floor(rnd() * 16))}Mi`,
  });
  const app = { name: 'app', image: PAUSE, resources: { requests: q() } };
  switch (kind) {
    case 'sidecar':
      return { initContainers: [{ ...app, name: 'proxy', restartPolicy: 'Always' }], containers: [app] };
    case 'init':
      return { initContainers: [{ ...app, name: 'setup' }], containers: [app] };
    case 'overhead':
      return { overhead: { cpu: '250m', memory: '256Mi' }, containers: [app] };
    default:
      return { containers: [app] };
  }
}

/** Another writer resizes a balloon: past what is free (Deferred) or past the whole node (Infeasible). */
async function rogueInflate(env: BalloonEnv, balloon: PodFacts, cpu: number) {
  const res = await raw(
    env.sim.cluster(env.cluster),
    'PATCH',
    `/api/v1/namespaces/kube-system/pods/${balloon.name}/resize`,
    {
      body: { spec: { containers: [{ name: 'balloon', resources: { requests: { cpu: `${cpu}m` } } }] } },
      contentType: 'application/strategic-merge-patch+json',
    },
  );
  if (res.status >= 300) throw new Error(`rogue resize: ${res.status} ${res.text}`);
}

describe('balloons, property: never evict, never preempt, reach the desired size when there is room', () => {
  let env: BalloonEnv;
  beforeAll(async () => {
    env = await startBalloonEnv({ nodes: 0, lags: LAGS });
    for (const name of NODES)
      env.sim.cluster(env.cluster).addNode({
        name,
        cpu: '8',
        memory: '32Gi',
        reserved: { cpu: '100m', memory: '1Gi' },
        labels: { pool: 'p' },
      });
  });
  afterAll(async () => env.stop());

  it(
    `holds over ${CYCLES} random cycles`,
    async () => {
      const rnd = prng(20261124);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
      const alive = new Set<string>();
      const balloonUids = new Map<string, string>();
      const impostors = new Map<string, Amounts>();
      let serial = 0;
      let rogues = 0;
      const counts = {
        arrivals: 0,
        departures: 0,
        explicit: 0,
        policy: 0,
        blocked: 0,
        reached: 0,
        pendingSeen: 0,
      };
      /** The dangerous paths of issue 15: each must be hit at least once per run. */
      const exercised = {
        deferredInflatesReverted: 0,
        infeasibleOutcomes: 0,
        impostorPods: 0,
        sidecarPods: 0,
        overheadPods: 0,
        balloonsRecreated: 0,
        allocatableChanges: 0,
        podsBoundBetweenReadAndResize: 0,
        pendingPodsServedByDeflate: 0,
        // issue 28
        driftedTemplates: 0,
        driftedClasses: 0,
        unsoundBalloonsHeld: 0,
        limitRangesReported: 0,
        pinnedPods: 0,
        unplaceablePods: 0,
        usageAboveOffered: 0,
      };
      let limitRange = false;
      const setPolicy = async () =>
        env.store.putPolicy(
          env.cluster,
          validatePolicy({
            name: 'pool',
            selector: 'pool=p',
            headroomPercent: Math.floor(rnd() * 40),
            headroomMin: { cpu: '250m', memory: '512Mi' },
            min: { cpu: String(1 + Math.floor(rnd() * 2)), memory: '2Gi' },
            max: { cpu: String(4 + Math.floor(rnd() * 4)), memory: `${16 + Math.floor(rnd() * 15)}Gi` },
            step: { cpu: '250m', memory: '512Mi' },
            shrinkCooldownMinutes: pick([0, 0, 2]),
          }),
        );
      await setPolicy();
      const growPass = () =>
        serveDemand({
          cluster: env.cluster,
          client: env.client,
          store: env.store,
          settings: { ...balloonSettingsFromEnv({}), settleMs: 0 },
          now: () => env.sim.clock.now(),
          passId: String(env.sim.clock.now()),
        });

      /** Required node affinity: pinned to one node (as a DaemonSet's pod), or to a pool that has no node. */
      const placement = (where: 'pinned' | 'unplaceable') => ({
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                where === 'pinned'
                  ? { matchFields: [{ key: 'metadata.name', operator: 'In', values: [pick(NODES)] }] }
                  : { matchExpressions: [{ key: 'pool', operator: 'In', values: ['elsewhere'] }] },
              ],
            },
          },
        },
      });
      const arrive = async () => {
        const name = `w-${serial++}`;
        const kind = pick(['plain', 'plain', 'plain', 'sidecar', 'init', 'overhead'] as const);
        const where = pick(['free', 'free', 'free', 'free', 'pinned', 'unplaceable'] as const);
        await env.core.createNamespacedPod({
          namespace: 'default',
          body: {
            metadata: { name },
            spec: {
              nodeSelector: { pool: 'p' },
              ...(where === 'free' ? {} : placement(where)),
              ...workloadSpec(rnd, kind),
            } as never,
          },
        });
        alive.add(name);
        counts.arrivals++;
        if (kind === 'sidecar') exercised.sidecarPods++;
        if (kind === 'overhead') exercised.overheadPods++;
        if (where === 'pinned') exercised.pinnedPods++;
        if (where === 'unplaceable') exercised.unplaceablePods++;
      };
      /**
       * The bind race: right after the cycle's read, a pod that takes all the room the scheduler sees
       * free on one node (so any inflate of that node this cycle overlaps it) is bound there at once.
       */
      const raceAfterRead = (r: ClusterRead): ClusterRead => ({
        nodes: r.nodes,
        pods: async () => {
          const pods = await r.pods();
          const node = pick(NODES);
          const alloc = env.sim.state(env.cluster).store.get('nodes', node)?.status?.allocatable;
          const held = podsNow(env)
            .filter((x) => x.node === node && x.phase !== 'Succeeded' && x.phase !== 'Failed')
            .reduce((a, x) => amounts(a.cpu + x.requests.cpu, a.memory + x.requests.memory), amounts(0, 0));
          const free = sub(pair(alloc), held);
          if (free.cpu < 100 || free.memory < 128 * 2 ** 20) return pods;
          const name = `w-${serial++}`;
          const requests = { cpu: `${free.cpu}m`, memory: String(free.memory) };
          await env.core.createNamespacedPod({
            namespace: 'default',
            body: {
              metadata: { name },
              spec: {
                nodeSelector: { pool: 'p', 'kubernetes.io/hostname': node },
                containers: [{ name: 'app', image: PAUSE, resources: { requests } }],
              },
            },
          });
          alive.add(name);
          counts.arrivals++;
          return pods;
        },
      });
      const impostor = async () => {
        const name = `impostor-${serial++}`;
        const requests = { cpu: '100m', memory: '128Mi' };
        await env.core.createNamespacedPod({
          namespace: 'default',
          body: {
            metadata: { name, labels: { [BALLOON_LABEL]: 'true' } },
            spec: {
              nodeSelector: { pool: 'p' },
              containers: [{ name: 'balloon', image: PAUSE, resources: { requests } }],
            },
          },
        });
        alive.add(name);
        impostors.set(name, pair(requests));
        exercised.impostorPods++;
      };
      const DS = '/apis/apps/v1/namespaces/kube-system/daemonsets/fleetscope-balloon';
      /**
       * The objects around the balloon drift (issue 28): the template loses its class or gains a
       * sidecar, the class is replaced at value 0, a LimitRange comes and goes in kube-system; a balloon
       * recreated meanwhile is not what a balloon must be.
       */
      const drift = async (r: number) => {
        const cluster = env.sim.cluster(env.cluster);
        if (r < 0.4) {
          const sidecar = { name: 'sidecar', image: PAUSE, resources: { requests: { cpu: '50m' } } };
          const spec =
            rnd() < 0.5
              ? { priorityClassName: null }
              : { containers: [{ name: 'balloon', image: PAUSE }, sidecar] };
          await raw(cluster, 'PATCH', DS, {
            body: { spec: { template: { spec } } },
            contentType: 'application/merge-patch+json',
          });
          exercised.driftedTemplates++;
        } else if (r < 0.7) {
          await env.client.scheduling
            .deletePriorityClass({ name: 'fleetscope-balloon' })
            .catch(() => undefined);
          await env.client.scheduling
            .createPriorityClass({
              body: {
                metadata: {
                  name: 'fleetscope-balloon',
                  labels: { 'app.kubernetes.io/managed-by': 'fleetscope' },
                },
                value: 0,
              },
            })
            .catch(() => undefined);
          exercised.driftedClasses++;
        } else if (limitRange) {
          await env.core.deleteNamespacedLimitRange({ name: 'defaults', namespace: 'kube-system' });
          limitRange = false;
        } else {
          await env.core.createNamespacedLimitRange({
            namespace: 'kube-system',
            body: {
              metadata: { name: 'defaults' },
              spec: { limits: [{ type: 'Container', _default: { cpu: '4' } }] },
            },
          });
          limitRange = true;
        }
        // a balloon recreated now, from what drifted
        const balloons = podsNow(env).filter((p) => p.balloon && p.node && p.phase === 'Running');
        if (balloons.length) {
          const b = pick(balloons);
          await env.core.deleteNamespacedPod({ name: b.name, namespace: 'kube-system' });
          balloonUids.delete(b.node);
          exercised.balloonsRecreated++;
        }
      };
      /** Adversity from outside: another writer, a deleted balloon, a node resized from below. */
      const adversity = async (r: number) => {
        const balloons = podsNow(env).filter((p) => p.balloon && p.node && p.phase === 'Running');
        const b = balloons.length ? pick(balloons) : undefined;
        const node = pick(NODES);
        const alloc = env.sim.state(env.cluster).store.get('nodes', node)?.status?.allocatable;
        if (r < 0.3 && b) {
          const nodeCpu = parseCpu(
            env.sim.state(env.cluster).store.get('nodes', b.node).status.allocatable.cpu,
          );
          const others = podsNow(env)
            .filter((x) => x.node === b.node && !x.balloon && x.phase !== 'Succeeded' && x.phase !== 'Failed')
            .reduce((a, x) => a + x.requests.cpu, 0);
          // Deferred when the others leave less than this; Infeasible when it is more than the node.
          await rogueInflate(
            env,
            b,
            rogues++ % 2 === 0 ? nodeCpu + 1000 : Math.max(b.spec.cpu + 1, nodeCpu - others + 100),
          );
        } else if (r < 0.55 && b) {
          await env.core.deleteNamespacedPod({ name: b.name, namespace: 'kube-system' });
          balloonUids.delete(b.node);
          exercised.balloonsRecreated++;
        } else if (r < 0.8 && alloc) {
          const cpu = pick(['6', '7', '8']);
          const memory = pick(['24Gi', '32Gi']);
          env.sim.cluster(env.cluster).setNodeCapacity(node, { cpu, memory });
          exercised.allocatableChanges++;
        } else if (r < 0.9) await impostor();
        else await drift(rnd());
      };

      for (let cycle = 0; cycle < CYCLES; cycle++) {
        // The world moves: pods arrive (the scheduler binds them where they fit) and leave.
        const events = 1 + Math.floor(rnd() * 3);
        for (let e = 0; e < events; e++) {
          const r = rnd();
          if ((r < 0.45 || alive.size === 0) && alive.size < 48) await arrive();
          else if (r < 0.8) {
            // Pods that never found room leave first (a client gives up), so the queue stays short.
            const stuck = [...alive].filter(
              (n) => !env.sim.state(env.cluster).store.get('pods', `default/${n}`)?.spec?.nodeName,
            );
            const name = stuck.length > 0 && rnd() < 0.5 ? pick(stuck) : pick([...alive]);
            await env.core.deleteNamespacedPod({ name, namespace: 'default' });
            alive.delete(name);
            impostors.delete(name);
            counts.departures++;
          } else if (r < 0.85) {
            const node = pick(NODES);
            if (rnd() < 0.3) await env.store.deleteRequest(env.cluster, node);
            else
              await env.store.putRequest(env.cluster, {
                node,
                // sometimes less memory than the node uses (its system share alone): usage bounds the shrink
                size: amounts(
                  500 * (1 + Math.floor(rnd() * 15)),
                  rnd() < 0.2 ? 512 * 2 ** 20 : GI * (1 + Math.floor(rnd() * 30)),
                ),
                requestedAt: cycle,
                via: 'test',
              });
            counts.explicit++;
          } else if (r < 0.88) {
            await setPolicy();
            counts.policy++;
          } else await adversity(rnd());
        }
        // Every lagging component answers what the world did, so the round starts from a settled world.
        env.sim.clock.advance(SETTLED);
        const before = podsNow(env);
        const balloonBefore = new Map(before.filter((p) => p.balloon).map((p) => [p.node, p.requests]));
        const held = before.filter((p) => p.balloon && p.pending && p.spec.cpu > p.allocated.cpu);
        exercised.infeasibleOutcomes += held.filter((p) => p.pending === 'Infeasible').length;
        // Some rounds: the minute's grow pass first, which serves waiting work by deflating balloons.
        if (rnd() < GROW_ODDS) {
          env.sim.clock.advance(30_000);
          exercised.pendingPodsServedByDeflate += waitingServedByDeflate(await growPass());
        }
        // Some rounds: the bind race, a pod arriving (bound at once, admitted 2 s later) right after
        // the cycle's read of the pods, so the cycle may inflate into the room it took.
        const race = rnd() < RACE_ODDS;
        const result = await env.cycle(race ? { alterRead: raceAfterRead } : {});
        exercised.podsBoundBetweenReadAndResize += podsBoundSinceRead(result);
        env.sim.clock.advance(SETTLED);
        const after = podsNow(env);
        exercised.deferredInflatesReverted += result.reverts.filter((v) =>
          /enough resource/.test(v.message),
        ).length;
        if (limitRange) {
          expect(result.errors.join(), `cycle ${cycle}: LimitRange not reported`).toMatch(
            /LimitRange kube-system\/defaults/,
          );
          exercised.limitRangesReported++;
        }

        // 0. A balloon that is not what a balloon must be is never inflated: held at the floor; and a
        //    node never offers less than it uses (with headroom), whatever the source asked.
        for (const b of after.filter((p) => p.balloon && p.node && p.unsound)) {
          const d = result.decisions.find((x) => x.node === b.node);
          if (d?.balloon?.uid !== b.uid) continue; // recreated after the cycle's read
          expect(b.spec, `cycle ${cycle}: unsound balloon ${b.name} inflated`).toEqual(amounts(1, 2 ** 20));
          exercised.unsoundBalloonsHeld++;
        }
        for (const d of result.decisions) {
          const used = d.state.used;
          if (!d.desired || !used) continue;
          for (const r of ['cpu', 'memory'] as const)
            expect(
              d.desired.size[r],
              `cycle ${cycle}: ${d.node} offers less ${r} than it uses`,
            ).toBeGreaterThanOrEqual(Math.min(used[r], d.state.allocatable[r]));
          if (d.desired.usageFloor) exercised.usageAboveOffered++;
        }

        // 1. No workload pod evicted or preempted.
        const names = new Set(after.map((p) => p.name));
        for (const name of alive) expect(names.has(name), `cycle ${cycle}: ${name} disappeared`).toBe(true);
        for (const p of after) expect(p.disrupted, `cycle ${cycle}: ${p.name} disrupted`).toBe(false);
        // ... nor rejected by its kubelet (OutOfcpu/OutOfmemory: admitted after an inflate took its room).
        const failedBefore = new Set(before.filter((p) => p.phase === 'Failed').map((p) => p.uid));
        for (const p of after)
          if (!p.balloon && !failedBefore.has(p.uid))
            expect(p.phase, `cycle ${cycle}: ${p.name} rejected by the kubelet`).not.toBe('Failed');
        const wasRunning = new Set(before.filter((p) => p.phase === 'Running').map((p) => p.name));
        for (const p of after)
          if (wasRunning.has(p.name)) expect(p.phase, `cycle ${cycle}: ${p.name}`).toBe('Running');

        // 2. No balloon replaced (except the ones deleted on purpose above).
        for (const b of after.filter((p) => p.balloon && p.node)) {
          const seen = balloonUids.get(b.node);
          if (seen) expect(b.uid, `cycle ${cycle}: balloon on ${b.node} replaced`).toBe(seen);
          else balloonUids.set(b.node, b.uid);
        }

        // 2b. An impostor is never written; no held-back increase of a balloon survives the cycle.
        for (const [name, requests] of impostors) {
          const p = after.find((x) => x.name === name && x.namespace === 'default')!;
          expect(p.spec, `cycle ${cycle}: impostor ${name} resized`).toEqual(requests);
          expect(p.generation, `cycle ${cycle}: impostor ${name} written`).toBe(1);
        }
        for (const h of held) {
          const p = after.find((x) => x.uid === h.uid);
          if (!p) continue;
          expect(
            p.pending && p.spec.cpu > p.allocated.cpu,
            `cycle ${cycle}: ${h.pending} increase of ${h.name} left in place`,
          ).toBeFalsy();
        }

        // 3. A pending pod would not have fitted with the balloons as they were before the cycle.
        const allocatable = new Map(result.decisions.map((d) => [d.node, d.state.allocatable]));
        for (const p of after.filter((x) => !x.balloon && x.phase === 'Pending' && !x.node)) {
          counts.pendingSeen++;
          if (p.unplaceable) continue; // no node could ever take it
          for (const [node, alloc] of allocatable) {
            if (p.pinned && p.pinned !== node) continue;
            const others = after.filter(
              (x) => x.node === node && !x.balloon && x.phase !== 'Succeeded' && x.phase !== 'Failed',
            );
            const used = others.reduce(
              (a, x) => amounts(a.cpu + x.requests.cpu, a.memory + x.requests.memory),
              balloonBefore.get(node) ?? amounts(0, 0),
            );
            const fits =
              used.cpu + p.requests.cpu <= alloc.cpu && used.memory + p.requests.memory <= alloc.memory;
            expect(fits, `cycle ${cycle}: ${p.name} pending though it fitted ${node} before the cycle`).toBe(
              false,
            );
          }
        }

        // 4. The desired size is reached where free capacity allows; otherwise all free capacity is taken.
        //    Judged on what the kubelet allocated to the balloon, not only on its spec.
        const reverted = new Set(result.reverts.map((v) => v.node));
        for (const d of result.decisions) {
          if (!d.desired || !d.balloon || reverted.has(d.node)) continue;
          const balloon = after.find((p) => p.balloon && p.node === d.node)!;
          const target = balloonTarget(d.state.allocatable, d.desired.size);
          const others = after
            .filter((x) => x.node === d.node && !x.balloon && x.phase !== 'Succeeded' && x.phase !== 'Failed')
            .reduce((a, x) => amounts(a.cpu + x.requests.cpu, a.memory + x.requests.memory), amounts(0, 0));
          const free = sub(d.state.allocatable, others);
          // The kubelet takes a resize of the pod whole: on a node over-committed from below in one
          // resource it admits no inflate of the other (so none is free to take), and while it holds a
          // deflate there it admits no resize at all, so the other resource waits too, either way
          // (fleetscope does not re-send: nothing flip-flops).
          const holding = balloon.pending === 'Deferred' && d.state.overcommitted !== undefined;
          const overcommitted = (['cpu', 'memory'] as const).some(
            (s) => others[s] + balloon.allocated[s] > d.state.allocatable[s],
          );
          for (const r of ['cpu', 'memory'] as const) {
            const got = balloon.allocated[r];
            if (got === target[r]) continue;
            if (holding && !(d.state.overcommitted![r] > 0)) continue;
            if (got > target[r]) {
              // a deflate the kubelet holds back (to the target or deeper): only on a node over-committed
              // from below, where a shallower one would not fit either
              expect(
                balloon.spec[r],
                `cycle ${cycle}: ${d.node} ${r} deflate not requested`,
              ).toBeLessThanOrEqual(target[r]);
              expect(d.state.overcommitted, `cycle ${cycle}: ${d.node} ${r} deflate held`).toBeDefined();
              continue;
            }
            // short of the target: only because pods hold the rest, or the node is over-committed
            if (overcommitted) {
              expect(d.state.overcommitted, `cycle ${cycle}: ${d.node} ${r} over-committed`).toBeDefined();
              continue;
            }
            expect(got, `cycle ${cycle}: ${d.node} ${r} left free capacity unclaimed`).toBeGreaterThanOrEqual(
              Math.min(target[r], free[r]),
            );
            expect(
              d.state.blocked,
              `cycle ${cycle}: ${d.node} short of target without a blocked reclaim`,
            ).toBeDefined();
          }
          if (d.state.blocked) counts.blocked++;
          else counts.reached++;
        }
      }
      console.log(`balloons property over ${CYCLES} cycles:`, JSON.stringify({ ...counts, ...exercised }));
      // The run exercised every path it claims to.
      expect(counts.arrivals).toBeGreaterThan(CYCLES / 3);
      expect(counts.departures).toBeGreaterThan(CYCLES / 4);
      expect(counts.explicit).toBeGreaterThan(CYCLES / 20);
      expect(counts.blocked).toBeGreaterThan(0);
      expect(counts.reached).toBeGreaterThan(0);
      expect(counts.pendingSeen).toBeGreaterThan(0);
      for (const [path, n] of Object.entries(exercised))
        expect(n, `${path} never exercised`).toBeGreaterThan(0);
    },
    Math.max(600_000, CYCLES * 1000),
  );
});
