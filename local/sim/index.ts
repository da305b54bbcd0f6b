/**
 * The Kubernetes API simulator: a fleet of simulated clusters, each served over HTTPS on its own
 * loopback port with a per-simulator CA and a bearer token, faithful to a real kube-apiserver where
 * fleetscope depends on it (see the modules of this directory and test/sim for the recorded fidelity).
 *
 * Version note: the recorded exchanges are from 1.32.13, where a resize sets `status.resize:
 * "Proposed"`; by default the simulator models 1.35 (resize GA; PodResizePending/PodResizeInProgress
 * conditions, allocatedResources, pod generation). `kubernetesVersion: '1.32.13'` reproduces the
 * recording; 1.33 and 1.34 get their own differences (features in cluster.ts).
 */

import { writeFile } from 'node:fs/promises';
import { createCertificates, type SimCertificates } from './certs.js';
import { ManualClock } from './clock.js';
import { ClusterState } from './cluster.js';
import { Faults } from './faults.js';
import { sha256 } from './ids.js';
import type { Json } from './json.js';
import { kubeconfigYaml } from './kubeconfig.js';
import { validateLags } from './lags.js';
import { addNode, removeNode, setNodeCapacity } from './node-admin.js';
import { Recorder } from './recorder.js';
import { collectionId } from './registry.js';
import { objectKey } from './rest.js';
import { ClusterServer } from './server.js';
import { Stats } from './stats.js';
import type { SimCluster, SimClusterSpec, SimStore, Simulator, StartOptions } from './types.js';

export { clusterClaimCrd, clusterPropertyCrd } from '../../shared/claims/crd.js';
export { vpaCheckpointCrd, vpaCrd } from '../../shared/kernel/crds/vpa.js';
export { LOAD_ANNOTATION } from './daemonsets.js';
export type {
  Fault,
  FaultInjector,
  FaultRule,
  LoadProfile,
  RequestKind,
  RequestStats,
  ResourceRef,
  SimClock,
  SimCluster,
  SimClusterSpec,
  SimDaemonSetSpec,
  SimNodeCapacity,
  SimNodeSpec,
  SimStore,
  Simulator,
  StartOptions,
} from './types.js';

interface Entry {
  public: SimCluster;
  state: ClusterState;
  server: ClusterServer;
}

class SimulatorImpl implements Simulator {
  private readonly entries: Entry[] = [];
  readonly faults = new Faults();
  private stopped = false;

  constructor(
    readonly clock: ManualClock,
    private readonly certs: SimCertificates,
    private readonly host: string,
    private readonly basePort: number | undefined,
  ) {
    clock.onChange((now) => {
      for (const e of this.entries) {
        e.state.onClock(now);
        e.state.settle();
      }
    });
  }

  get clusters(): SimCluster[] {
    return this.entries.map((e) => e.public);
  }

  cluster(name: string): SimCluster {
    const e = this.entries.find((x) => x.public.name === name);
    if (!e)
      throw new Error(
        `no simulated cluster named ${JSON.stringify(name)} (have: ${this.entries.map((x) => x.public.name).join(', ')})`,
      );
    return e.public;
  }

  /** The internal state of a cluster, for tests that need to look behind the API. */
  state(name: string): ClusterState {
    const e = this.entries.find((x) => x.public.name === name);
    if (!e) throw new Error(`no simulated cluster named ${JSON.stringify(name)}`);
    return e.state;
  }

  kubeconfig(): string {
    return kubeconfigYaml(
      this.entries.map((e) => ({
        name: e.public.name,
        server: e.public.server,
        caPem: this.certs.caPem,
        token: e.public.token,
      })),
    );
  }

  async writeKubeconfig(path: string): Promise<void> {
    await writeFile(path, this.kubeconfig(), { mode: 0o600 });
  }

  async addCluster(spec: SimClusterSpec): Promise<SimCluster> {
    if (this.stopped) throw new Error('the simulator is stopped');
    validateSpec(spec);
    if (this.entries.some((e) => e.public.name === spec.name))
      throw new Error(`cluster ${JSON.stringify(spec.name)} already exists`);
    const state = new ClusterState(spec, this.clock);
    state.bootstrap(this.certs.caPem);
    const stats = new Stats();
    // A token of its own per cluster, stable for a name and seed.
    const token =
      spec.token ??
      `sim-${sha256('token', spec.name, spec.seed ?? 1)
        .toString('base64url')
        .slice(0, 40)}`;
    const server = new ClusterServer({
      cluster: state,
      token,
      caPem: this.certs.caPem,
      certPem: this.certs.certPem,
      keyPem: this.certs.keyPem,
      host: this.host,
      port: this.basePort === undefined ? 0 : this.basePort + this.entries.length,
      faults: this.faults,
      stats,
      recorder: Recorder.fromEnv(spec.name, state.version.semver, state.store, {
        resize: state.features.resize,
      }),
      clock: this.clock,
      onClock: () => {
        /* the clock's listeners already ran every kubelet */
      },
    });
    const url = await server.start();
    const pub = this.handleOf(spec.name, state, url, token, stats, server);
    this.entries.push({ public: pub, state, server });
    return pub;
  }

