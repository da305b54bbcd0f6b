/**
 * Node scope in an invocation shared with a capability that reads every pod (balloons): over a snapshot
 * built with allPods, the cycle lists the cluster's pods once and its nodes once (per page), and the
 * other capability's reads after it cost nothing, while every result equals that of a cycle reading each
 * DaemonSet's pods itself. The two cycles run on the same simulated cluster at the same simulated time,
 * stored under two cluster names; fleetscope.io/writes: none, so neither changes the cluster (mode Off
 * would still write the VPA's status, which the first would write and the second find current).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterSnapshot } from '../../shared/cycle/snapshot.js';
import { RawReader } from '../../shared/k8s/raw-reader.js';
import { type CycleResult, runCycle } from '../../shared/nodescope/cycle.js';
import { WRITES_ANNOTATION } from '../../shared/nodescope/targets.js';
import { agentDaemonSet, type Env, MINUTE, startEnv, VPA_RESOURCE, vpaObject } from './helpers.js';

const CLUSTER = 'shared';
const PAGE = 4;

/** What must not depend on how the pods were read (the request counts and the names do). */
function comparable(r: CycleResult) {
  const { cluster: _c, cycleId: _i, apiRequests: _a, ...detail } = r.detail;
  return {
    detail,
    daemonSets: r.daemonSets.map((d) => ({ ...d, recs: [...d.recs].sort(([a], [b]) => (a < b ? -1 : 1)) })),
    rejected: r.rejected,
    resizeReports: r.resizeReports,
  };
}

describe('node scope over a snapshot shared with another capability', () => {
  let env: Env;
  const sim = () => env.sim.cluster(CLUSTER);
  const client = () => env.clients.get(CLUSTER) as NonNullable<ReturnType<Env['clients']['get']>>;

  beforeAll(async () => {
    env = await startEnv([
      {
        name: CLUSTER,
        nodes: 9,
        seed: 31,
        vpaCrd: true,
        daemonSets: [agentDaemonSet(), agentDaemonSet({ name: 'shipper', namespace: 'logging' })],
      },
    ]);
    const silent = (vpa: Record<string, unknown>) => {
      const v = vpa as { metadata: { annotations: Record<string, string> } };
      v.metadata.annotations[WRITES_ANNOTATION] = 'none';
      return v;
    };
    sim().store.put(VPA_RESOURCE, silent(vpaObject({ mode: 'Off' })));
    sim().store.put(
      VPA_RESOURCE,
      silent(
        vpaObject({
          name: 'shipper',
          namespace: 'logging',
          target: { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'shipper' },
          mode: 'Off',
        }),
      ),
    );
    // Pods no node-scoped DaemonSet owns, the shared list has them too: two elsewhere, and one running
    // in the agent's namespace on one of its nodes, started after the agent's pod there (what only the
    // owner test keeps out of the agent's pods when they come from the shared list).
    const node = sim().store.list('nodes')[0]?.metadata.name as string;
    for (const [namespace, name] of [
      ['default', 'web-1'],
      ['default', 'web-2'],
      ['monitoring', 'probe'],
    ] as const)
      sim().store.put('pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace, labels: { app: 'web' } },
        spec: {
          nodeName: node,
          containers: [{ name: 'collector', image: 'nginx', resources: { requests: { cpu: '50m' } } }],
        },
        status: { phase: 'Running', startTime: new Date(env.sim.clock.now() + 3_600_000).toISOString() },
      });
  });
  afterAll(async () => {
    await env?.stop();
  });

  const run = (label: string, snapshot?: ClusterSnapshot) => {
    const at = new Date(env.sim.clock.now()).toISOString();
    return runCycle({
      cluster: label,
      cycleId: `nodescope/${at}`,
      cycleKey: at,
      client: client(),
      store: env.store,
      settings: { pageSize: PAGE },
      now: () => env.sim.clock.now(),
      ...(snapshot ? { snapshot } : {}),
    });
  };

  it('lists pods and nodes once (per page) in the cycle, with the results of a cycle without it', async () => {
    const pages = (n: number) => Math.max(1, Math.ceil(n / PAGE));
    const owned = (ds: string) =>
      sim()
        .store.list('pods')
        .filter((p) => p.metadata.ownerReferences?.some((o: { name: string }) => o.name === ds)).length;
    // Hourly folds and the appends between them, with samples from the second cycle on.
    let folds = 0;
    let appends = 0;
    for (let i = 0; i < 6; i++) {
      env.sim.clock.advance(20 * MINUTE);
      sim().resetStats();
      const plain = await run('plain');
      const plainStats = sim().stats().byMethodAndKind;

      sim().resetStats();
      const snapshot = new ClusterSnapshot(new RawReader(client()), { pageSize: PAGE, allPods: true });
      const shared = await run('shared', snapshot);
      const cycleRequests = sim().stats().total;
      // What balloons would read next in the same invocation: served from the snapshot.
      const pods = await snapshot.allPods();
      const nodes = await snapshot.nodes();
      const stats = sim().stats();

      const podCount = sim().store.list('pods').length;
      const nodeCount = sim().store.list('nodes').length;
      expect(pods.length).toBe(podCount);
      expect(nodes.length).toBe(nodeCount);
      expect(stats.byMethodAndKind['GET pods']).toBe(pages(podCount));
      expect(stats.byMethodAndKind['GET nodes']).toBe(pages(nodeCount));
      expect(stats.total).toBe(cycleRequests);
      expect(shared.detail.apiRequests).toBe(cycleRequests);
      // Without the snapshot: one pod list per DaemonSet, the same nodes list.
      expect(plainStats['GET pods']).toBe(pages(owned('agent')) + pages(owned('shipper')));
      expect(plainStats['GET nodes']).toBe(pages(nodeCount));

      expect(shared.detail.errors).toEqual([]);
      expect(comparable(shared)).toEqual(comparable(plain));
      if (i > 0) expect(shared.detail.samples).toBeGreaterThan(0);
      for (const d of shared.daemonSets) if (d.folded) folds++;
      for (const d of shared.daemonSets) if (d.logBytes > 0) appends++;
      if (i === 5) expect(shared.daemonSets.every((d) => d.recs.size > 0)).toBe(true);
    }
    expect(folds).toBeGreaterThan(2);
    expect(appends).toBeGreaterThan(2);
  });
});
