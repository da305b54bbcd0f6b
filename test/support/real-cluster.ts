/**
 * A whole real cluster per suite (local/envtest/cluster.ts): etcd, kube-apiserver, kube-controller-manager,
 * kube-scheduler and kubemark hollow nodes (the real kubelet over a fake runtime), 1.36, on loopback.
 *
 * ```ts
 * import { describeRealCluster } from '../support/real-cluster.js';
 *
 * describeRealCluster('balloons end to end', { nodes: [
 *   { name: 'small-a', cpus: 2, memory: '2Gi', labels: { pool: 'a' } },
 *   { name: 'small-b', cpus: 2, memory: '2Gi', taints: ['dedicated=x:NoSchedule'], maxPods: 20 },
 * ] }, (k) => {
 *   it('...', async () => {
 *     const client = k.client();                 // ClusterClient (shared/k8s) as the admin
 *     await k.kubeconfig();                      // the admin kubeconfig text (for fleetscope code)
 *     const pod = await k.waitForPod('ns', 'p', (p) => p.status?.phase === 'Running');
 *     await k.waitForPodCondition('ns', 'p', 'PodResizePending', 'True');
 *     const events = await k.events('ns');      // what the real components recorded
 *     const raw = await k.raw('GET', '/api/v1/namespaces/ns/pods/p'); // 1.36 fields as JSON
 *     k.cluster().metrics?.clock.advance(60_000); // metrics.k8s.io is the simulator's (see below)
 *   });
 * });
 * ```
 *
 * Started once in beforeAll (nodes Ready, untainted; `default` ServiceAccount there), stopped in
 * afterAll; every process is a process group killed also when the worker exits, is signalled or is
 * killed (local/envtest/processes.ts). Each namespace a test creates gets its `default` ServiceAccount
 * from the real controller-manager within a second or two: `k.namespace(name)` creates one and waits.
 * Hollow nodes report no usage, so metrics.k8s.io is the simulator's metrics-server (usage from the
 * DaemonSets' LOAD_ANNOTATION at `metrics.clock`'s time) through the real aggregator.
 * Without FLEETSCOPE_KUBE_ASSETS (or its scheduler, controller-manager and kubemark) the suite is
 * skipped with one line; with CI=true it fails instead. Logs: `<cluster().api.dir>/<component>.log`.
 */
import type { CoreV1Event, V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll } from 'vitest';
import { ASSETS_ENV, findKubeAssets } from '../../local/envtest/assets.js';
import { type ClusterOptions, type RealCluster, startRealCluster } from '../../local/envtest/cluster.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import type { RawResponse } from '../sim/helpers.js';
import { describeNeeding } from './needs-tool.js';
import { rawRequest } from './real-apiserver.js';

export interface ClusterHandle {
  cluster(): RealCluster;
  /** The admin's client (one per suite, closed in afterAll). */
  client(): ClusterClient;
  kubeconfig(): string;
  /** One HTTP request as the admin; JSON bodies parsed (fields client-node's models drop kept). */
  raw(method: string, path: string, body?: unknown, contentType?: string): Promise<RawResponse>;
  /** Creates a namespace and waits for its `default` ServiceAccount (pods are refused before it). */
  namespace(name: string): Promise<void>;
  /** Polls until `check` returns a value other than undefined/false; fails naming `what`. */
  waitFor<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs?: number): Promise<T>;
  /** Polls a pod (read as raw JSON, 1.36 fields included) until `ok` holds. */
  waitForPod(
    namespace: string,
    name: string,
    ok: (pod: V1Pod) => boolean,
    timeoutMs?: number,
  ): Promise<V1Pod>;
  /** Until the pod has condition `type` with `status` (and `reason`, when given). */
  waitForPodCondition(
    namespace: string,
    name: string,
    type: string,
    status: 'True' | 'False',
    reason?: string,
    timeoutMs?: number,
  ): Promise<V1Pod>;
  /** Until every node (default: all of the cluster's) is Ready. */
  waitNodesReady(names?: string[], timeoutMs?: number): Promise<void>;
  /** Events in a namespace (or all), oldest first; `reason` filters. */
  events(namespace?: string, reason?: string): Promise<CoreV1Event[]>;
}

const lookup = findKubeAssets();

