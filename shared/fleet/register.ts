import type { KubeconfigRef } from '../k8s/kubeconfig-ref.js';
import type { EventPublisher } from '../platform/publisher.js';
import { clusterNameProblem, labelProblem, type RegisteredCluster } from './cluster.js';
import type { RegistryStore } from './registry-store.js';

export class RegistrationError extends Error {
  override name = 'RegistrationError';
}

export interface RegistrationPorts {
  store: RegistryStore;
  publisher: EventPublisher;
  /** Loads the kubeconfig and reaches the cluster; throws an error that says what is wrong. */
  verify: (name: string, ref: KubeconfigRef) => Promise<void>;
  /** Where a failed notification is reported: the registration itself stands. */
  warn?: (message: string) => void;
}

/**
 * Registers a cluster: every check runs before the single conditional write, so invalid input, an
 * unreadable kubeconfig or an unreachable cluster leave nothing behind.
 */
export async function registerCluster(
  input: { name: string; kubeconfig: KubeconfigRef; labels?: Record<string, string> },
  ports: RegistrationPorts,
  now = new Date(),
): Promise<RegisteredCluster> {
  const nameProblem = clusterNameProblem(input.name);
  if (nameProblem) throw new RegistrationError(nameProblem);
  const labels = input.labels ?? {};
  for (const [k, v] of Object.entries(labels)) {
    const problem = labelProblem(k, v);
    if (problem) throw new RegistrationError(problem);
  }
  if (await ports.store.get(input.name)) {
    throw new RegistrationError(`cluster "${input.name}" is already registered`);
  }
  await ports.verify(input.name, input.kubeconfig);
  const cluster: RegisteredCluster = {
    name: input.name,
    kubeconfig: input.kubeconfig,
    labels,
    registeredAt: now.toISOString(),
  };
  await ports.store.add(cluster);
  await notify(ports, {
    detailType: 'ClusterRegistered',
    detail: { cluster: cluster.name, labels, registeredAt: cluster.registeredAt },
    resources: [`cluster/${cluster.name}`],
  });
  return cluster;
}

export async function deregisterCluster(
  name: string,
  ports: Omit<RegistrationPorts, 'verify'>,
  now = new Date(),
) {
  await ports.store.remove(name);
  await notify(ports, {
    detailType: 'ClusterDeregistered',
    detail: { cluster: name, deregisteredAt: now.toISOString() },
    resources: [`cluster/${name}`],
  });
}

// The registry is the source of truth and the next scheduled cycle picks the cluster up anyway, so a
// lost notification is reported rather than undoing a registration that succeeded.
async function notify(
  ports: Omit<RegistrationPorts, 'verify'>,
  event: Parameters<EventPublisher['publish']>[0][0],
) {
  try {
    await ports.publisher.publish([event]);
  } catch (err) {
    ports.warn?.(
      `could not publish ${event.detailType}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}
