/**
 * metrics.k8s.io for a real cluster whose nodes are hollow (kubemark reports no usage): the
 * simulator's metrics-server, as `fleetscope sim --apiserver` serves it through the real aggregator
 * (local/sim/real/metrics-api.ts), over a read-only copy of the server's nodes, pods and DaemonSets.
 * Usage comes from the load profiles (LOAD_ANNOTATION on a DaemonSet) at `clock`'s time; no simulated
 * controller or kubelet runs, and nothing is written to the server but the APIService and its Service.
 */

import { ClusterClient } from '../../shared/k8s/client.js';
import { ManualClock } from '../sim/clock.js';
import { ClusterState } from '../sim/cluster.js';
import { realApi } from '../sim/real/api.js';
import { serveMetricsApi } from '../sim/real/metrics-api.js';
import { ApiMirror } from '../sim/real/mirror.js';
import { RemoteVersions } from '../sim/real/writes.js';

export interface ClusterMetrics {
  /** The clock the usage is computed at (tests advance it; the real components keep wall time). */
  clock: ManualClock;
  port: number;
  /** Reads the server's objects again, so the next answer covers pods created since. */
  refresh(): Promise<void>;
  stop(): Promise<void>;
}

/** Reads every `refreshMs` in the background too (default 1 s), one read at a time. */
export async function serveClusterMetrics(
  kubeconfig: string,
  opts: { clock?: ManualClock; refreshMs?: number; seed?: number } = {},
): Promise<ClusterMetrics> {
  const client = ClusterClient.fromKubeconfig(kubeconfig, { cluster: 'envtest-metrics' });
  const api = realApi(client);
  const version = (await api.get<{ gitVersion: string }>('/version')).gitVersion;
  const clock = opts.clock ?? new ManualClock(Date.now());
  const cluster = new ClusterState(
    { name: 'envtest', nodes: 0, seed: opts.seed, kubernetesVersion: version, controllers: false },
    clock,
  );
  const mirror = new ApiMirror(cluster, api, new RemoteVersions(), () => false, 'all');
  let chain: Promise<unknown> = Promise.resolve();
  const refresh = () => {
    const next = chain.then(async () => {
      await mirror.read();
      cluster.settle();
    });
    chain = next.catch(() => undefined);
    return next;
  };
  try {
    await refresh();
    const served = await serveMetricsApi(cluster, api);
    let busy = false;
    const timer = setInterval(() => {
      if (busy) return;
      busy = true;
      // A failed background read is retried on the next tick; refresh() reports its own.
      refresh()
        .catch(() => undefined)
        .finally(() => {
          busy = false;
        });
    }, opts.refreshMs ?? 1000);
    return {
      clock,
      port: served.port,
      refresh,
      async stop() {
        clearInterval(timer);
        await chain;
        await served.stop();
        await client.close();
      },
    };
  } catch (err) {
    await client.close();
    throw err;
  }
}
