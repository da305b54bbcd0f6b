/**
 * Beside a running upstream VPA, over the simulator: a scoped VPA that names no recommender is left
 * alone while upstream's recommender runs (nothing written to its pods or its status, the reason said
 * once as an Event, in the cluster record and the cycle's detail); once it names fleetscope it is
 * sized, and upstream's updater in an evicting mode is warned about, once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECOMMENDATION_ANNOTATION } from '../../shared/nodescope/collect.js';
import type { CycleResult } from '../../shared/nodescope/cycle.js';
import { DynamoNodeScopeStore } from '../../shared/nodescope/store-dynamo.js';
import { nodescopeSummaryLines } from '../../shared/nodescope/summary.js';
import { agentDaemonSet, cycle, type Env, MINUTE, startEnv, VPA_RESOURCE, vpaObject } from './helpers.js';

const upstreamDeployment = (role: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: `vpa-${role}`, namespace: 'kube-system' },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: `vpa-${role}` } },
    template: {
      metadata: { labels: { app: `vpa-${role}` } },
      spec: { containers: [{ name: role, image: `registry.k8s.io/autoscaling/vpa-${role}:1.8.0` }] },
    },
  },
});

describe('beside a running upstream VPA (simulator)', () => {
  let env: Env;
  const left: CycleResult[] = [];
  const named: CycleResult[] = [];
  const sim = () => env.sim.cluster('up').store;
  const agentPods = () =>
    sim()
      .list('pods', 'monitoring')
      .filter((p) => p.metadata.name.startsWith('agent-'));
  const vpaEvents = () =>
    sim()
      .list('events', 'monitoring')
      .filter(
        (e) => e.involvedObject?.kind === 'VerticalPodAutoscaler' && e.involvedObject?.name === 'agent',
      );
  const resourcesOfPods = () =>
    agentPods().map((p) => [
      p.metadata.name,
      p.spec.containers.map((c: { resources: unknown }) => c.resources),
    ]);
  let podsBefore: unknown;
  let podsAfterLeft: unknown;
  let eventsAfterLeft: { reason: string; type: string; message: string }[];
  let annotatedWhileLeft: number;
  let eventsWithoutBudget: number;
  let vpaStatusWhileLeft: unknown;
  let skippedWhileLeft: unknown;

  beforeAll(async () => {
    env = await startEnv([{ name: 'up', nodes: 3, seed: 5, vpaCrd: true, daemonSets: [agentDaemonSet()] }]);
    sim().put('deployments', upstreamDeployment('recommender'));
    sim().put('deployments', upstreamDeployment('updater'));
    // Recreate: were fleetscope to size it, it would resize pods in place from the first recommendation.
    sim().put(VPA_RESOURCE, vpaObject({ mode: 'Recreate' }));
    podsBefore = resourcesOfPods();
    // A cycle with no write budget cannot say it: the next one does.
    left.push(await cycle(env, 'up', 15 * MINUTE, { writeBudget: 0 }));
    eventsWithoutBudget = vpaEvents().length;
    for (let i = 0; i < 6; i++) left.push(await cycle(env, 'up', 15 * MINUTE));
    eventsAfterLeft = vpaEvents().map((e) => ({ reason: e.reason, type: e.type, message: e.message }));
    podsAfterLeft = resourcesOfPods();
    annotatedWhileLeft = agentPods().filter(
      (p) => p.metadata.annotations?.[RECOMMENDATION_ANNOTATION],
    ).length;
    vpaStatusWhileLeft = sim().get(VPA_RESOURCE, 'agent', 'monitoring')?.status;
    skippedWhileLeft = (await env.store.getCluster('up'))?.notices?.filter((n) => n.kind === 'skipped');

    const v = vpaObject({ mode: 'Recreate' }) as { spec: Record<string, unknown> };
    v.spec.recommenders = [{ name: 'fleetscope' }];
    sim().put(VPA_RESOURCE, v);
    for (let i = 0; i < 6; i++) named.push(await cycle(env, 'up', 15 * MINUTE));
  }, 120_000);
  afterAll(async () => {
    await env?.stop();
  });

  it("a scoped VPA naming no recommender is left alone while upstream's recommender runs", async () => {
    expect(left.every((r) => r.daemonSets.length === 0 && r.rejected.length === 0)).toBe(true);
    expect(left.every((r) => r.resizeReports.length === 0)).toBe(true);
    expect(podsBefore).toHaveLength(3);
    expect(podsAfterLeft).toEqual(podsBefore);
    expect(annotatedWhileLeft).toBe(0);
    expect(vpaStatusWhileLeft).toBeUndefined();
    expect(await env.store.getHead('up', 'monitoring/agent')).toBeDefined(); // sized later, once named
    const detail = left[0]?.detail;
    expect(detail).toMatchObject({
      daemonSets: 0,
      skippedVpas: 1,
      upstreamVpa: { state: 'read', components: ['recommender', 'updater'] },
    });
    expect(eventsWithoutBudget).toBe(0);
    // Recorded with the DaemonSet it targets, so `recommendations get` of that DaemonSet can say why.
    expect(skippedWhileLeft).toEqual([
      expect.objectContaining({ vpa: 'agent', daemonSet: 'monitoring/agent', said: true }),
    ]);
    // Said once (not every cycle), as an Event on the VPA, with the reason and the way to hand it over.
    expect(eventsAfterLeft).toEqual([
      {
        reason: 'NodeScopeSkipped',
        type: 'Normal',
        message: expect.stringMatching(
          /names no recommender and upstream's recommender runs \(kube-system\/vpa-recommender\).*\[\{name: fleetscope\}\]/,
        ),
      },
    ]);
  });

  it('once it names fleetscope, fleetscope sizes it and warns once that the updater would evict', async () => {
    expect(named.every((r) => r.daemonSets.length === 1)).toBe(true);
    expect(named.at(-1)?.detail).toMatchObject({ skippedVpas: 0, upstreamWarnings: 1 });
    expect(agentPods().filter((p) => p.metadata.annotations?.[RECOMMENDATION_ANNOTATION]).length).toBe(3);
    const warnings = vpaEvents().filter((e) => e.reason === 'UpstreamVPAConflict');
    expect(warnings.map((e) => [e.type, e.message])).toEqual([
      [
        'Warning',
        expect.stringContaining(
          "upstream's updater (kube-system/vpa-updater) evicts pods in updateMode Recreate",
        ),
      ],
    ]);
    // Upstream's updater evicts on status.recommendation in an evicting mode, back to one size for every
    // node: the DaemonSet-wide fallback is held back while it runs (the stock CRD here keeps no groups;
    // the pods are still sized per node, above), and the status still says what fleetscope did.
    const status = sim().get(VPA_RESOURCE, 'agent', 'monitoring')?.status;
    expect(status?.recommendation).toBeUndefined();
    expect(status?.conditions?.length).toBeGreaterThan(0);
    const record = await env.store.getCluster('up');
    expect(record?.upstream).toBe('upstream VPA: recommender, updater');
    expect(record?.notices).toEqual([
      expect.objectContaining({ vpa: 'agent', kind: 'warning', daemonSet: 'monitoring/agent' }),
    ]);
    // The cycle summary (npm start) says it too.
    const summary = await nodescopeSummaryLines(new DynamoNodeScopeStore(env.runtime.db, env.runtime.table));
    expect(summary).toContainEqual(
      expect.stringMatching(
        /^ {2}up: .*upstream VPA: recommender, updater, 1 warning\(s\) about upstream VPA/,
      ),
    );
    expect(summary).toContainEqual(
      expect.stringMatching(
        /^ {4}warning: VPA monitoring\/agent: upstream's updater \(kube-system\/vpa-updater\) evicts pods/,
      ),
    );
  });
});
