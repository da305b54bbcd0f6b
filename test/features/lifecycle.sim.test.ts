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
import type { StoreEvent } from '../../local/sim/store.js';
import { builtinFeatures } from '../../shared/features/catalog.js';
import { parseDeclarations } from '../../shared/features/declaration.js';
import { FeatureMirror } from '../../shared/features/mirror.js';
import { refKey } from '../../shared/features/model.js';
import { ObjectsApi } from '../../shared/features/objects.js';
import type { FeatureSpec } from '../../shared/features/spec.js';
import { SK } from '../../shared/platform/dynamo.js';
import { EXERCISES } from './exercises.js';
import { dangling, drive, type FeatureEnv, startFeatureEnv } from './helpers.js';

const sample = parseDeclarations(
  await readFile(join(REPO_ROOT, 'examples', 'widgets-feature.yaml'), 'utf8'),
  'examples/widgets-feature.yaml',
);
const registered: FeatureSpec[] = [...builtinFeatures(), ...sample];

/** fleetscope's own mirror of the records (the Feature CRD, its objects, its namespace) and Events. */
const ALWAYS_OUTLIVES = [
  /^events\//,
  /^customresourcedefinitions\.apiextensions\.k8s\.io\/features\.fleetscope\.io$/,
  /^features\.fleetscope\.io\//,
  /^namespaces\/fleetscope-system$/,
  /^[a-z.]+\/fleetscope-system\//, // what the namespace's controllers put in it (ServiceAccount, CA bundle)
];
const PLATFORM_ITEMS = [/^feature#/, /^META$/, /^STATUS$/];

/** What the cluster had before the feature was turned on, and every object touched since. */
function watchCluster(env: FeatureEnv, cluster: string) {
  const before = new Map<string, unknown>();
  const created = new Set<string>();
  const unsubscribe = env.sim.state(cluster).store.subscribe((e: StoreEvent) => {
    const id = `${e.collection}/${e.key}`;
    if (e.type === 'ADDED' && !before.has(id)) created.add(id);
    else if (e.prev && !before.has(id) && !created.has(id)) before.set(id, e.prev);
  });
  return {
    unsubscribe,
    /** Objects created and still there, and labels, annotations or spec fields added and still there. */
    leftovers(outlives: RegExp[]): string[] {
      const store = env.sim.state(cluster).store;
      const allowed = (id: string) => [...ALWAYS_OUTLIVES, ...outlives].some((r) => r.test(id));
      const out: string[] = [];
      for (const id of created) {
        const [collection, ...key] = id.split('/');
        if (store.get(collection!, key.join('/')) && !allowed(id)) out.push(`created and left: ${id}`);
      }
      for (const [id, was] of before) {
        const [collection, ...key] = id.split('/');
        const now = store.get(collection!, key.join('/'));
        if (!now || allowed(id)) continue;
        out.push(...added(was as never, now, id));
      }
      return out;
    },
  };
}

type Obj = { metadata?: { labels?: object; annotations?: object }; spec?: object };
function added(was: Obj, now: Obj, id: string): string[] {
  const keys = (o: object | undefined) => new Set(Object.keys(o ?? {}));
  const diff = (a: object | undefined, b: object | undefined) => [...keys(b)].filter((k) => !keys(a).has(k));
  return [
    ...diff(was.metadata?.labels, now.metadata?.labels).map((k) => `label ${k} added to ${id}`),
    ...diff(was.metadata?.annotations, now.metadata?.annotations).map(
      (k) => `annotation ${k} added to ${id}`,
    ),
    ...diff(was.spec, now.spec).map((k) => `spec.${k} added to ${id}`),
  ];
}

/** The state other features keep (they are still on in this cluster; their own runs check it). */
const othersState = (spec: FeatureSpec): RegExp[] =>
  registered
    .filter((o) => refKey(o) !== refKey(spec))
    .flatMap((o) => o.disable.flatMap((t) => (t.task === 'clear-state' ? t.prefixes : [])))
    .map((p) => new RegExp(`^${p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));

async function itemKeys(env: FeatureEnv, cluster: string): Promise<Set<string>> {
  return new Set((await env.store.table.query(`CLUSTER#${cluster}`, undefined)).map((i) => String(i[SK])));
}

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
      const cluster = `life-${spec.name}`;
      await env.addCluster({ name: cluster, seed: 7, ...ex.cluster });
      await ex.prepare?.(env, cluster);
      const items = await itemKeys(env, cluster);
      const watch = watchCluster(env, cluster);
      try {
        await env.set(cluster, spec, 'on');
        const on = await drive(env, cluster, spec, { between: () => ex.checkIn(env, cluster) });
        expect(on.state).toBe('On');
        await ex.use(env, cluster);
        await ex.checkIn(env, cluster);
        const inCluster = await new FeatureMirror(new ObjectsApi(env.client(cluster))).readUses(spec);
        const uses = [...(await env.store.view(cluster, spec)).uses, ...inCluster];
        expect(uses.filter((u) => u.value === 'on').length, 'a component reported using it').toBeGreaterThan(
          0,
        );

        await env.set(cluster, spec, 'off');
        const off = await drive(env, cluster, spec, {
          between: async () => {
            await ex.checkIn(env, cluster);
            await ex.byHand?.(env, cluster);
          },
        });
        expect(off.state).toBe('Off');
        expect(off.history.map((t) => `${t.to}:${t.outcome}`).slice(-2)).toEqual([
          'On:completed',
          'Off:completed',
        ]);

        // 1. What the feature's own tasks say must be gone.
        expect(await dangling(env, cluster, spec)).toEqual([]);
        // 2. The cluster and the table against how they were before it was turned on.
        expect(watch.leftovers(ex.outlives?.objects ?? [])).toEqual([]);
        const outlive = [...PLATFORM_ITEMS, ...othersState(spec), ...(ex.outlives?.items ?? [])];
        const newItems = [...(await itemKeys(env, cluster))].filter(
          (k) => !items.has(k) && !outlive.some((r) => r.test(k)),
        );
        expect(newItems, 'items stored since it was turned on').toEqual([]);
        // No component reports using it any more.
        await ex.checkIn(env, cluster);
        const after = [
          ...(await env.store.view(cluster, spec)).uses,
          ...(await new FeatureMirror(new ObjectsApi(env.client(cluster))).readUses(spec)),
        ];
        expect(after.filter((u) => u.value === 'on')).toEqual([]);
      } finally {
        watch.unsubscribe();
      }
    });
  }
});