  /** What a test or the local runtime holds of a running cluster: its address, credentials and controls. */
  private handleOf(
    name: string,
    state: ClusterState,
    url: string,
    token: string,
    stats: Stats,
    server: ClusterServer,
  ): SimCluster {
    return {
      name,
      server: url,
      caData: this.certs.caPem,
      token,
      kubeSystemUid: state.kubeSystemUid,
      kubernetesVersion: state.version.semver,
      stats: () => stats.snapshot(),
      resetStats: () => stats.reset(),
      connections: () => server.connections(),
      store: storeFacade(state),
      kubeconfigFor: async (credentials) => {
        const entry = { name, server: url, caPem: this.certs.caPem };
        if ('token' in credentials) return kubeconfigYaml([{ ...entry, token: credentials.token }]);
        const client = await this.certs.issueClient(credentials.user, credentials.groups ?? []);
        return kubeconfigYaml([{ ...entry, client }]);
      },
      addNode: (node) => addNode(state, node),
      removeNode: (nodeName) => removeNode(state, nodeName),
      setNodeCapacity: (nodeName, capacity) => setNodeCapacity(state, nodeName, capacity),
    };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.entries.map((e) => e.server.stop()));
  }
}

function validateSpec(spec: SimClusterSpec): void {
  if (!spec || typeof spec.name !== 'string' || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(spec.name))
    throw new Error(`cluster name ${JSON.stringify(spec?.name)} must be a DNS label`);
  if (!Number.isInteger(spec.nodes) || spec.nodes < 0 || spec.nodes > 100_000)
    throw new Error(`cluster ${spec.name}: nodes must be an integer from 0 to 100000`);
  if (spec.metricsApi && !['available', 'absent', 'unavailable'].includes(spec.metricsApi))
    throw new Error(`cluster ${spec.name}: metricsApi must be available, absent or unavailable`);
  validateLags(spec.name, spec.lags);
}

function storeFacade(state: ClusterState): SimStore {
  const keyOf = (ref: string, name: string, namespace?: string) => {
    const def = state.lookup(ref);
    return { def, coll: collectionId(def), key: objectKey(def.namespaced ? namespace : undefined, name) };
  };
  return {
    get(resource, name, namespace) {
      const { coll, key } = keyOf(resource, name, namespace);
      return state.store.get(coll, key);
    },
    list(resource, namespace) {
      const def = state.lookup(resource);
      const c = state.store.collection(collectionId(def));
      const prefix = namespace && def.namespaced ? `${namespace}/` : '';
      return c
        .keys()
        .filter((k) => k.startsWith(prefix))
        .map((k) => c.get(k));
    },
    put(resource, obj: Json) {
      const { def, coll, key } = keyOf(resource, obj?.metadata?.name, obj?.metadata?.namespace);
      const existing = state.store.get(coll, key);
      const o = structuredClone(obj);
      o.kind ??= def.kind;
      o.apiVersion ??= def.group ? `${def.group}/${def.storageVersion}` : def.storageVersion;
      o.metadata = { ...o.metadata };
      if (existing) {
        o.metadata.uid ??= existing.metadata.uid;
        o.metadata.creationTimestamp ??= existing.metadata.creationTimestamp;
      }
      // Every object of a type with a generation has one on a real server, seeded or not.
      if (state.hasGeneration(def)) o.metadata.generation ??= existing?.metadata.generation ?? 1;
      const s = state.strategy(def);
      const stored = state.internalWrite(coll, key, s.normalize ? s.normalize(o) : o);
      state.settle();
      return stored;
    },
    delete(resource, name, namespace) {
      const { coll, key } = keyOf(resource, name, namespace);
      const existed = state.store.get(coll, key) !== undefined;
      state.internalDelete(coll, key);
      state.settle();
      return existed;
    },
  };
}

/** Starts a simulator with the given clusters; stop() closes every server. */
export async function startSimulator(
  opts: StartOptions,
): Promise<Simulator & { state(name: string): ClusterState }> {
  const names = new Set<string>();
  for (const c of opts.clusters) {
    if (names.has(c.name)) throw new Error(`duplicate cluster name ${JSON.stringify(c.name)}`);
    names.add(c.name);
  }
  const host = opts.host ?? '127.0.0.1';
  const certs = await createCertificates(host === '127.0.0.1' || host === 'localhost' ? [] : [host]);
  const sim = new SimulatorImpl(new ManualClock(opts.now ?? Date.now()), certs, host, opts.basePort);
  try {
    for (const spec of opts.clusters) await sim.addCluster(spec);
  } catch (err) {
    await sim.stop();
    throw err;
  }
  return sim;
}
