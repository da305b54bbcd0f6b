/**
 * Each built-in feature's on and off transitions over the simulator, with the real workers reporting
 * their uses: balloons off while pods use the space the balloons released; nodescope off (annotations,
 * VPA condition, spec.scope before the scoped CRD is reverted, stored state deleted or kept); claims off
 * refused while the cluster is in a ClusterSet, then everything fleetscope wrote removed but id.k8s.io.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoBalloonStore } from '../../shared/balloons/store-dynamo.js';
import { joinClusterSet, leaveClusterSet } from '../../shared/claims/membership.js';
import { DynamoClaimStore } from '../../shared/claims/store-dynamo.js';
import { FEATURE_CRD } from '../../shared/features/crd.js';
import { parseCpu } from '../../shared/kernel/quantity.js';
import { installScopedCrd } from '../../shared/nodescope/crd.js';
import { WHOLE_CLUSTER_POLICY } from '../balloons/helpers.js';
import { agentDaemonSet, VPA_RESOURCE, vpaObject } from '../nodescope/helpers.js';
import {
  BALLOONS,
  CLAIMS,
  dangling,
  drive,
  type FeatureEnv,
  MINUTE,
  NODESCOPE,
  startFeatureEnv,
} from './helpers.js';

describe('built-in features over the simulator', () => {
  let env: FeatureEnv;
  beforeAll(async () => {
    env = await startFeatureEnv([
      // 1.37: the off transition also takes fleetscope's KEP-5836 key off the nodes
      { name: 'bal', nodes: 2, seed: 3, kubernetesVersion: '1.37.0' },
      { name: 'ns', nodes: 2, seed: 4, vpaCrd: true, daemonSets: [agentDaemonSet()] },
      { name: 'cl', nodes: 1, seed: 5 },
    ]);
  });
  afterAll(async () => env?.stop());

  const balloonPods = async (cluster: string) =>
    (
      await env
        .client(cluster)
        .core.listNamespacedPod({ namespace: 'kube-system', labelSelector: 'fleetscope.io/balloon=true' })
    ).items;

  it('balloons: on by default; off deflates first, and pods keep the space they took before the DaemonSet goes', async () => {
    const store = new DynamoBalloonStore(env.runtime.db, env.runtime.table);
    await store.putPolicy('bal', WHOLE_CLUSTER_POLICY);
    const on = await drive(env, 'bal', BALLOONS, { between: () => env.cycle('bal') });
    expect(on.history.at(-1)).toMatchObject({
      to: 'On',
      reason: 'announced, default on',
      outcome: 'completed',
    });
    await env.cycle('bal');
    env.sim.clock.advance(MINUTE);
    await env.cycle('bal');
    const inflated = await balloonPods('bal');
    expect(inflated).toHaveLength(2);
    const node = (await env.client('bal').core.listNode()).items[0]!;
    const allocatable = parseCpu(node.status!.allocatable!.cpu!);
    expect(parseCpu(inflated[0]!.spec!.containers[0]!.resources!.requests!.cpu!)).toBeGreaterThan(
      allocatable / 2,
    );
    // (the simulator's store: client-node's V1NodeSpec does not know the 1.37 field yet)
    const optOutKeys = async () =>
      env.sim
        .cluster('bal')
        .store.list('nodes')
        .map((n) => n.spec?.podPreemptionPolicy?.disableResizePreemption ?? []);
    expect(await optOutKeys()).toEqual([['fleetscope.io/balloons'], ['fleetscope.io/balloons']]);

    await env.set('bal', BALLOONS, 'off');
    await env.reconcile('bal', BALLOONS); // deflates, then waits for uses
    const rec = (await env.store.get('bal', BALLOONS))!;
    expect(rec.state).toBe('TurningOff');
    expect(rec.tasks[0]).toMatchObject({
      title: 'wait for uses',
      waitingFor: expect.stringMatching(/uses cleared/),
    });
    // A pod takes the space a deflated balloon released (it could not fit while the balloon held it).
    const big = Math.floor(allocatable * 0.7);
    await env.client('bal').core.createNamespacedPod({
      namespace: 'default',
      body: {
        metadata: { name: 'big' },
        spec: {
          nodeName: node.metadata!.name!,
          containers: [
            { name: 'app', image: 'pause', resources: { requests: { cpu: `${big}m`, memory: '1Gi' } } },
          ],
        },
      },
    });
    env.sim.clock.advance(1000);
    const off = await drive(env, 'bal', BALLOONS, { between: () => env.cycle('bal') });
    expect(off.state).toBe('Off');
    expect(off.history.at(-1)!.done.map((d) => d.title)).toEqual([
      'deflate every balloon to the floor',
      'wait for uses',
      'deflate what a cycle still in flight inflated',
      "remove fleetscope's key from nodes' disableResizePreemption",
      'delete DaemonSet kube-system/fleetscope-balloon',
      'delete PriorityClass fleetscope-balloon',
      'wait for no Pod in kube-system (fleetscope.io/balloon=true)',
      'clear stored state balloons#',
    ]);
    const pod = await env.client('bal').core.readNamespacedPod({ name: 'big', namespace: 'default' });
    expect(pod.status?.phase).toBe('Running');
    expect(await balloonPods('bal')).toEqual([]);
    expect(await optOutKeys()).toEqual([[], []]);
    expect(await store.load('bal')).toEqual({ policies: [], requests: [] });
    expect(await dangling(env, 'bal', BALLOONS)).toEqual([]);
    // The cycle's balloons phase stays off: nothing is created again.
    await env.cycle('bal');
    await expect(
      env
        .client('bal')
        .apps.readNamespacedDaemonSet({ name: 'fleetscope-balloon', namespace: 'kube-system' }),
    ).rejects.toThrow();
    // The Feature object in the cluster says so, for kubectl.
    const cr = (await env.client('bal').custom.getNamespacedCustomObject({
      group: FEATURE_CRD.group,
      version: FEATURE_CRD.version,
      plural: FEATURE_CRD.plural,
      namespace: 'fleetscope-system',
      name: 'balloons',
    })) as { spec: { desired: string }; status: { state: string; uses: Record<string, { value: string }> } };
    expect(cr.spec.desired).toBe('off');
    expect(cr.status.state).toBe('Off');
    expect(cr.status.uses['cycle/balloons']?.value).toBe('off');
  });

  it('nodescope: off clears annotations, the VPA condition, spec.scope and only then the scoped CRD, then its state', async () => {
    const sim = env.sim.cluster('ns');
    await installScopedCrd(env.client('ns'));
    sim.store.put(VPA_RESOURCE, { ...vpaObject({ mode: 'Auto', via: 'spec' }) });
    await drive(env, 'ns', NODESCOPE, { between: () => env.cycle('ns') });
    for (let i = 0; i < 14; i++) {
      env.sim.clock.advance(5 * MINUTE);
      await env.cycle('ns');
    }
    const annotated = () =>
      sim.store
        .list('pods', 'monitoring')
        .filter((p) => p.metadata.annotations?.['fleetscope.io/recommendation']);
    expect(annotated().length).toBeGreaterThan(0);
    const vpa = () => sim.store.get(VPA_RESOURCE, 'agent', 'monitoring');
    expect(vpa().spec.scope).toBe('node');
    expect(vpa().status?.conditions?.some((c: { reason: string }) => c.reason === 'NodeScope')).toBe(true);

    await env.set('ns', NODESCOPE, 'off');
    const off = await drive(env, 'ns', NODESCOPE, { between: () => env.cycle('ns') });
    expect(off.history.at(-1)!.done.map((d) => d.title)).toEqual([
      'wait for uses',
      'clear metadata.annotations.fleetscope.io/recommendation from Pod',
      "remove fleetscope's VPA condition and status.nodeScope",
      'clear spec.scope from VerticalPodAutoscaler',
      'revert the scoped VPA CRD variant to the stock schema',
      'clear stored state nodescope#',
    ]);
    expect(annotated()).toEqual([]);
    expect(vpa().spec.scope).toBeUndefined();
    expect(vpa().status?.nodeScope).toBeUndefined();
    expect(vpa().status?.conditions ?? []).toEqual([]);
    const crd = sim.store.get(
      'customresourcedefinitions.apiextensions.k8s.io',
      'verticalpodautoscalers.autoscaling.k8s.io',
    );
    expect(crd.metadata.annotations?.['fleetscope.io/variant']).toBeUndefined();
    const v1 = crd.spec.versions.find((v: { name: string }) => v.name === 'v1');
    expect(v1.schema.openAPIV3Schema.properties.spec.properties.scope).toBeUndefined();
    expect(await dangling(env, 'ns', NODESCOPE)).toEqual([]);
  });

  it('nodescope: with --keep-state, the history is kept for its window (a TTL), not shown as dangling', async () => {
    await env.set('ns', NODESCOPE, 'on');
    await drive(env, 'ns', NODESCOPE, { between: () => env.cycle('ns') });
    env.sim.clock.advance(5 * MINUTE);
    await env.cycle('ns');
    const items = async () =>
      (await env.store.table.query('CLUSTER#ns', { beginsWith: 'nodescope#' })) as {
        keptUntil?: number;
        expiresAt?: number;
      }[];
    expect((await items()).length).toBeGreaterThan(0);
    await env.set('ns', NODESCOPE, 'off', true);
    await drive(env, 'ns', NODESCOPE, { between: () => env.cycle('ns') });
    const kept = await items();
    expect(kept.length).toBeGreaterThan(0);
    for (const i of kept) {
      expect(i.keptUntil).toBeGreaterThan(env.now() + 7 * 24 * 60 * MINUTE);
      expect(i.expiresAt! * 1000).toBeGreaterThanOrEqual(i.keptUntil!);
    }
    expect(await dangling(env, 'ns', NODESCOPE)).toEqual([]);
  });

  it('claims: off waits while the cluster is in a ClusterSet, naming it; then removes all but id.k8s.io', async () => {
    await drive(env, 'cl', CLAIMS, { between: () => env.claimsCheck('cl') });
    const claims = new DynamoClaimStore(env.runtime.db, env.runtime.table);
    const ports = { store: claims, registry: env.registry, publisher: { publish: async () => {} } };
    await env.claimsCheck('cl');
    await joinClusterSet(ports, 'cl', 'blue');
    await env.claimsCheck('cl');
    const props = () =>
      env.sim
        .cluster('cl')
        .store.list('clusterproperties.about.k8s.io')
        .map((p) => p.metadata.name)
        .sort();
    expect(props()).toEqual(['cluster.clusterset.k8s.io', 'clusterset.k8s.io', 'id.k8s.io']);

    await env.set('cl', CLAIMS, 'off');
    await env.reconcile('cl', CLAIMS);
    env.sim.clock.advance(5 * MINUTE);
    await env.reconcile('cl', CLAIMS);
    const held = (await env.store.get('cl', CLAIMS))!;
    expect(held.state).toBe('TurningOff');
    expect(held.tasks[0]!.waitingFor).toMatch(/member of ClusterSet "blue".*clusterset leave --cluster cl/);
    expect(props()).toHaveLength(3); // nothing removed while the membership lasts

    await leaveClusterSet(ports, 'cl', 'blue');
    // The claims worker writes nothing while claims turn off, but a membership that ended loses its claim.
    await env.claimsCheck('cl');
    expect(props()).toEqual(['cluster.clusterset.k8s.io', 'id.k8s.io']);
    const off = await drive(env, 'cl', CLAIMS, { between: () => env.claimsCheck('cl') });
    expect(off.state).toBe('Off');
    expect(props()).toEqual(['id.k8s.io']);
    expect((await claims.getIdentity('cl'))?.clusterId).toBeTruthy(); // the ID stays, for turning on again
    expect(await dangling(env, 'cl', CLAIMS)).toEqual([]);
  });
});
