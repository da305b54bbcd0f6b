/**
 * `features register` and `features unregister`: third-party declarations in and out of the fleet.
 * A file is registered whole or not at all (each declaration on the version read, undone on a race),
 * with the kinds the operator allows it to write (`--allow-kind`); a feature is unregistered only once
 * it is Off everywhere and nothing requires it (shared/features/unregister.ts).
 */
import { loadCatalog } from '../../shared/features/catalog.js';
import { checkRequires, DeclarationError, parseDeclarations } from '../../shared/features/declaration.js';
import { FeatureMirror } from '../../shared/features/mirror.js';
import { parseRef, refKey } from '../../shared/features/model.js';
import { ObjectsApi } from '../../shared/features/objects.js';
import { DynamoRolloutStore } from '../../shared/features/rollout-store-dynamo.js';
import type { FeatureSpec } from '../../shared/features/spec.js';
import { DynamoFeatureStore } from '../../shared/features/store-dynamo.js';
import { unregisterFeature } from '../../shared/features/unregister.js';
import { clusterAccess, describeAccessError } from '../../shared/fleet/cluster-access.js';
import { readInput, UsageError } from '../command.js';
import { type CliContext, type TargetFlags, withContext } from '../context.js';

export const registerOptions = {
  file: { type: 'string' },
  'allow-kind': { type: 'string', multiple: true },
} as const;

interface RegisterFlags extends TargetFlags {
  file?: string | undefined;
  'allow-kind'?: string[] | undefined;
}

export async function register(values: RegisterFlags): Promise<number> {
  if (!values.file) throw new UsageError('register needs --file FILE (or - for standard input)');
  const allowKinds = (values['allow-kind'] ?? []).flatMap((k) => k.split(',')).filter(Boolean);
  let specs: FeatureSpec[];
  try {
    specs = parseDeclarations(await readInput(values.file), values.file, { allowKinds });
  } catch (err) {
    if (err instanceof DeclarationError) throw new UsageError(err.message);
    throw err;
  }
  return withContext(values, async (ctx) => {
    const store = new DynamoFeatureStore(ctx.db, ctx.table);
    try {
      checkRequires(specs, (await loadCatalog(store)).specs, values.file!);
    } catch (err) {
      // A feature it requires that this fleet lacks: another fleet may have it (exit 1).
      if (err instanceof DeclarationError) throw new Error(err.message);
      throw err;
    }
    const previous = new Map((await store.listDeclarations()).map((d) => [refKey(d), d]));
    const now = Date.now();
    // Never the same registeredAt as the one it replaces: the next registration's condition tells them apart.
    const at = (k: string) => Math.max(now, (previous.get(k)?.registeredAt ?? 0) + 1);
    const stored = specs.map((s) => ({ ...s, registeredAt: at(refKey(s)) }));
    if (!(await store.putDeclarations(stored, previous)))
      throw new Error(
        `${values.file}: another registration or unregister of these features came in meanwhile; nothing was registered: run it again`,
      );
    for (const s of specs)
      console.log(
        `registered ${refKey(s)} (default ${s.default}; on: ${s.enable.length} task(s), off: ${s.disable.length} task(s)${s.allowKinds ? `; may write ${s.allowKinds.join(', ')}` : ''}): announced to every cluster at the next reconcile`,
      );
    return 0;
  });
}

export async function unregister(values: TargetFlags & { feature?: string | undefined }): Promise<number> {
  if (!values.feature) throw new UsageError('unregister needs --feature NAMESPACE/NAME');
  const ref = parseRef(values.feature);
  return withContext(values, async (ctx) => {
    const store = new DynamoFeatureStore(ctx.db, ctx.table);
    const declaration = (await store.listDeclarations()).find((d) => refKey(d) === refKey(ref));
    // A name that does not exist and a feature still held are the world's answers (1), not usage.
    if (!declaration)
      throw new Error(
        `${refKey(ref)} is not a registered feature (fleetscope's own features cannot be unregistered)`,
      );
    const done = await unregisterFeature(
      store,
      await loadCatalog(store),
      declaration,
      await new DynamoRolloutStore(ctx.db, ctx.table).list(),
    );
    const left = await removeObjects(ctx, ref, done.clusters);
    console.log(
      `unregistered ${refKey(ref)}: forgotten in ${done.clusters.length} cluster(s)${left.length ? `; its Feature object is left in ${left.join('; ')} (delete it with kubectl)` : ''}`,
    );
    return left.length ? 1 : 0;
  });
}

/** Deletes the Feature object in each cluster it can reach; the clusters where it could not, and why. */
async function removeObjects(
  ctx: CliContext,
  ref: { namespace: string; name: string },
  clusters: string[],
): Promise<string[]> {
  const left: string[] = [];
  for (const name of clusters) {
    const c = await ctx.registry.get(name);
    if (!c) continue;
    try {
      const client = await clusterAccess().client(name, c.kubeconfig);
      await new FeatureMirror(new ObjectsApi(client)).removeObject(ref);
    } catch (err) {
      left.push(`${name} (${describeAccessError(err)})`);
    }
  }
  return left;
}
