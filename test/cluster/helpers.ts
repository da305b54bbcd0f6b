/**
 * What the capability suites on a whole real cluster share: dynalite for fleetscope's state, the
 * metrics clock (the real components keep wall time; usage follows this clock), and a wait for the real
 * kubelets to finish what a cycle asked of them.
 */
import type { V1DaemonSet, V1Pod } from '@kubernetes/client-node';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.js';
import type { ManualClock } from '../../local/sim/clock.js';
import { LOAD_ANNOTATION } from '../../local/sim/daemonsets.js';
import type { LoadProfile } from '../../local/sim/workload.js';
import type { ClusterClient } from '../../shared/k8s/client.js';
import type { ClusterHandle } from '../support/real-cluster.js';

export interface CycleEnv {
  client: ClusterClient;
  runtime: LocalRuntime;
  clock: ManualClock;
  stop(): Promise<void>;
}

export async function startCycleEnv(k: ClusterHandle): Promise<CycleEnv> {
  const metrics = k.cluster().metrics;
  if (!metrics) throw new Error('the capability suites need the harness to serve metrics');
  const runtime = await startLocalRuntime({ retryDelayMs: 5 });
  return { client: k.client(), runtime, clock: metrics.clock, stop: () => runtime.stop() };
}

/** Whether a kubelet has seen the pod's latest spec and has no resize in progress. */
export function resizeSettled(pod: V1Pod): boolean {
  const raw = pod as V1Pod & { status?: { observedGeneration?: number } };
  if ((raw.status?.observedGeneration ?? 0) < (pod.metadata?.generation ?? 0)) return false;
  return !(pod.status?.conditions ?? []).some((c) => c.type === 'PodResizeInProgress');
}

/** Pods as raw JSON (client-node's models drop 1.36's status.observedGeneration). */
export async function rawPods(k: ClusterHandle, namespace: string, selector: string): Promise<V1Pod[]> {
  const r = await k.raw(
    'GET',
    `/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(selector)}`,
  );
  if (r.status !== 200) throw new Error(`listing pods ${selector} in ${namespace}: ${r.status} ${r.text}`);
  return (r.json?.items ?? []) as V1Pod[];
}

export const PAUSE = 'registry.k8s.io/pause:3.10';

/** The user's agent DaemonSet in `monitoring` (one `collector`), its usage per node from `load`. */
export function agentDaemonSet(load: LoadProfile): V1DaemonSet {
  return {
    metadata: { name: 'agent', annotations: { [LOAD_ANNOTATION]: JSON.stringify(load) } },
    spec: {
      selector: { matchLabels: { app: 'agent' } },
      template: {
        metadata: { labels: { app: 'agent' } },
        spec: {
          // No memory limit: a hollow node cannot lower one (no memory usage to check against).
          containers: [
            { name: 'collector', image: PAUSE, resources: { requests: { cpu: '100m', memory: '128Mi' } } },
          ],
        },
      },
    },
  };
}
