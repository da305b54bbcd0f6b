import { randomUUID } from 'node:crypto';
import { userInfo } from 'node:os';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { type FeatureCatalog, loadCatalog } from '../../shared/features/catalog.js';
import { DynamoClusterState } from '../../shared/features/cluster-state-dynamo.js';
import { danglingOf } from '../../shared/features/dangling.js';
import { orderOf, setDesiredInOrder } from '../../shared/features/desired.js';
import { FeatureMirror } from '../../shared/features/mirror.js';
import {
  type FeatureRecord,
  type FeatureRef,
  finalOf,
  refKey,
  type Value,
} from '../../shared/features/model.js';
import { ObjectsApi } from '../../shared/features/objects.js';
import { actOnTransition, OperatorError, VERBS, type Verb } from '../../shared/features/operator.js';
import { planTransition } from '../../shared/features/plan.js';
import { type ReconcilerPorts, reconcileCluster } from '../../shared/features/reconciler.js';
import type { FeatureStore, FeatureView } from '../../shared/features/store.js';
import { DynamoFeatureStore } from '../../shared/features/store-dynamo.js';
import { dynamoTaskStores } from '../../shared/features/task-stores-dynamo.js';
import { upgradeBlockers } from '../../shared/features/upgrade.js';
import {
  detailLines,
  type FeatureJson,
  featureJson,
  historyLines,
  listTable,
  planLines,
  transitionJson,
} from '../../shared/features/views.js';
import { clusterAccess, describeAccessError } from '../../shared/fleet/cluster-access.js';
import { textTable } from '../../shared/kernel/text-table.js';
import { clusterPk, SK, Table } from '../../shared/platform/dynamo.js';
import { type CliCommand, runSubcommand, UsageError } from '../command.js';
import { type CliContext, parseFlags, registeredCluster, withContext } from '../context.js';
import { isDocument, outputFormat, print } from '../output.js';
import { featureOf } from './feature-flag.js';
import { type Flags, options } from './features-flags.js';
import { register, unregister } from './features-register.js';
import { rolloutCommand } from './features-rollout.js';

const usage = `usage:
  fleetscope features list     [--cluster NAME] [--feature F] [-n NAMESPACE] [--offline]
                               [--sort-by cluster|feature|state|updated] [-o table|wide|json|yaml]
  fleetscope features get      --cluster NAME --feature F [--offline] [-o table|json|yaml]
  fleetscope features set      --cluster NAME --feature F --desired on|off|default [--keep-state]
  fleetscope features history  --cluster NAME --feature F [-o table|json|yaml]
  fleetscope features plan     --cluster NAME --feature F --desired on|off [--keep-state] [-o table|json|yaml]
  fleetscope features register --file FILE|- [--allow-kind KIND ...]
  fleetscope features unregister --feature NAMESPACE/NAME
  fleetscope features check-upgrade [--cluster NAME] [--kubernetes VERSION] [--fleetscope VERSION] [-o ...]
  fleetscope features reconcile [--cluster NAME] [-o table|json|yaml]
  fleetscope features retry|skip|abandon --cluster NAME --feature F [--task T] --reason "..." 
  fleetscope features rollout  --feature F --to on|off --waves 1,10%,50%,100% --pause 10m
                               [--selector k=v] [--stuck-after 30m] [--fail-after N] [--no-rollback]
                               [--approval] [-o ...]
  fleetscope features rollout status [--id ID] [-o table|json|yaml]
  fleetscope features rollout halt|resume --id ID
  fleetscope features rollout approve --id ID --wave N    (the wave whose gate status shows)

Every capability is a feature of each cluster (KEP-3920): On, Off, or TurningOn/TurningOff while the
tasks of the transition are performed in order (each shown with what it waits for). F is a feature
name (fleetscope's own, in fleetscope-system) or NAMESPACE/NAME (a third party's).

  list, get      state, desired, default, tasks; an Off feature that still has objects, stored state
                 or uses reporting on is shown DANGLING, with what dangles (--offline: no cluster reads)
  set            the desired value (default: follow the feature's default); --keep-state keeps stored
                 state for its history window instead of deleting it (nodescope)
  plan           what turning it on or off would create, change and delete in the cluster, checked
                 by the API server as a dry run (dryRun=All); nothing is written
  register       declare third-party features from a file made of the built-in tasks; they write only
                 objects they create, and no admission, RBAC or cluster-scoped kind unless --allow-kind
                 names it (the whole file, or nothing)
  unregister     remove a registered feature once it is Off in every cluster and nothing requires it
  check-upgrade  whether any feature blocks an upgrade or downgrade of fleetscope (--fleetscope) or of
                 Kubernetes (--kubernetes), and why; exit 1 when something blocks
  reconcile      run the server flow now (what the schedule does every 2 minutes), looking again at
                 every waiting task at once
  retry          a stuck transition's current task is looked at again now (back-off and deadline anew)
  skip           its current task is recorded as skipped, not performed; the next one goes on
  abandon        the transition is given up; the feature turns back to the value it came from
                 (each recorded in the history with who, when and --reason; --task names the task
                 it is meant for, refused when it is not the current one)
  rollout        turn a feature on or off across the fleet in waves; a failing wave is rolled back
                 (its clusters set back) unless --no-rollback; --approval waits for approve between
                 waves (docs/features.md)

  --state-dir DIR   local state (default .fleetscope, or FLEETSCOPE_STATE_DIR)
  --aws             act on the deployed stack instead (--stack NAME, default Fleetscope; --region R)`;

