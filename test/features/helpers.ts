/**
 * Feature transitions over the simulator and the local runtime: clusters registered with a kubeconfig
 * file (so the real worker handlers reach them), the reconciler driven on the simulator's clock, and the
 * writes each step sends to a cluster counted from the simulator's own request log.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LocalRuntime, REPO_ROOT, startLocalRuntime } from '../../local/runtime.js';
import { type SimClusterSpec, startSimulator } from '../../local/sim/index.js';
import { type FeatureCatalog, loadCatalog } from '../../shared/features/catalog.js';
import { DynamoClusterState } from '../../shared/features/cluster-state-dynamo.js';
import { danglingOf } from '../../shared/features/dangling.js';
import { parseDeclarations } from '../../shared/features/declaration.js';
import { setDesired } from '../../shared/features/desired.js';
import { setFeatureClock } from '../../shared/features/gate.js';
import { FeatureMirror } from '../../shared/features/mirror.js';
import {
  type FeatureRecord,
  type FeatureRef,
  finalOf,
  refKey,
  targetOf,
} from '../../shared/features/model.js';
import { ObjectsApi } from '../../shared/features/objects.js';
import {
  type FeatureOutcome,
  type ReconcilerPorts,
  reconcileCluster,
  type StepMark,
} from '../../shared/features/reconciler.js';
import type { RolloutPorts } from '../../shared/features/rollout-runner.js';
import { DynamoRolloutStore } from '../../shared/features/rollout-store-dynamo.js';
import type { FeatureSpec } from '../../shared/features/spec.js';
import { DynamoFeatureStore } from '../../shared/features/store-dynamo.js';
import { dynamoTaskStores } from '../../shared/features/task-stores-dynamo.js';
import { resetClusterConnector } from '../../shared/fleet/cluster-access.js';
import type { Registry } from '../../shared/fleet/registry.js';
import { DynamoRegistry } from '../../shared/fleet/registry-dynamo.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import { setNodeScopeClock } from '../../shared/nodescope/clock.js';
import { SK } from '../../shared/platform/dynamo.js';

export const START = Date.UTC(2026, 10, 2, 0, 0, 0);
export const MINUTE = 60_000;
export type Sim = Awaited<ReturnType<typeof startSimulator>>;

export interface FeatureEnv {
  sim: Sim;
  runtime: LocalRuntime;
  store: DynamoFeatureStore;
  registry: Registry;
  client(cluster: string): ClusterClient;
  now(): number;
  /** Moves the clock on (over a real cluster, also lets real time pass for its controllers). */
  advance(ms: number): Promise<void>;
  catalog(): Promise<FeatureCatalog>;
  /** Reconciler ports on the simulator's clock (a new reconciler id each call unless given). */
  ports(opts?: Partial<ReconcilerPorts>): Promise<ReconcilerPorts>;
  reconcile(cluster: string, only?: FeatureRef, opts?: Partial<ReconcilerPorts>): Promise<FeatureOutcome[]>;
  set(
    cluster: string,
    feature: FeatureRef,
    desired: 'on' | 'off' | undefined,
    keepState?: boolean,
  ): Promise<void>;
  /** Invokes a worker's handler as Lambda would (a fresh event id each time). */
  invoke(functionId: string, detailType: string, detail: Record<string, unknown>): Promise<unknown>;
  /** One cluster cycle (node scope, then balloons) through the real worker. */
  cycle(cluster: string): Promise<unknown>;
  /** One claims drift check through the real worker. */
  claimsCheck(cluster: string): Promise<unknown>;
  /** Adds a cluster to the simulator and registers it (the workers see it at once). */
  addCluster(spec: SimClusterSpec, labels?: Record<string, string>): Promise<void>;
  /** Requests other than reads the cluster served since it started (writes of any kind). */
  writes(cluster: string): number;
  stop(): Promise<void>;
}

/** What the features' components and the reconciler need of an env: no simulator (a real cluster has one too). */
export type WorkerEnv = Omit<FeatureEnv, 'sim' | 'addCluster' | 'writes' | 'stop'>;

