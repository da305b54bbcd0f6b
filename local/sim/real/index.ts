/**
 * Simulated nodes against a real kube-apiserver, as kwok does: the simulator's nodes, kubelets,
 * scheduler, DaemonSet controller, namespace defaults and metrics-server run in this process on the
 * server's objects, and every decision is written to the server through its API (Node objects and
 * status, pods/binding, pod and DaemonSet status, pod creates and deletes), which judges each write.
 * The decision code is the simulator's own (cluster.ts and the modules it drives); only where its
 * writes go differs (writes.ts) and where its objects come from (mirror.ts).
 *
 * One pass (`sync()`): send the queued writes, read the server's objects, let the controllers react,
 * until nothing changes. Tests call it between steps; `intervalMs` also runs it in the background.
 */
import { ClusterClient } from '../../../shared/k8s/client.js';
import { ManualClock } from '../clock.js';
import { ClusterState } from '../cluster.js';
import type { JsonObject } from '../json.js';
import { setNodeCapacity } from '../node-admin.js';
import { buildNode, nodeShape } from '../nodes.js';
import type { SimNodeCapacity } from '../types.js';
import { type RealApi, realApi, statusOf } from './api.js';
import { serveMetricsApi } from './metrics-api.js';
import { ApiMirror, SIMULATED_NODE_LABEL } from './mirror.js';
import { Passes } from './passes.js';
import { RealApiWrites, RemoteVersions } from './writes.js';

export { SIMULATED_NODE_LABEL } from './mirror.js';

export interface SimulatedNodesOptions {
  /** A kubeconfig for the real apiserver, for a user allowed what a kubelet, scheduler and controllers do. */
  kubeconfig: string;
  context?: string;
  /** Seeds the node shapes and names (as a simulated cluster's name does). */
  name?: string;
  nodes: number;
  seed?: number;
  /** The simulated clock (metrics, load profiles, resize actuation); by default one set to now. */
  clock?: ManualClock;
  /** Serve metrics.k8s.io through the aggregator (default true). */
  metrics?: boolean;
  /** Also run a pass every this many wall-clock milliseconds (default 0: only when sync() is called). */
  intervalMs?: number;
  /** Told of each write the server refused or that failed (a message without credentials). */
  onProblem?: (message: string) => void;
}

export interface SimulatedNodes {
  cluster: ClusterState;
  clock: ManualClock;
  /** The server's version (`v1.36.2`): the simulated kubelets behave as that version's. */
  version: string;
  /** The server's URL. */
  server: string;
  nodeNames: string[];
  metricsPort?: number;
  /** New capacity for a simulated node (hotplug, a VM resized): its kubelet reports it at the next pass. */
  setNodeCapacity(node: string, change: SimNodeCapacity): void;
  /** Runs passes until the server and the simulated components agree. */
  sync(): Promise<void>;
  /** Writes the server refused or that failed, newest last. */
  problems(): readonly string[];
  stop(): Promise<void>;
}

export async function startSimulatedNodes(opts: SimulatedNodesOptions): Promise<SimulatedNodes> {
  const name = opts.name ?? 'real';
  const client = ClusterClient.fromKubeconfig(opts.kubeconfig, { cluster: name, context: opts.context });
  const stops: (() => Promise<void>)[] = [() => client.close()];
  const stop = async () => {
    for (const s of stops.reverse()) await s();
  };
  try {
    const api = realApi(client);
    const version = (await api.get<{ gitVersion: string }>('/version')).gitVersion;
    const clock = opts.clock ?? new ManualClock(Date.now());
    const cluster = new ClusterState(
      { name, nodes: opts.nodes, seed: opts.seed, kubernetesVersion: version },
      clock,
    );
    const versions = new RemoteVersions();
    const writes = new RealApiWrites(cluster, api, versions, opts.onProblem);
    cluster.mirrorRealApiserver(writes, caPemOf(client), opts.nodes);
    clock.onChange((now) => {
      cluster.onClock(now);
      cluster.settle();
    });
    const nodeNames = await registerNodes(cluster, api, opts.nodes);
    const passes = new Passes(
      cluster,
      writes,
      new ApiMirror(cluster, api, versions, (c, k) => writes.queued(c, k)),
    );
    stops.push(() => passes.stop());
    await passes.sync();
    const metrics = opts.metrics === false ? undefined : await serveMetricsApi(cluster, api);
    if (metrics) stops.push(() => metrics.stop());
    if (opts.intervalMs) passes.every(opts.intervalMs);
    return {
      cluster,
      clock,
      version,
      server: client.server,
      nodeNames,
      metricsPort: metrics?.port,
      setNodeCapacity(node, change) {
        setNodeCapacity(cluster, node, change);
        cluster.settle();
      },
      sync: () => passes.sync(),
      problems: () => writes.problems,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Creates the Node objects as their kubelets register them (status included), unless present. */
async function registerNodes(cluster: ClusterState, api: RealApi, count: number): Promise<string[]> {
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    const node = buildNode(cluster, nodeShape(cluster, i), cluster.clock.now());
    const { uid: _u, resourceVersion: _rv, creationTimestamp: _c, ...metadata } = node.metadata;
    metadata.labels = { ...metadata.labels, [SIMULATED_NODE_LABEL]: 'true' };
    const body: JsonObject = { ...node, metadata };
    names.push(metadata.name);
    try {
      await api.send('POST', '/api/v1/nodes', body);
    } catch (err) {
      if (statusOf(err) !== 409) throw err;
    }
    // The status a kubelet reports right after registering (a create may drop it).
    const current = await api.get<JsonObject>(`/api/v1/nodes/${encodeURIComponent(metadata.name)}`);
    if (!current.status?.allocatable)
      await api.send('PUT', `/api/v1/nodes/${encodeURIComponent(metadata.name)}/status`, {
        ...current,
        status: node.status,
      });
  }
  return names;
}

/** The cluster CA from the kubeconfig (published in each namespace's kube-root-ca.crt). */
function caPemOf(client: ClusterClient): string {
  const c = client.kubeConfig.getCurrentCluster();
  if (c?.caData) return Buffer.from(c.caData, 'base64').toString('utf8');
  return '';
}
