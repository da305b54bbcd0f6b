/**
 * One API server, simulated or real, behind the same small face, so one test body runs against both and
 * the simulator's answers can be compared with the real kube-apiserver's (where they differ, the
 * simulator is wrong: fix it or list it under "divergences" in local/sim/README.md).
 */
import { afterAll, beforeAll } from 'vitest';
import { startSimulator } from '../../local/sim/index.js';
import type { SimClusterSpec } from '../../local/sim/types.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import { type RawResponse, raw } from '../sim/helpers.js';
import type { RealRawOptions, RealServer } from './real-apiserver.js';

export interface ApiBackend {
  /** `simulator 1.36.2` or `kube-apiserver v1.36.2`. */
  name: string;
  /** One request as the cluster admin. */
  raw(method: string, path: string, opts?: Omit<RealRawOptions, 'user' | 'groups'>): Promise<RawResponse>;
  /** fleetscope's own client, as the cluster admin. */
  client(): Promise<ClusterClient>;
  /** Waits until a CRD is Established (the simulator serves one at once; a real server shortly after). */
  established(crd: string): Promise<void>;
  stop(): Promise<void>;
}

/** fleetscope's client on a kubeconfig's context, named alike for both backends (errors name it). */
const clientOf = (kubeconfig: string, context: string) =>
  ClusterClient.fromKubeconfig(kubeconfig, { cluster: 'under-test', context, retry: { maxAttempts: 1 } });

/** The real server of a describeRealApiserver suite, as a backend (stopping it is the suite's). */
export function realBackend(server: RealServer): ApiBackend {
  const clients: ClusterClient[] = [];
  return {
    get name() {
      return `kube-apiserver ${server.api().version}`;
    },
    raw: (method, path, opts) => server.raw(method, path, opts),
    client: async () => {
      const c = clientOf(server.api().adminKubeconfig, 'envtest');
      clients.push(c);
      return c;
    },
    established: (crd) => server.established(crd),
    stop: async () => {
      for (const c of clients) await c.close();
    },
  };
}

/**
 * A simulated cluster of the same version as `like` (`v1.36.2`), like a bare kube-apiserver (no nodes,
 * no controllers: no default ServiceAccount, no scheduler or kubelet) unless `spec` says otherwise.
 */
export async function simBackend(like: string, spec: Partial<SimClusterSpec> = {}): Promise<ApiBackend> {
  const kubernetesVersion = like.replace(/^v/, '');
  const sim = await startSimulator({
    clusters: [{ name: 'mirror', nodes: 0, controllers: false, kubernetesVersion, ...spec }],
  });
  const cluster = sim.cluster('mirror');
  const clients: ClusterClient[] = [];
  return {
    name: `simulator ${kubernetesVersion}`,
    raw: (method, path, opts) => raw(cluster, method, path, opts),
    client: async () => {
      const c = clientOf(await cluster.kubeconfigFor({ token: cluster.token }), 'mirror');
      clients.push(c);
      return c;
    },
    established: async () => {},
    stop: async () => {
      for (const c of clients) await c.close();
      await sim.stop();
    },
  };
}

/** What one scenario recorded on each backend: `real` and `sim`, filled in beforeAll. */
export type BothRecords = Map<'real' | 'sim', Record<string, unknown>>;

/**
 * Runs `scenario` once on the real server and once on a bare simulator of its version, in the suite's
 * beforeAll, and stops both after it; the suite's tests read what each recorded.
 */
export function onBothBackends(
  server: RealServer,
  scenario: (api: ApiBackend) => Promise<Record<string, unknown>>,
): BothRecords {
  const records: BothRecords = new Map();
  let real: ApiBackend | undefined;
  let sim: ApiBackend | undefined;
  beforeAll(async () => {
    real = realBackend(server);
    sim = await simBackend(server.api().version);
    records.set('real', await scenario(real));
    records.set('sim', await scenario(sim));
  }, 120_000);
  afterAll(async () => {
    await real?.stop();
    await sim?.stop();
  });
  return records;
}
