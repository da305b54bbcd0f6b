/**
 * KEP-3920's goal, as one generic test: every registered feature (fleetscope's own and the sample third
 * party's, examples/widgets-feature.yaml) is turned on over the simulator, used, turned off, and then
 * nothing dangles. Two independent checks: what the feature's own tasks say must be gone (objects, stored
 * state, uses reporting on, its leftovers check), and a diff of the cluster and of the cluster's
 * DynamoDB items against how they were before the feature was turned on (every object created since,
 * every label, annotation or spec field added since, every item stored since, must be gone unless the
 * exercise says why it outlives the feature). One simulator and one local runtime for all features.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../local/runtime.js';
import { builtinFeatures, FeatureCatalog } from '../../shared/features/catalog.js';
import { parseDeclarations } from '../../shared/features/declaration.js';
import { refKey } from '../../shared/features/model.js';
import type { ReconcilerPorts } from '../../shared/features/reconciler.js';
import type { FeatureSpec } from '../../shared/features/spec.js';
import { watchCluster } from './cluster-diff.js';
import { EXERCISES, type Exercise } from './exercises.js';
import {
  dangling,
  drive,
  type FeatureEnv,
  itemKeys,
  NODESCOPE,
  othersState,
  PLATFORM_ITEMS,
  startFeatureEnv,
  usesOn,
} from './helpers.js';

const sample = parseDeclarations(
  await readFile(join(REPO_ROOT, 'examples', 'widgets-feature.yaml'), 'utf8'),
  'examples/widgets-feature.yaml',
);
const registered: FeatureSpec[] = [...builtinFeatures(), ...sample];

describe('on -> use -> off, for every registered feature', () => {
  let env: FeatureEnv;
  beforeAll(async () => {
    env = await startFeatureEnv([]);
    for (const s of sample) await env.store.putDeclaration({ ...s, registeredAt: env.now() });
  });
  afterAll(async () => env?.stop());

  it('knows how to use every registered feature (a new feature joins by being registered)', async () => {
    const catalog = await env.catalog();
    expect(catalog.specs.map(refKey).sort()).toEqual(registered.map(refKey).sort());
    const missing = registered.map(refKey).filter((k) => !EXERCISES[k]);
    expect(missing, 'registered features without an exercise in test/features/exercises.ts').toEqual([]);
  });

  for (const spec of registered) {
    const key = refKey(spec);
    it(`${key}: on, used, off, and nothing dangles`, async () => {
      const ex = EXERCISES[key];
      if (!ex) throw new Error(`no exercise for ${key} in test/features/exercises.ts`);
      const left = await onUseOff(env, spec, ex, `life-${spec.name}`);
      expect(left.dangling, 'what its own tasks say must be gone').toEqual([]);
      expect(left.damage, 'the cluster against how it was before on').toEqual([]);
      expect(left.items, 'items stored since it was turned on').toEqual([]);
      expect(left.usesOn, 'components still using it').toEqual([]);
    });
  }

  it("sees damage, not only leftovers: a node scope whose off also deletes the user's VPA and DaemonSet fails it", async () => {
    // The mutation of issue 16: the same feature, with two more tasks at the end of its off.
    const real = (await env.catalog()).need(NODESCOPE);
    const harmful: FeatureSpec = {
      ...real,
      disable: [
        ...real.disable,
        { task: 'delete-objects', apiVersion: 'autoscaling.k8s.io/v1', resource: 'verticalpodautoscalers' },
        { task: 'delete-objects', apiVersion: 'apps/v1', kind: 'DaemonSet', namespace: 'monitoring' },
      ],
    };
    const catalog = new FeatureCatalog(
      (await env.catalog()).specs.map((s) => (refKey(s) === key(NODESCOPE) ? harmful : s)),
    );
    const left = await onUseOff(env, harmful, EXERCISES[key(NODESCOPE)]!, 'life-harmful', { catalog });
    expect(left.dangling).toEqual([]); // its own checks see nothing wrong: what it was told to remove is gone
    expect(left.damage).toEqual(
      expect.arrayContaining([
        "deleted the user's verticalpodautoscalers.autoscaling.k8s.io/monitoring/agent",
        'deleted: daemonsets.apps/monitoring/agent',
      ]),
    );
  });
});

const key = refKey;

/** What the run left: each list empty when the feature left the cluster and the table as they were. */
interface Left {
  dangling: string[];
  damage: string[];
  items: string[];
  usesOn: string[];
}

/** One feature turned on, used, and turned off in a new cluster; what it left behind, or did. */
async function onUseOff(
  env: FeatureEnv,
  spec: FeatureSpec,
  ex: Exercise,
  cluster: string,
  ports: Partial<ReconcilerPorts> = {},
): Promise<Left> {
  await env.addCluster({ name: cluster, seed: 7, ...ex.cluster });
  await ex.prepare?.(env, cluster);
  const items = await itemKeys(env, cluster);
  const watch = watchCluster(env, cluster);
  try {
    await env.set(cluster, spec, 'on');
    const on = await drive(env, cluster, spec, { between: () => ex.checkIn(env, cluster), ports });
    expect(on.state).toBe('On');
    await ex.use(env, cluster);
    await ex.checkIn(env, cluster);
    expect((await usesOn(env, cluster, spec)).length, 'a component reported using it').toBeGreaterThan(0);

    await env.set(cluster, spec, 'off');
    const off = await drive(env, cluster, spec, {
      between: async () => {
        await ex.checkIn(env, cluster);
        await ex.byHand?.(env, cluster);
      },
      ports,
    });
    expect(off.state).toBe('Off');
    expect(off.history.map((t) => `${t.to}:${t.outcome}`).slice(-2)).toEqual([
      'On:completed',
      'Off:completed',
    ]);

    const outlive = [...PLATFORM_ITEMS, ...othersState(registered, spec), ...(ex.outlives?.items ?? [])];
    await ex.checkIn(env, cluster);
    return {
      dangling: await dangling(env, cluster, spec),
      damage: watch.damage({
        outlives: ex.outlives?.objects ?? [],
        changes: ex.changes ?? [],
        keeps: ex.keeps ?? [],
      }),
      items: [...(await itemKeys(env, cluster))].filter(
        (k) => !items.has(k) && !outlive.some((r) => r.test(k)),
      ),
      usesOn: await usesOn(env, cluster, spec),
    };
  } finally {
    watch.unsubscribe();
  }
}