export const command: CliCommand = {
  name: 'features',
  summary: 'feature lifecycle (KEP-3920): list, get, set, history, register, check-upgrade, rollout',
  usage,
  outputs: {
    list: 'data',
    get: 'data',
    set: 'action',
    history: 'data',
    plan: 'data',
    register: 'action',
    unregister: 'action',
    'check-upgrade': 'data',
    reconcile: 'data',
    retry: 'action',
    skip: 'action',
    abandon: 'action',
    rollout: 'data',
    'rollout status': 'data',
    'rollout halt': 'action',
    'rollout resume': 'action',
    'rollout approve': 'action',
  },
  async run(args) {
    const { values, positionals } = parseFlags(args, options);
    if (positionals[0] === 'rollout') return rolloutCommand(values, positionals.slice(1));
    return runSubcommand(positionals, {
      list: () => list(values),
      get: () => get(values),
      set: () => set(values),
      history: () => history(values),
      plan: () => plan(values),
      register: () => register(values),
      unregister: () => unregister(values),
      'check-upgrade': () => checkUpgrade(values),
      reconcile: () => reconcile(values),
      ...Object.fromEntries(VERBS.map((v) => [v, () => operate(values, v)])),
    });
  },
};

async function registered(ctx: CliContext, cluster: string | undefined, what: string): Promise<string> {
  if (!cluster) throw new UsageError(`${what} needs --cluster`);
  return (await registeredCluster(ctx, cluster)).name;
}

interface Gathered {
  rows: FeatureJson[];
  unannounced: string[];
}

/** Every (cluster, feature) asked for, with what dangles for the Off ones (live unless offline). */
async function gather(
  ctx: CliContext,
  catalog: FeatureCatalog,
  clusters: string[],
  only: FeatureRef | undefined,
  live: boolean,
): Promise<Gathered> {
  const store = new DynamoFeatureStore(ctx.db, ctx.table);
  const out: Gathered = { rows: [], unannounced: [] };
  for (const cluster of clusters) {
    const views = await store.clusterViews(cluster);
    const specs = catalog.specs.filter((s) => !only || refKey(s) === refKey(only));
    let api: Promise<ObjectsApi> | undefined;
    const objects = () => {
      api ??= ctx.registry
        .get(cluster)
        .then(async (c) => new ObjectsApi(await clusterAccess().client(cluster, c!.kubeconfig)));
      return api;
    };
    for (const spec of specs) {
      const view: FeatureView | undefined = views.get(refKey(spec));
      if (!view?.record) {
        out.unannounced.push(`${cluster} ${refKey(spec)}`);
        continue;
      }
      // In-cluster components' uses, from the Feature object's status (live only).
      const uses = live
        ? [
            ...view.uses,
            ...(await objects()
              .then((a) => new FeatureMirror(a).readUses(spec))
              .catch(() => [])),
          ]
        : view.uses;
      const dangling =
        view.record.state === 'Off'
          ? await danglingOf(
              spec,
              spec,
              view.uses,
              {
                cluster,
                state: new DynamoClusterState(ctx.db, ctx.table),
                client: async () => (await objects()).client,
                objects,
              },
              { live },
            ).catch((err) => [`unknown: cannot read the cluster (${describeAccessError(err)})`])
          : undefined;
      const order = orderOf(catalog, spec);
      out.rows.push({ ...featureJson(view.record, uses, dangling), ...(order ? { order } : {}) });
    }
  }
  return out;
}