export async function startFeatureEnv(clusters: SimClusterSpec[]): Promise<FeatureEnv> {
  const sim = await startSimulator({ clusters, now: START });
  const runtime = await startLocalRuntime({ retryDelayMs: 5 });
  const dir = await mkdtemp(join(tmpdir(), 'fleetscope-features-'));
  const path = join(dir, 'kubeconfig.yaml');
  await sim.writeKubeconfig(path);
  const registry = new DynamoRegistry(runtime.db, runtime.table);
  const register = (name: string, labels: Record<string, string>) =>
    registry.add({
      name,
      kubeconfig: { kind: 'file', path, context: name },
      labels,
      registeredAt: new Date(START).toISOString(),
    });
  for (const c of clusters) await register(c.name, { index: String(clusters.indexOf(c)) });
  const now = () => sim.clock.now();
  setNodeScopeClock(now);
  setFeatureClock(now);
  const settle = process.env.FLEETSCOPE_BALLOONS_SETTLE_MS;
  process.env.FLEETSCOPE_BALLOONS_SETTLE_MS = '0';
  const clients = new Map<string, ClusterClient>();
  const client = (name: string) => {
    let c = clients.get(name);
    if (!c) {
      c = ClusterClient.fromKubeconfig(sim.kubeconfig(), {
        cluster: name,
        context: name,
        retry: { maxAttempts: 1 },
      });
      clients.set(name, c);
    }
    return c;
  };
  const env: FeatureEnv = {
    ...workerEnv({ runtime, registry, client, now, advance: async (ms) => sim.clock.advance(ms) }),
    sim,
    async addCluster(spec, labels = {}) {
      await sim.addCluster(spec);
      await sim.writeKubeconfig(path);
      await resetClusterConnector(); // the workers' connector cached the file without the new context
      await register(spec.name, labels);
    },
    writes(cluster) {
      const s = sim.cluster(cluster).stats();
      return s.total - (s.byMethod.GET ?? 0);
    },
    async stop() {
      setNodeScopeClock();
      setFeatureClock();
      if (settle === undefined) delete process.env.FLEETSCOPE_BALLOONS_SETTLE_MS;
      else process.env.FLEETSCOPE_BALLOONS_SETTLE_MS = settle;
      for (const c of clients.values()) await c.close();
      await resetClusterConnector();
      await runtime.stop();
      await sim.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return env;
}

/**
 * The reconciler and the real workers over the local runtime, reaching clusters through `client`
 * (the simulator's or a real cluster's), on the clock `now` that `advance` moves.
 */
export function workerEnv(parts: {
  runtime: LocalRuntime;
  registry: Registry;
  client(cluster: string): ClusterClient;
  now(): number;
  advance(ms: number): Promise<void>;
}): WorkerEnv {
  const { runtime, registry, client, now, advance } = parts;
  const store = new DynamoFeatureStore(runtime.db, runtime.table);
  const env: WorkerEnv = {
    runtime,
    store,
    registry,
    client,
    now,
    advance,
    catalog: () => loadCatalog(store),
    async ports(opts = {}) {
      return {
        store,
        catalog: await loadCatalog(store),
        connect: async (name) => client(name),
        tasks: dynamoTaskStores(runtime.db, runtime.table),
        now,
        id: `test/${randomUUID().slice(0, 6)}`,
        publish: async () => {},
        ...opts,
      };
    },
    async reconcile(cluster, only, opts) {
      return reconcileCluster(await env.ports(opts), cluster, only);
    },
    async set(cluster, feature, desired, keepState) {
      const spec = (await env.catalog()).need(feature);
      await setDesired(store, spec, cluster, desired, 'test', keepState ? { keepState: true } : {}, now());
    },
    // The worker, then whatever its events started (a use reported mid-transition reconciles at once).
    invoke: async (functionId, detailType, detail) => {
      const out = await runtime.invoker.invoke(functionId, {
        version: '0',
        id: randomUUID(),
        'detail-type': detailType,
        source: 'fleetscope',
        account: '000000000000',
        time: new Date(now()).toISOString(),
        region: 'us-east-1',
        resources: [],
        detail,
      });
      await runtime.bus.drain();
      return out;
    },
    cycle: (cluster) =>
      env.invoke('cycle', 'ClusterWorkRequested', {
        cluster,
        capability: 'cycle',
        cycleId: `cycle/${new Date(now()).toISOString()}`,
        requestedAt: new Date(now()).toISOString(),
      }),
    claimsCheck: (cluster) =>
      env.invoke('claims', 'ClusterWorkRequested', {
        cluster,
        capability: 'claims',
        cycleId: `claims/${new Date(now()).toISOString()}`,
        requestedAt: new Date(now()).toISOString(),
      }),
  };
  return env;
}

export interface DriveOptions {
  /** Components checking in between passes (the workers that report uses). */
  between?: () => Promise<unknown>;
  /** Reconciler options for every pass (mirror off, a crash hook, ...). */
  ports?: Partial<ReconcilerPorts>;
  /** Called with each pass's error (a crash); the pass after it is a new reconciler. Default: rethrow. */
  onError?: (err: unknown) => void;
  maxPasses?: number;
}

/**
 * Reconciles until the feature is stable in its target state, advancing the clock to whenever the
 * first task may go on (its back-off, poll, wait or a lapsed claim) and letting components check in.
 */
export async function drive(
  env: WorkerEnv,
  cluster: string,
  ref: FeatureRef,
  opts: DriveOptions = {},
): Promise<FeatureRecord> {
  for (let pass = 0; pass < (opts.maxPasses ?? 40); pass++) {
    try {
      await env.reconcile(cluster, ref, opts.ports);
    } catch (err) {
      if (!opts.onError) throw err;
      opts.onError(err);
    }
    const r = (await env.store.get(cluster, ref))!;
    if (r.state === finalOf(targetOf(r))) return r;
    const t = r.tasks[0];
    const until = Math.max(t?.notBefore ?? 0, t?.claim?.until ?? 0);
    await env.advance(Math.max(until - env.now(), 1000));
    await opts.between?.();
  }
  const r = await env.store.get(cluster, ref);
  throw new Error(`${cluster} ${ref.name} did not settle: ${JSON.stringify(r?.tasks[0] ?? r?.state)}`);
}

/** What dangles for the feature in the cluster (live: objects, uses, state, leftovers). */
export async function dangling(env: WorkerEnv, cluster: string, ref: FeatureRef): Promise<string[]> {
  const spec = (await env.catalog()).need(ref);
  const view = await env.store.view(cluster, ref);
  const api = new ObjectsApi(env.client(cluster));
  return danglingOf(
    spec,
    ref,
    view.uses,
    {
      cluster,
      state: new DynamoClusterState(env.runtime.db, env.runtime.table),
      client: async () => env.client(cluster),
      objects: async () => api,
    },
    { live: true },
  );
}

/** Records every stored step; `crashAt` throws at the n-th (0-based), as a reconciler dying there. */
export function stepRecorder(crashAt?: number) {
  const marks: StepMark[] = [];
  return {
    marks,
    onStep: (m: StepMark) => {
      marks.push(m);
      if (marks.length - 1 === crashAt)
        throw new Crash(`crash after step ${crashAt}: ${m.step} ${m.task ?? ''}`);
    },
  };
}

export class Crash extends Error {
  override name = 'Crash';
}

export const BALLOONS = { namespace: 'fleetscope-system', name: 'balloons' };
export const NODESCOPE = { namespace: 'fleetscope-system', name: 'nodescope' };
export const CLAIMS = { namespace: 'fleetscope-system', name: 'claims' };

/**
 * The example widgets feature (waits cut to 0 s) declared for a rollout over `clusters`: its namespace
 * in each, each reported reachable by inventory (a cluster without that word is not healthy to a
 * rollout), `perCluster` for what a test adds; returns the rollout ports.
 */
export async function widgetsRolloutFleet(
  env: FeatureEnv,
  clusters: readonly string[],
  perCluster: (cluster: string) => void = () => {},
): Promise<RolloutPorts> {
  const text = await readFile(join(REPO_ROOT, 'examples', 'widgets-feature.yaml'), 'utf8');
  const [widgets] = parseDeclarations(text.replace(/Seconds: 60/g, 'Seconds: 0'), 'widgets.yaml');
  await env.store.putDeclaration({ ...widgets!, registeredAt: env.now() });
  for (const c of clusters) {
    await env.client(c).core.createNamespace({ body: { metadata: { name: 'widgets' } } });
    perCluster(c);
    await env.registry.putStatus({
      cluster: c,
      reachable: true,
      metricsApi: 'available',
      observedAt: new Date(env.now()).toISOString(),
    });
  }
  return {
    rollouts: new DynamoRolloutStore(env.runtime.db, env.runtime.table),
    store: env.store,
    catalog: await env.catalog(),
    registry: env.registry,
    now: env.now,
  };
}

/** Items of the platform, not of a feature: they outlive every feature. */
export const PLATFORM_ITEMS = [/^feature#/, /^META$/, /^STATUS$/];

/** The state the other registered features keep (still on in the cluster; their own runs check it). */
export function othersState(registered: readonly FeatureSpec[], spec: FeatureSpec): RegExp[] {
  return registered
    .filter((o) => refKey(o) !== refKey(spec))
    .flatMap((o) => o.disable.flatMap((t) => (t.task === 'clear-state' ? t.prefixes : [])))
    .map((p) => new RegExp(`^${p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
}

/** The components reporting it on: in fleetscope's records and in the cluster's Feature object. */
export async function usesOn(env: WorkerEnv, cluster: string, spec: FeatureSpec): Promise<string[]> {
  return [
    ...(await env.store.view(cluster, spec)).uses,
    ...(await new FeatureMirror(new ObjectsApi(env.client(cluster))).readUses(spec)),
  ]
    .filter((u) => u.value === 'on')
    .map((u) => u.component);
}

/** The sort keys of every item stored for the cluster. */
export async function itemKeys(env: WorkerEnv, cluster: string): Promise<Set<string>> {
  return new Set((await env.store.table.query(`CLUSTER#${cluster}`, undefined)).map((i) => String(i[SK])));
}
