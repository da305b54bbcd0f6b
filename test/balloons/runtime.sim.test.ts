/**
 * Balloons in the local runtime, end to end: the schedule's cluster cycle runs node scope then balloons
 * over one read of the cluster (each pod listed once), and NodeResizeRequested events are checked
 * against the node before anything is stored.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { amounts } from '../../shared/balloons/amounts.js';
import { validatePolicy } from '../../shared/balloons/policy.js';
import type { BalloonStore } from '../../shared/balloons/store.js';
import { DynamoBalloonStore } from '../../shared/balloons/store-dynamo.js';
import { DynamoRegistry } from '../../shared/fleet/registry-dynamo.js';
import { parseCpu, parseMemory } from '../../shared/kernel/quantity.js';
import { setNodeScopeClock } from '../../shared/nodescope/clock.js';
import { deps } from '../../shared/platform/deps.js';
import type { Detail } from '../../shared/platform/events.js';
import { agentDaemonSet, type Env, MINUTE, startEnv, VPA_RESOURCE, vpaObject } from '../nodescope/helpers.js';

const GI = 2 ** 30;
const grows = (e: Detail<'PodResized'>) =>
  e.containers.some((c) =>
    (['cpu', 'memory'] as const).some((r) => {
      const q = (v: string | undefined) => (v === undefined ? 0 : r === 'cpu' ? parseCpu(v) : parseMemory(v));
      return q(c.after.requests?.[r]) > q(c.before.requests?.[r]);
    }),
  );

describe('balloons in the local runtime', () => {
  let env: Env;
  let dir: string;
  let store: BalloonStore;
  let node: { name: string; cpu: number; memory: number };

  beforeAll(async () => {
    env = await startEnv([{ name: 'b', nodes: 3, seed: 7, vpaCrd: true, daemonSets: [agentDaemonSet()] }]);
    setNodeScopeClock(() => env.sim.clock.now());
    dir = await mkdtemp(join(tmpdir(), 'fleetscope-balloons-'));
    const path = join(dir, 'kubeconfig.yaml');
    await env.sim.writeKubeconfig(path);
    env.sim.cluster('b').store.put(VPA_RESOURCE, vpaObject({ mode: 'Auto' }));
    await new DynamoRegistry(env.runtime.db, env.runtime.table).add({
      name: 'b',
      kubeconfig: { kind: 'file', path, context: 'b' },
      labels: {},
      registeredAt: new Date().toISOString(),
    });
    store = new DynamoBalloonStore(env.runtime.db, env.runtime.table);
    const n = (await env.clients.get('b')!.core.listNode()).items[0]!;
    node = {
      name: n.metadata!.name!,
      cpu: parseCpu(n.status!.allocatable!.cpu!),
      memory: parseMemory(n.status!.allocatable!.memory!),
    };
  });
  afterAll(async () => {
    delete process.env.FLEETSCOPE_BALLOONS_SETTLE_MS;
    setNodeScopeClock();
    await env?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const events = <T extends 'BalloonCycleCompleted' | 'NodeScopeCycleCompleted' | 'PodResized'>(t: T) =>
    env.runtime.bus.log.filter((e) => e.detailType === t).map((e) => e.detail as Detail<T>);

  it('runs node scope and balloons in one cycle, listing every pod once', async () => {
    process.env.FLEETSCOPE_BALLOONS_SETTLE_MS = '0';
    await store.putPolicy(
      'b',
      validatePolicy({ name: 'all', selector: 'kubernetes.io/os=linux', max: { cpu: '2', memory: '4Gi' } }),
    );
    env.sim.clock.advance(5 * MINUTE);
    await env.runtime.scheduler.runOnce(); // creates the balloon DaemonSet
    const stats = env.sim.cluster('b');
    stats.resetStats?.();
    const before = { ...(stats.stats().byMethodAndKind as Record<string, number>) };
    const logged = env.runtime.bus.log.length;
    env.sim.clock.advance(5 * MINUTE);
    await env.runtime.scheduler.runOnce();
    const after = stats.stats().byMethodAndKind as Record<string, number>;
    const inflated = env.runtime.bus.log
      .slice(logged)
      .filter((e) => e.detailType === 'PodResized')
      .map((e) => e.detail as Detail<'PodResized'>)
      .filter((e) => e.source === 'balloons' && e.outcome === 'Requested' && grows(e)).length;
    // Every pod read once, shared by node scope and balloons: taken up from the previous cycle's list
    // (kept by the warm function: a revision read, then a watch of what changed since), plus for each
    // balloon inflated in this cycle a read-back for the kubelet's answer and, right after the inflate
    // and again after the settle wait, two lists of its node's pods (bound, nominated: the bind race);
    // and the grow-on-demand pass's list of pending pods (it finds none, so it reads nothing more).
    expect((after['GET pods'] ?? 0) - (before['GET pods'] ?? 0)).toBe(3 + 5 * inflated);
    expect(events('NodeScopeCycleCompleted').at(-1)?.daemonSets).toBe(1);
    const b = events('BalloonCycleCompleted').at(-1);
    expect(b?.nodes).toBe(3);
    expect(b?.balloon.cpuMillicores).toBeGreaterThan(0);
    expect(events('PodResized').some((e) => e.source === 'balloons')).toBe(true);
    expect(env.runtime.invoker.deadLetters).toEqual([]);
  });

  const request = async (detail: Partial<Detail<'NodeResizeRequested'>>) => {
    await deps().publisher.publish([
      {
        detailType: 'NodeResizeRequested',
        detail: {
          cluster: 'b',
          node: node.name,
          cpu: '1',
          memory: '2Gi',
          requestedAt: new Date().toISOString(),
          ...detail,
        },
        resources: [],
      },
    ]);
    await env.runtime.bus.drain();
  };

  it('refuses a request for an unknown node, above allocatable, or for an unregistered cluster, writing nothing', async () => {
    await request({ node: 'no-such-node' });
    await request({ cpu: String(node.cpu + 1000) + 'm' });
    await request({ memory: `${Math.ceil(node.memory / GI) + 1}Gi` });
    await request({ cluster: 'nope' });
    await request({ cpu: '-1' });
    expect((await store.load('b')).requests).toEqual([]);
    expect(env.runtime.invoker.deadLetters).toEqual([]);
  });

  it('serves a valid request at once: stored, and the node resized', async () => {
    await request({ cpu: '1', memory: '2Gi', requestedBy: 'vm-resizer' });
    const items = await store.load('b');
    expect(items.requests.map((r) => [r.node, r.size, r.via])).toEqual([
      [node.name, amounts(1000, 2 * GI), 'event: vm-resizer'],
    ]);
    const s = items.state?.nodes[node.name];
    expect(s?.source).toMatchObject({ kind: 'explicit' });
    expect(s?.desired).toEqual(amounts(1000, 2 * GI));
  });
});