/** --sort-by keys of features list (default: cluster, then the catalog's order). */
const FEATURE_SORTS: Record<string, (a: FeatureJson, b: FeatureJson) => number> = {
  cluster: (a, b) => a.cluster.localeCompare(b.cluster),
  feature: (a, b) => a.feature.localeCompare(b.feature) || a.cluster.localeCompare(b.cluster),
  state: (a, b) => a.state.localeCompare(b.state) || a.cluster.localeCompare(b.cluster),
  updated: (a, b) => b.updatedAt.localeCompare(a.updatedAt),
};

async function list(values: Flags): Promise<number> {
  const format = outputFormat(values);
  const sort = FEATURE_SORTS[values['sort-by'] ?? 'cluster'];
  if (!sort)
    throw new UsageError(
      `--sort-by ${values['sort-by']}: use one of ${Object.keys(FEATURE_SORTS).join(', ')}`,
    );
  return withContext(values, async (ctx) => {
    const catalog = await loadCatalog(new DynamoFeatureStore(ctx.db, ctx.table));
    const only = values.feature ? featureOf(catalog, values.feature, 'list') : undefined;
    const clusters = values.cluster
      ? [await registered(ctx, values.cluster, 'list')]
      : (await ctx.registry.list()).map((c) => c.name);
    const gathered = await gather(ctx, catalog, clusters, only, !values.offline);
    const inNs = (f: string) => !values.namespace || f.startsWith(`${values.namespace}/`);
    const rows = gathered.rows.filter((r) => inNs(r.feature)).sort(sort);
    const unannounced = gathered.unannounced.filter((u) => inNs(u.split(' ')[1] ?? ''));
    print(format, { features: rows, unannounced }, (wide) => [
      ...(rows.length ? listTable(rows, wide) : [noFeatures(clusters.length, values.namespace)]),
      ...(unannounced.length
        ? [`not announced yet (following their default until the reconciler runs): ${unannounced.join(', ')}`]
        : []),
    ]);
    return 0;
  });
}

function noFeatures(clusters: number, namespace: string | undefined): string {
  if (clusters === 0)
    return 'no feature records: no clusters registered (fleetscope cluster register adds one)';
  if (namespace) return `no feature records in namespace ${namespace}`;
  return 'no feature records yet: the features reconciler has not run (fleetscope run --once --capability features)';
}

async function one(ctx: CliContext, values: Flags, what: string) {
  const cluster = await registered(ctx, values.cluster, what);
  const store = new DynamoFeatureStore(ctx.db, ctx.table);
  const spec = featureOf(await loadCatalog(store), values.feature, what);
  return { cluster, spec, store };
}

async function get(values: Flags): Promise<number> {
  const format = outputFormat(values);
  return withContext(values, async (ctx) => {
    const { cluster, spec, store } = await one(ctx, values, 'get');
    const { rows } = await gather(ctx, await loadCatalog(store), [cluster], spec, !values.offline);
    const row = rows[0];
    if (!row) {
      // Not announced yet: the reconciler has not reached this cluster; its workers use the default.
      const note = { cluster, feature: refKey(spec), state: 'unannounced', default: spec.default };
      print(format, note, () => [
        `${refKey(spec)} is not announced to cluster ${cluster} yet: it follows its default (${spec.default})`,
      ]);
      return 0;
    }
    print(format, row, () => detailLines(row));
    return 0;
  });
}

const DESIRED = ['on', 'off', 'default'] as const;

async function set(values: Flags): Promise<number> {
  const desired = values.desired;
  if (!desired) throw new UsageError('set needs --desired on|off|default');
  if (!(DESIRED as readonly string[]).includes(desired))
    throw new UsageError(`--desired: "${desired}" is not one of ${DESIRED.join(', ')}`);
  return withContext(values, async (ctx) => {
    const { cluster, spec, store } = await one(ctx, values, 'set');
    const value = desired === 'default' ? undefined : (desired as Value);
    const options = values['keep-state'] ? { keepState: true } : {};
    const changes = await setDesiredInOrder(
      store,
      await loadCatalog(store),
      spec,
      cluster,
      value,
      'operator',
      options,
      Date.now(),
    );
    const { record } = changes.at(-1)!.change;
    for (const c of changes.slice(0, -1))
      if (c.change.changed)
        console.log(`${refKey(c.spec)} in ${cluster}: desired on first (${refKey(spec)} requires it)`);
    if (!changes.some((c) => c.change.changed)) {
      console.log(`${refKey(spec)} in ${cluster} is already desired ${desired} (${record.state})`);
      return 0;
    }
    await ctx.publisher.publish(
      changes
        .filter((c) => c.change.changed)
        .map((c) => ({
          detailType: 'FeatureDesiredChanged' as const,
          detail: {
            cluster,
            namespace: c.spec.namespace,
            feature: c.spec.name,
            desired: (c.spec === spec ? desired : 'on') as (typeof DESIRED)[number],
            by: c.spec === spec ? 'operator' : `requires/${refKey(spec)}`,
            ...(c.spec === spec && values['keep-state'] ? { keepState: true } : {}),
            at: new Date().toISOString(),
          },
          resources: [`cluster/${cluster}`],
        })),
    );
    await ctx.runtime?.bus.drain(); // local: the transition has started (and gone as far as it can)
    const now = (await store.view(cluster, spec)).record ?? record;
    const f = featureJson(now, []);
    console.log(`${refKey(spec)} in ${cluster}: desired ${desired}, now ${now.state}`);
    if (f.tasks[0])
      console.log(
        `  next: ${f.tasks[0].title}${f.tasks[0].waitingFor ? ` (waiting for: ${f.tasks[0].waitingFor})` : ''}`,
      );
    return 0;
  });
}

