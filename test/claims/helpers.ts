/** A simulated fleet (HTTPS API servers) wired to the local runtime (dynalite, bus, real handlers). */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.js';
import { type SimClusterSpec, type Simulator, startSimulator } from '../../local/sim/index.js';
import { CLUSTER_PROPERTY, OCM_CLUSTER_CLAIM } from '../../shared/claims/crd.js';
import type { ClaimsPorts } from '../../shared/claims/membership.js';
import type { ClaimStore } from '../../shared/claims/store.js';
import { DynamoClaimStore } from '../../shared/claims/store-dynamo.js';
import { clusterAccess, resetClusterConnector } from '../../shared/fleet/cluster-access.js';
import { registerCluster } from '../../shared/fleet/register.js';
import type { Registry } from '../../shared/fleet/registry.js';
import { DynamoRegistry } from '../../shared/fleet/registry-dynamo.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import type { KubeconfigRef } from '../../shared/k8s/kubeconfig-ref.js';
import { deps } from '../../shared/platform/deps.js';

export interface Fleet {
  sim: Simulator;
  runtime: LocalRuntime;
  kubeconfigPath: string;
  store: ClaimStore;
  registry: Registry;
  ports: ClaimsPorts;
  ref(name: string): KubeconfigRef;
  /** A client of our own (not the handlers'), to look at a cluster through its API. */
  client(name: string): ClusterClient;
  register(name: string): Promise<void>;
  /** ClusterProperty objects by name -> value, read through the API. */
  properties(name: string, version?: string): Promise<Record<string, string>>;
  ocmClaims(name: string): Promise<Record<string, string>>;
  stop(): Promise<void>;
}

export async function startFleet(specs: SimClusterSpec[]): Promise<Fleet> {
  const dir = await mkdtemp(join(tmpdir(), 'fleetscope-claims-'));
  const sim = await startSimulator({ clusters: specs });
  const kubeconfigPath = join(dir, 'kubeconfig.yaml');
  await sim.writeKubeconfig(kubeconfigPath);
  const runtime = await startLocalRuntime({ retryDelayMs: 5 });
  const store = new DynamoClaimStore(runtime.db, runtime.table);
  const registry = new DynamoRegistry(runtime.db, runtime.table);
  const clients = new Map<string, ClusterClient>();
  const kubeconfig = sim.kubeconfig();
  const client = (name: string) => {
    let c = clients.get(name);
    if (!c) {
      c = ClusterClient.fromKubeconfig(kubeconfig, {
        cluster: name,
        context: name,
        retry: { maxAttempts: 1 },
      });
      clients.set(name, c);
    }
    return c;
  };
  const list = async (name: string, resource: { group: string; plural: string }, version: string) => {
    const c = client(name);
    const items = await c.listAll<{ metadata: { name: string }; spec: { value: string } }>(
      'test list',
      (page) =>
        c.custom.listClusterCustomObject({
          group: resource.group,
          version,
          plural: resource.plural,
          ...page,
        }),
    );
    return Object.fromEntries(items.map((o) => [o.metadata.name, o.spec.value]));
  };
  const fleet: Fleet = {
    sim,
    runtime,
    kubeconfigPath,
    store,
    registry,
    ports: { store, registry, publisher: deps().publisher },
    ref: (name) => ({ kind: 'file', path: kubeconfigPath, context: name }),
    client,
    async register(name) {
      const access = clusterAccess();
      await registerCluster(
        { name, kubeconfig: fleet.ref(name) },
        { store: registry, publisher: deps().publisher, verify: (n, r) => access.verify(n, r) },
      );
      await runtime.bus.drain();
    },
    properties: (name, version = 'v1beta1') => list(name, CLUSTER_PROPERTY, version),
    ocmClaims: (name) => list(name, OCM_CLUSTER_CLAIM, 'v1alpha1'),
    async stop() {
      for (const c of clients.values()) await c.close();
      await resetClusterConnector();
      await runtime.stop();
      await sim.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return fleet;
}

/** Events of one detail-type put on the local bus so far. */
export function busEvents<T = Record<string, unknown>>(runtime: LocalRuntime, detailType: string): T[] {
  return runtime.bus.log.filter((e) => e.detailType === detailType).map((e) => e.detail as T);
}
