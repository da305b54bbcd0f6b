import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.js';
import { type SimClusterSpec, type SimDaemonSetSpec, startSimulator } from '../../local/sim/index.js';
import type { PodView } from '../../shared/cycle/views.js';
import { DynamoRegistry } from '../../shared/fleet/registry-dynamo.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import { type CycleResult, runCycle } from '../../shared/nodescope/cycle.js';
import type { NodeScopeSettings } from '../../shared/nodescope/settings.js';
import type { DsHead, NodeScopeStore, StoredLog } from '../../shared/nodescope/store.js';
import { DynamoNodeScopeStore } from '../../shared/nodescope/store-dynamo.js';

export const VPA_RESOURCE = 'verticalpodautoscalers.autoscaling.k8s.io';
export const START = Date.UTC(2026, 10, 2, 0, 0, 0);
export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;

export type Sim = Awaited<ReturnType<typeof startSimulator>>;

export function agentDaemonSet(over: Partial<SimDaemonSetSpec> = {}): SimDaemonSetSpec {
  return {
    name: 'agent',
    namespace: 'monitoring',
    containers: [
      { name: 'collector', requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '1Gi' } },
      { name: 'shipper', requests: { cpu: '50m', memory: '64Mi' } },
    ],
    load: {
      cpu: 100,
      memory: '96Mi',
      perNode: 'heterogeneous',
      perNodeRange: [0.25, 4],
      containers: { shipper: { cpu: 40, memory: '48Mi' } },
      noise: 0.05,
    },
    ...over,
  };
}

export function vpaObject(opts: {
  name?: string;
  namespace?: string;
  target?: { kind: string; name: string; apiVersion?: string };
  mode?: string;
  via?: 'annotation' | 'spec';
  policies?: object[];
}): Record<string, unknown> {
  const via = opts.via ?? 'annotation';
  return {
    apiVersion: 'autoscaling.k8s.io/v1',
    kind: 'VerticalPodAutoscaler',
    metadata: {
      name: opts.name ?? 'agent',
      namespace: opts.namespace ?? 'monitoring',
      ...(via === 'annotation' ? { annotations: { 'fleetscope.io/scope': 'node' } } : {}),
    },
    spec: {
      targetRef: opts.target ?? { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent' },
      ...(via === 'spec' ? { scope: 'node' } : {}),
      updatePolicy: { updateMode: opts.mode ?? 'Off' },
      ...(opts.policies ? { resourcePolicy: { containerPolicies: opts.policies } } : {}),
    },
  };
}

export interface Env {
  sim: Sim;
  runtime: LocalRuntime;
  store: NodeScopeStore;
  clients: Map<string, ClusterClient>;
  stop(): Promise<void>;
}

export async function startEnv(clusters: SimClusterSpec[]): Promise<Env> {
  const sim = await startSimulator({ clusters, now: START });
  const runtime = await startLocalRuntime({ retryDelayMs: 5 });
  const store = new DynamoNodeScopeStore(runtime.db, runtime.table);
  const clients = new Map<string, ClusterClient>();
  const kubeconfig = sim.kubeconfig();
  for (const c of sim.clusters)
    clients.set(c.name, ClusterClient.fromKubeconfig(kubeconfig, { cluster: c.name, context: c.name }));
  return {
    sim,
    runtime,
    store,
    clients,
    async stop() {
      for (const c of clients.values()) await c.close();
      await runtime.stop();
      await sim.stop();
    },
  };
}

/** Advances the simulated clock by `stepMs`, then runs one cycle of the cluster at that time. */
export async function cycle(
  env: Env,
  cluster: string,
  stepMs = 5 * MINUTE,
  settings?: Partial<NodeScopeSettings>,
  store: NodeScopeStore = env.store,
): Promise<CycleResult> {
  env.sim.clock.advance(stepMs);
  const at = new Date(env.sim.clock.now()).toISOString();
  const client = env.clients.get(cluster);
  if (!client) throw new Error(`no client for ${cluster}`);
  return runCycle({
    cluster,
    cycleId: `nodescope/${at}`,
    cycleKey: at,
    client,
    store,
    settings,
    now: () => env.sim.clock.now(),
  });
}

export function requestsOf(env: Env, cluster: string) {
  return env.sim.cluster(cluster).stats();
}

/** A running pod's view as the cycle builds it (shared/cycle/views.ts), with the fields a test sets. */
export function runningPodView(over: Partial<PodView> & Pick<PodView, 'containers'>): PodView {
  return {
    name: 'p',
    namespace: 'ns',
    uid: 'u',
    node: 'n',
    phase: 'Running',
    terminating: false,
    balloon: false,
    resize: { state: 'none' },
    ...over,
  };
}

/** Registers a simulated cluster in the runtime's registry, reached by a kubeconfig file's context of its name. */
export async function registerFileCluster(
  runtime: Pick<LocalRuntime, 'db' | 'table'>,
  name: string,
  path: string,
  registeredAt = new Date(),
): Promise<void> {
  await new DynamoRegistry(runtime.db, runtime.table).add({
    name,
    kubeconfig: { kind: 'file', path, context: name },
    labels: {},
    registeredAt: registeredAt.toISOString(),
  });
}

/**
 * A store that runs `between` (once, when set) right after whichever read of a DaemonSet's heads or logs
 * comes first: another invocation's fold lands between a reader's head read and its log read, in
 * whatever order the reader makes them (the cycle lists every head and log; the CLI's views get one).
 */
export class RacedStore extends DynamoNodeScopeStore {
  between: (() => Promise<void>) | undefined;
  /** Only after this read (by method name), when set: e.g. between a head read and its base's chunks. */
  after: string | undefined;
  ran = 0;
  private async race(read: string): Promise<void> {
    const run = this.between;
    if (!run || (this.after && this.after !== read)) return;
    this.between = undefined;
    this.ran++;
    await run();
  }
  private async raced<T>(read: string, result: Promise<T>): Promise<T> {
    const out = await result;
    await this.race(read);
    return out;
  }
  override listHeads(cluster: string): Promise<DsHead[]> {
    return this.raced('listHeads', super.listHeads(cluster));
  }
  override listClusterLogs(cluster: string): Promise<Map<string, StoredLog[]>> {
    return this.raced('listClusterLogs', super.listClusterLogs(cluster));
  }
  override getHead(cluster: string, ds: string): Promise<DsHead | undefined> {
    return this.raced('getHead', super.getHead(cluster, ds));
  }
  override listLogs(cluster: string, ds: string, after: string): Promise<StoredLog[]> {
    return this.raced('listLogs', super.listLogs(cluster, ds, after));
  }
}