async function history(values: Flags): Promise<number> {
  const format = outputFormat(values);
  return withContext(values, async (ctx) => {
    const { cluster, spec, store } = await one(ctx, values, 'history');
    const record = await store.get(cluster, spec);
    if (!record) {
      console.log(`${refKey(spec)} is not announced to cluster ${cluster} yet: no history`);
      return 0;
    }
    const f = featureJson(record, []);
    print(
      format,
      {
        cluster,
        feature: f.feature,
        state: f.state,
        history: record.history.map(transitionJson),
        current: record.transition ? transitionJson(record.transition) : null,
      },
      () => historyLines(record),
    );
    return 0;
  });
}

async function plan(values: Flags): Promise<number> {
  const format = outputFormat(values);
  const desired = values.desired;
  if (desired !== 'on' && desired !== 'off')
    throw new UsageError(`plan needs --desired on|off${desired ? ` ("${desired}" is neither)` : ''}`);
  return withContext(values, async (ctx) => {
    const { cluster, spec, store } = await one(ctx, values, 'plan');
    const c = await registeredCluster(ctx, cluster);
    const objects = new ObjectsApi(await clusterAccess().client(cluster, c.kubeconfig));
    const table = new Table(ctx.db, ctx.table);
    const result = await planTransition(spec, cluster, await store.get(cluster, spec), finalOf(desired), {
      objects,
      items: async (prefix) =>
        (await table.query(clusterPk(cluster), { beginsWith: prefix })).map((i) => String(i[SK])),
      keepState: Boolean(values['keep-state']),
    });
    print(format, result, () => planLines(result));
    return 0;
  });
}

async function checkUpgrade(values: Flags): Promise<number> {
  const format = outputFormat(values);
  return withContext(values, async (ctx) => {
    const store = new DynamoFeatureStore(ctx.db, ctx.table);
    const catalog = await loadCatalog(store);
    const clusters = values.cluster
      ? [await registered(ctx, values.cluster, 'check-upgrade')]
      : (await ctx.registry.list()).map((c) => c.name);
    const features = [];
    for (const c of clusters)
      for (const v of (await store.clusterViews(c)).values())
        if (v.record) features.push({ record: v.record, uses: v.uses });
    const target = {
      ...(values.kubernetes ? { kubernetes: values.kubernetes } : {}),
      ...(values.fleetscope ? { fleetscope: values.fleetscope } : {}),
    };
    const blockers = upgradeBlockers(features, catalog, target);
    print(format, { target, clusters: clusters.length, blockers }, () =>
      blockers.length
        ? [
            `${blockers.length} blocker(s):`,
            ...textTable([
              ['CLUSTER', 'FEATURE', 'WHY'],
              ...blockers.map((b) => [b.cluster, b.feature, b.reason]),
            ]),
          ]
        : [`no feature blocks ${describeTarget(target)} of ${clusters.length} cluster(s)`],
    );
    return blockers.length ? 1 : 0;
  });
}

