/**
 * The capability suites' environment on a real kube-apiserver: the simulated nodes of
 * local/sim/real/ (what `fleetscope sim --apiserver` runs) under the server, dynalite for the state,
 * a client for the capability code as in the simulator suites.
 */
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.js';
import { ManualClock } from '../../local/sim/clock.js';
import { LOAD_ANNOTATION } from '../../local/sim/daemonsets.js';
import { type SimulatedNodes, startSimulatedNodes } from '../../local/sim/real/index.js';
import type { LoadProfile } from '../../local/sim/workload.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import { type CycleResult, runCycle } from '../../shared/nodescope/cycle.js';
import { DynamoNodeScopeStore } from '../../shared/nodescope/store-dynamo.js';
import type { RealServer } from '../support/real-apiserver.js';

export interface RealEnv {
  nodes: SimulatedNodes;
  client: ClusterClient;
  runtime: LocalRuntime;
  clock: ManualClock;
  stop(): Promise<void>;
}

/** A whole minute near now: the server stamps objects with real time, the simulated clock starts there. */
const startOfMinute = (ms: number) => ms - (ms % 60_000);

export async function startRealEnv(server: RealServer, cluster: string, nodeCount: number): Promise<RealEnv> {
  const kubeconfig = server.api().adminKubeconfig;
  const clock = new ManualClock(startOfMinute(Date.now()));
  const nodes = await startSimulatedNodes({ kubeconfig, nodes: nodeCount, name: cluster, clock });
  const runtime = await startLocalRuntime({ retryDelayMs: 5 });
  const client = ClusterClient.fromKubeconfig(kubeconfig, { cluster });
  return {
    nodes,
    client,
    runtime,
    clock,
    async stop() {
      await client.close();
      await runtime.stop();
      await nodes.stop();
    },
  };
}

/** Creates a CRD and waits until the server serves it. */
export async function installCrd(client: ClusterClient, crd: Record<string, unknown>): Promise<void> {
  const name = (crd.metadata as { name: string }).name;
  await client.apiextensions.createCustomResourceDefinition({ body: crd as never });
  for (let i = 0; i < 300; i++) {
    const got = await client.apiextensions.readCustomResourceDefinition({ name });
    if (got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`CRD ${name} was not Established in 30 s`);
}

/** The agent DaemonSet the node scope suites size: `collector` (and, with `shipper`, a second container). */
export async function createAgentDaemonSet(
  env: RealEnv,
  namespace: string,
  load: LoadProfile,
  opts: { shipper?: boolean } = {},
): Promise<void> {
  const image = 'registry.k8s.io/pause:3.10';
  const containers = [
    {
      name: 'collector',
      image,
      resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '1Gi' } },
    },
    ...(opts.shipper
      ? [{ name: 'shipper', image, resources: { requests: { cpu: '50m', memory: '64Mi' } } }]
      : []),
  ];
  await env.client.apps.createNamespacedDaemonSet({
    namespace,
    body: {
      metadata: { name: 'agent', annotations: { [LOAD_ANNOTATION]: JSON.stringify(load) } },
      spec: {
        selector: { matchLabels: { app: 'agent' } },
        template: { metadata: { labels: { app: 'agent' } }, spec: { containers } },
      },
    },
  });
}

const MINUTE = 60_000;

/**
 * Node scope's cycle `count` times, 15 simulated minutes apart, as `client` (the admin's or a role's),
 * each between passes of the simulated nodes; then a minute in which the kubelets actuate what the last
 * cycle asked for.
 */
export async function runNodeScopeCycles(
  env: RealEnv,
  cluster: string,
  count: number,
  client: ClusterClient = env.client,
): Promise<CycleResult[]> {
  const store = new DynamoNodeScopeStore(env.runtime.db, env.runtime.table);
  const results: CycleResult[] = [];
  for (let i = 0; i < count; i++) {
    env.clock.advance(15 * MINUTE);
    await env.nodes.sync();
    const at = new Date(env.clock.now()).toISOString();
    const now = () => env.clock.now();
    results.push(
      await runCycle({
        cluster,
        cycleId: `nodescope/${at}`,
        cycleKey: at,
        client,
        store,
        now,
        keepRecommendations: true,
      }),
    );
    await env.nodes.sync();
  }
  env.clock.advance(MINUTE);
  await env.nodes.sync();
  return results;
}