export function describeRealCluster(
  name: string,
  opts: ClusterOptions,
  fn: (k: ClusterHandle) => void,
): void {
  const missing = !lookup.ok
    ? lookup.why
    : lookup.assets.clusters.size === 0
      ? `${ASSETS_ENV} has no kube-scheduler, kube-controller-manager and kubemark of one version`
      : undefined;
  const need = {
    tool: 'a real cluster (kube-apiserver, scheduler, controller-manager, kubemark)',
    missing,
    enable: `set ${ASSETS_ENV} to ../shared/k8s (.ci/run installs etcd-server and sets it)`,
  };
  describeNeeding(need, `${name} (real cluster)`, () => {
    if (!lookup.ok) return;
    const { assets } = lookup;
    let cluster: RealCluster | undefined;
    let client: ClusterClient | undefined;
    beforeAll(async () => {
      cluster = await startRealCluster(assets, opts);
      client = ClusterClient.fromKubeconfig(cluster.adminKubeconfig, { cluster: 'envtest' });
    }, 240_000);
    afterAll(async () => {
      await client?.close();
      await cluster?.stop();
    }, 90_000);
    fn(
      handle(
        () => cluster,
        () => client,
      ),
    );
  });
}

function handle(
  getCluster: () => RealCluster | undefined,
  getClient: () => ClusterClient | undefined,
): ClusterHandle {
  const cluster = () => {
    const c = getCluster();
    if (!c) throw new Error('the real cluster did not start (see beforeAll)');
    return c;
  };
  const client = () => {
    const c = getClient();
    if (!c) throw new Error('the real cluster did not start (see beforeAll)');
    return c;
  };
  const raw = (method: string, path: string, body?: unknown, contentType?: string) =>
    rawRequest(client().kubeConfig, method, path, { body, contentType });
  const waitFor = async <T>(
    what: string,
    check: () => Promise<T | undefined | false>,
    timeoutMs = 60_000,
  ) => {
    const deadline = Date.now() + timeoutMs;
    let lastError = '';
    for (;;) {
      try {
        const v = await check();
        if (v !== undefined && v !== false) return v;
      } catch (e) {
        lastError = `: ${(e as Error).message}`;
      }
      if (Date.now() > deadline)
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  const readPod = async (namespace: string, name: string): Promise<V1Pod | undefined> => {
    const r = await raw('GET', `/api/v1/namespaces/${namespace}/pods/${name}`);
    return r.status === 200 ? (r.json as V1Pod) : undefined;
  };
  const waitForPod = (namespace: string, name: string, ok: (pod: V1Pod) => boolean, timeoutMs?: number) =>
    waitFor(
      `pod ${namespace}/${name}`,
      async () => {
        const pod = await readPod(namespace, name);
        return pod && ok(pod) ? pod : undefined;
      },
      timeoutMs,
    );
  return {
    cluster,
    client,
    kubeconfig: () => cluster().adminKubeconfig,
    raw,
    async namespace(name) {
      await client().core.createNamespace({ body: { metadata: { name } } });
      await waitFor(`the default ServiceAccount of ${name}`, () =>
        client()
          .core.readNamespacedServiceAccount({ name: 'default', namespace: name })
          .then(() => true),
      );
    },
    waitFor,
    waitForPod,
    waitForPodCondition: (namespace, name, type, status, reason, timeoutMs) =>
      waitForPod(
        namespace,
        name,
        (p) =>
          (p.status?.conditions ?? []).some(
            (c) => c.type === type && c.status === status && (reason === undefined || c.reason === reason),
          ),
        timeoutMs,
      ),
    async waitNodesReady(names, timeoutMs) {
      const want = names ?? cluster().nodeNames;
      await waitFor(
        `nodes ${want.join(', ')} Ready`,
        async () => {
          const nodes = (await client().core.listNode()).items;
          return want.every((n) =>
            nodes
              .find((x) => x.metadata?.name === n)
              ?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
          );
        },
        timeoutMs,
      );
    },
    async events(namespace, reason) {
      const list = namespace
        ? await client().core.listNamespacedEvent({ namespace })
        : await client().core.listEventForAllNamespaces();
      const time = (e: CoreV1Event) =>
        Date.parse(String(e.lastTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp ?? 0));
      return list.items
        .filter((e) => reason === undefined || e.reason === reason)
        .sort((a, b) => time(a) - time(b));
    },
  };
}
