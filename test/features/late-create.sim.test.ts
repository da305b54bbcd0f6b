/**
 * Creates are fenced too (issue 34, defect 7): a reconciler frozen between its fence check and an
 * apply-manifests create wakes after another finished the transition and the feature was turned Off
 * again. Its late create lands (Kubernetes has no precondition on a create), and is taken back at
 * once: the object does not outlive the Off transition, and the late holder stores nothing.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { builtinFeatures, FeatureCatalog } from '../../shared/features/catalog.js';
import { setDesired } from '../../shared/features/desired.js';
import { CLAIM_MS } from '../../shared/features/machine.js';
import type { StepMark } from '../../shared/features/reconciler.js';
import { latch, testFeature } from './fixtures.js';
import { drive, type FeatureEnv, MINUTE, startFeatureEnv } from './helpers.js';

const LATE = { namespace: 'acme', name: 'late' };
const config = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'late-config', namespace: 'default' },
  data: { on: 'yes' },
};
const late = testFeature(LATE, {
  default: 'off',
  enable: [{ task: 'apply-manifests', manifests: [config] }],
  disable: [
    {
      task: 'delete-objects',
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: 'default',
      name: 'late-config',
    },
  ],
});
const catalog = new FeatureCatalog([...builtinFeatures(), late]);

let env: FeatureEnv;
beforeAll(async () => {
  env = await startFeatureEnv([{ name: 'late', nodes: 0, seed: 5 }]);
});
afterAll(async () => env?.stop());

it('a create sent after its claim was lost and the feature turned off again does not stay', async () => {
  const cluster = 'late';
  const exists = async () =>
    (await env.client(cluster).core.listNamespacedConfigMap({ namespace: 'default' })).items.some(
      (c) => c.metadata?.name === 'late-config',
    );
  await drive(env, cluster, LATE, { ports: { catalog, mirror: false } }); // announced, Off
  await setDesired(env.store, late, cluster, 'on', 'test', {}, env.now());
  const resume = latch();
  const stopped = latch();
  const frozen: string[] = [];
  const first = env.reconcile(cluster, LATE, {
    catalog,
    mirror: false,
    heartbeatMs: 0,
    onFence: async (m: StepMark) => {
      if (frozen.length) return;
      frozen.push(m.task ?? '');
      stopped.open();
      await resume.opened;
    },
  });
  await stopped.opened;
  expect(frozen).toEqual(['apply ConfigMap late-config']);
  // Another takes the task over once the claim lapsed, finishes turning on; then the feature goes off.
  env.sim.clock.advance(CLAIM_MS + MINUTE);
  expect((await drive(env, cluster, LATE, { ports: { catalog, mirror: false } })).state).toBe('On');
  await setDesired(env.store, late, cluster, 'off', 'test', {}, env.now());
  const off = await drive(env, cluster, LATE, { ports: { catalog, mirror: false } });
  expect(off.state).toBe('Off');
  expect(await exists()).toBe(false);
  resume.open();
  await first;
  expect(await exists(), 'the late create does not outlive Off').toBe(false);
  const after = (await env.store.get(cluster, LATE))!;
  expect(after.state).toBe('Off');
  expect(after.version).toBe(off.version);
});
