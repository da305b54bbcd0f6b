/**
 * Suites against a real kube-apiserver (local/envtest): one server per suite and version, started in
 * beforeAll and stopped in afterAll. Without FLEETSCOPE_KUBE_ASSETS a developer's run skips them with one
 * line saying how to enable them; under CI=true a missing server fails the run instead of hiding it.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe } from 'vitest';
import { type RealApiserver, type StartOptions, startRealApiserver } from '../../local/envtest/apiserver.js';
import { ASSETS_ENV, findKubeAssets } from '../../local/envtest/assets.js';
import { describeNeeding } from './needs-tool.js';

/** The supported versions the shipped binaries cover, oldest first; each real suite runs on all of them. */
export const REAL_VERSIONS = ['1.33', '1.36'] as const;

const lookup = findKubeAssets();

export interface RealServer {
  api(): RealApiserver;
  /** A KubeConfig for the admin, or for a user judged by RBAC. */
  kubeConfig(user?: string, groups?: string[]): Promise<KubeConfig>;
}

/**
 * `describe` once per version in `versions`, each with its own server. `fn` registers the suite's tests
 * and reaches the server through the handle (valid once beforeAll has run).
 */
export function describeRealApiserver(
  name: string,
  fn: (server: RealServer, version: string) => void,
  opts: { versions?: readonly string[]; start?: Omit<StartOptions, 'version'> } = {},
): void {
  if (!lookup.ok) {
    const enable = `set ${ASSETS_ENV} to a directory of kube-apiserver binaries (.ci/run installs etcd-server and sets it)`;
    describeNeeding({ tool: 'a real kube-apiserver', missing: lookup.why, enable }, name, () => {});
    return;
  }
  const { assets } = lookup;
  for (const version of opts.versions ?? REAL_VERSIONS) {
    describe(`${name} (real kube-apiserver ${version})`, () => {
      let api: RealApiserver | undefined;
      beforeAll(async () => {
        api = await startRealApiserver(assets, { ...opts.start, version });
      }, 180_000);
      afterAll(async () => {
        await api?.stop();
      }, 60_000);
      const handle = (): RealApiserver => {
        if (!api) throw new Error('the real kube-apiserver did not start (see beforeAll)');
        return api;
      };
      fn(
        {
          api: handle,
          kubeConfig: async (user, groups) => {
            const kc = new KubeConfig();
            kc.loadFromString(user ? await handle().kubeconfigFor(user, groups) : handle().adminKubeconfig);
            return kc;
          },
        },
        version,
      );
    });
  }
}