/** retry | skip | abandon a stuck transition, recorded with the caller's identity, the time and --reason. */
async function operate(values: Flags, verb: Verb): Promise<number> {
  if (!values.reason?.trim())
    throw new UsageError(`${verb} needs --reason "why" (it is kept in the history)`);
  return withContext(values, async (ctx) => {
    const { cluster, spec, store } = await one(ctx, values, verb);
    const by = await callerIdentity(ctx, values);
    let record: FeatureRecord;
    try {
      record = await actOnTransition(
        store,
        spec,
        cluster,
        { verb, reason: values.reason!, by, ...(values.task ? { task: values.task } : {}) },
        Date.now(),
      );
    } catch (err) {
      // The transition as it is refuses the verb (none in progress, another task current): exit 1.
      if (err instanceof OperatorError) throw new Error(err.message);
      throw err;
    }
    // The reconciler looks at the feature at once (the event it reacts to for any operator change).
    await ctx.publisher.publish([
      {
        detailType: 'FeatureDesiredChanged',
        detail: {
          cluster,
          namespace: spec.namespace,
          feature: spec.name,
          desired: record.desired ?? 'default',
          by: `${verb} by ${by}`.slice(0, 256),
          at: new Date().toISOString(),
        },
        resources: [`cluster/${cluster}`],
      },
    ]);
    await ctx.runtime?.bus.drain();
    const now = (await store.view(cluster, spec)).record ?? record;
    console.log(`${refKey(spec)} in ${cluster}: ${verb} recorded (by ${by}); now ${now.state}`);
    return 0;
  });
}

/** Who acts: the AWS principal (aws mode), or the local user. */
async function callerIdentity(ctx: CliContext, values: Flags): Promise<string> {
  if (ctx.mode === 'local') return `local:${userInfo().username}`;
  const sts = new STSClient(values.region ? { region: values.region } : {});
  const me = await sts.send(new GetCallerIdentityCommand({}));
  return me.Arn ?? `aws:${me.UserId ?? 'unknown'}`;
}

const describeTarget = (t: { kubernetes?: string; fleetscope?: string }) =>
  [t.kubernetes && `Kubernetes ${t.kubernetes}`, t.fleetscope && `fleetscope ${t.fleetscope}`]
    .filter(Boolean)
    .join(' and ') || 'an upgrade or downgrade';

async function reconcilerPorts(ctx: CliContext, store: FeatureStore): Promise<ReconcilerPorts> {
  return {
    store,
    catalog: await loadCatalog(store),
    tasks: dynamoTaskStores(ctx.db, ctx.table),
    id: `cli/${randomUUID().slice(0, 8)}`,
    now: Date.now,
    eager: true,
    publish: (e) => ctx.publisher.publish(e),
    warn: (m, f) => console.error(`warning: ${m} ${JSON.stringify(f)}`),
    connect: async (cluster) => {
      const c = await registeredCluster(ctx, cluster);
      return clusterAccess().client(c.name, c.kubeconfig);
    },
  };
}

interface ReconcileResult {
  cluster: string;
  features: { feature: string; state: string; waitingFor?: string; error?: string }[];
  error?: string;
}

function reconcileLines(results: ReconcileResult[]): string[] {
  return results.flatMap((r) =>
    r.features.map(
      (o) =>
        `${r.cluster} ${o.feature}: ${o.state}${o.waitingFor ? ` (waiting for: ${o.waitingFor})` : ''}${o.error ? ` (failing: ${o.error})` : ''}`,
    ),
  );
}

async function reconcile(values: Flags): Promise<number> {
  const format = outputFormat(values);
  return withContext(values, async (ctx) => {
    const store = new DynamoFeatureStore(ctx.db, ctx.table);
    const clusters = values.cluster
      ? [await registered(ctx, values.cluster, 'reconcile')]
      : (await ctx.registry.list()).map((c) => c.name);
    const ports = await reconcilerPorts(ctx, store);
    const results: ReconcileResult[] = [];
    for (const cluster of clusters) {
      try {
        const moved = (await reconcileCluster(ports, cluster)).filter(
          (o) => o.steps || o.state === 'TurningOn' || o.state === 'TurningOff',
        );
        results.push({
          cluster,
          features: moved.map((o) => ({
            feature: o.feature,
            state: o.state,
            ...(o.waitingFor ? { waitingFor: o.waitingFor } : {}),
            ...(o.error ? { error: o.error } : {}),
          })),
        });
      } catch (err) {
        results.push({ cluster, features: [], error: describeAccessError(err) });
      }
    }
    await ctx.runtime?.bus.drain();
    print(format, results, () => reconcileLines(results));
    const failing = results.flatMap((r) => [
      ...(r.error ? [`${r.cluster}: ${r.error}`] : []),
      ...r.features.filter((o) => o.error).map((o) => `${r.cluster} ${o.feature}: ${o.error}`),
    ]);
    if (!isDocument(format)) for (const line of failing) console.error(line);
    // A pass with a failing task or an unreachable cluster is 1: a cron job must not read it as done.
    return failing.length ? 1 : 0;
  });
}
