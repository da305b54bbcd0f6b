/**
 * Finding 4 of issue 16 (the reads and writes of tasks that race with other writers): a write computed
 * from what was read is made on the object as read (a resourceVersion precondition), and computed again
 * when another writer changed it in between, never undoing their change. Each interleaving is forced by
 * running the other writer's change just before our write is sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FEATURE_CRD } from '../../shared/features/crd.js';
import { blank } from '../../shared/features/machine.js';
import { FeatureMirror } from '../../shared/features/mirror.js';
import { ObjectsApi } from '../../shared/features/objects.js';
import type { TaskContext } from '../../shared/features/spec.js';
import type { ClusterClient } from '../../shared/k8s/client.js';
import { clearVpaStatus } from '../../shared/nodescope/feature-hooks.js';
import { type FeatureEnv, startFeatureEnv } from './helpers.js';

/** A client that runs `meanwhile` once, just before the first call whose operation is `operation`. */
function interleaved(real: ClusterClient, operation: string, meanwhile: () => Promise<unknown>) {
  let done = false;
  const hits: string[] = [];
  const client = new Proxy(real, {
    get(target, prop, receiver) {
      if (prop === 'call')
        return async (op: string, fn: unknown, opts: unknown) => {
          hits.push(op);
          if (op === operation && !done) {
            done = true;
            await meanwhile();
          }
          return (target.call as (...a: unknown[]) => unknown)(op, fn, opts);
        };
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return { client, hits, interleaved: () => done };
}

describe('writes that race with other writers', () => {
  let env: FeatureEnv;
  const cluster = 'racy';
  beforeAll(async () => {
    env = await startFeatureEnv([{ name: cluster, nodes: 1, seed: 8, vpaCrd: true }]);
  });
  afterAll(async () => env?.stop());

  it("clearing fleetscope's VPA condition keeps a condition the recommender wrote in between", async () => {
    const c = env.client(cluster);
    const vpa = { group: 'autoscaling.k8s.io', version: 'v1', plural: 'verticalpodautoscalers' };
    await c.custom.createNamespacedCustomObject({
      ...vpa,
      namespace: 'default',
      body: {
        apiVersion: 'autoscaling.k8s.io/v1',
        kind: 'VerticalPodAutoscaler',
        metadata: { name: 'ds' },
        spec: { targetRef: { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'ds' } },
      },
    });
    const ours = { type: 'RecommendationProvided', status: 'True', reason: 'NodeScope', message: 'per node' };
    const theirs = { type: 'LowConfidence', status: 'True', reason: 'FewSamples', message: 'young' };
    const setConditions = (conditions: object[]) =>
      c.patch('set VPA status', 'merge', (o) =>
        c.custom.patchNamespacedCustomObjectStatus(
          { ...vpa, namespace: 'default', name: 'ds', body: { status: { conditions } } },
          o,
        ),
      );
    await setConditions([ours]);
    // The recommender writes its own condition after the hook read the VPA, before its patch is sent.
    const race = interleaved(c, 'patch verticalpodautoscalers/status', () => setConditions([ours, theirs]));
    const api = new ObjectsApi(race.client);
    await clearVpaStatus({ objects: async () => api } as unknown as TaskContext);
    expect(race.interleaved()).toBe(true);
    const after = (await c.custom.getNamespacedCustomObject({
      ...vpa,
      namespace: 'default',
      name: 'ds',
    })) as {
      status?: { conditions?: { type: string }[] };
    };
    expect(after.status?.conditions?.map((x) => x.type)).toEqual(['LowConfidence']);
  });

  it('clearing the in-cluster uses keeps a use reported in between', async () => {
    const c = env.client(cluster);
    const ref = { namespace: 'fleetscope-system', name: 'racy' };
    const record = blank(cluster, { ...ref, default: 'on' }, env.now());
    await new FeatureMirror(new ObjectsApi(c)).write(
      record,
      { default: 'on', description: 'x', components: ['agent'] },
      [],
      [],
    );
    const object = {
      group: FEATURE_CRD.group,
      version: FEATURE_CRD.version,
      plural: FEATURE_CRD.plural,
      ...ref,
    };
    const report = (use: object) =>
      c.patch('agent reports', 'merge', (o) =>
        c.custom.patchNamespacedCustomObjectStatus(
          { ...object, body: { status: { uses: { agent: use } } } },
          o,
        ),
      );
    const time = new Date(env.now()).toISOString();
    await report({ value: 'on', time, epoch: 1 });
    // The agent reports again, echoing epoch 2, after the clearing read the object and before it patches.
    const race = interleaved(c, 'patch features/status', () => report({ value: 'off', time, epoch: 2 }));
    await new FeatureMirror(new ObjectsApi(race.client)).clearUses(ref, 2);
    expect(race.interleaved()).toBe(true);
    const after = (await c.custom.getNamespacedCustomObject(object)) as {
      status?: { usesEpoch?: number; uses?: Record<string, unknown> };
    };
    expect(after.status?.usesEpoch).toBe(2);
    expect(after.status?.uses?.agent).toEqual({ value: 'off', time, epoch: 2 });
  });

  it("clearing the workers' uses keeps a use reported in between echoing the new epoch", async () => {
    const ref = { namespace: 'fleetscope-system', name: 'racy' };
    await env.store.reportUse(cluster, ref, {
      component: 'w',
      value: 'on',
      at: env.now(),
      epoch: 1,
      source: 'fleetscope',
    });
    const listed = (await env.store.view(cluster, ref)).uses;
    // The worker read the record after epoch 2 was issued and reports before the clearing deletes.
    await env.store.reportUse(cluster, ref, {
      component: 'w',
      value: 'off',
      at: env.now() + 1,
      epoch: 2,
      source: 'fleetscope',
    });
    expect(await env.store.clearUses(cluster, ref, listed, 2)).toBe(0);
    expect((await env.store.view(cluster, ref)).uses).toEqual([
      { component: 'w', value: 'off', at: env.now() + 1, epoch: 2, source: 'fleetscope' },
    ]);
  });
});
