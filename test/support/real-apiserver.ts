/**
 * Suites against a real kube-apiserver (local/envtest): one server per suite and version, started in
 * beforeAll and stopped in afterAll. Without FLEETSCOPE_KUBE_ASSETS a developer's run skips them with one
 * line saying how to enable them; under CI=true a missing server fails the run instead of hiding it.
 */
import { type RequestOptions, request } from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, vi } from 'vitest';
import { type RealApiserver, type StartOptions, startRealApiserver } from '../../local/envtest/apiserver.js';
import { ASSETS_ENV, findKubeAssets } from '../../local/envtest/assets.js';
import type { RawResponse } from '../sim/helpers.js';
import { describeNeeding } from './needs-tool.js';

/**
 * The versions a real suite runs on by default: 1.36, inside the supported range (1.35-1.37), keeps
 * `npm test` within CI's budget. `FLEETSCOPE_REAL_VERSIONS=1.33,1.36` runs every suite on both binaries.
 */
export const REAL_VERSIONS: readonly string[] = (process.env.FLEETSCOPE_REAL_VERSIONS ?? '1.36')
  .split(',')
  .map((v) => v.trim())
  .filter(Boolean);

/**
 * Both shipped binaries, oldest first: the suites whose subject changes between versions (resize
 * subresource and its outcomes, admission of resizes, protobuf, watch cache, the simulator's fidelity
 * per version) always run on each.
 */
export const SKEW_VERSIONS: readonly string[] = ['1.33', '1.36'];

const lookup = findKubeAssets();

export interface RealServer {
  api(): RealApiserver;
  /** A KubeConfig for the admin, or for a user judged by RBAC. */
  kubeConfig(user?: string, groups?: string[]): Promise<KubeConfig>;
  /** One HTTP request as the admin, or as `opts.user` (a client certificate judged by RBAC). */
  raw(method: string, path: string, opts?: RealRawOptions): Promise<RawResponse>;
  /** Waits until the CRD `name` is Established (served), as a client must before using it. */
  established(name: string): Promise<void>;
}

export interface RealRawOptions {
  body?: unknown;
  contentType?: string;
  user?: string;
  groups?: string[];
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
      const kubeConfig = async (user?: string, groups?: string[]) => {
        const kc = new KubeConfig();
        kc.loadFromString(user ? await handle().kubeconfigFor(user, groups) : handle().adminKubeconfig);
        return kc;
      };
      const raw = async (method: string, path: string, o: RealRawOptions = {}) =>
        rawRequest(await kubeConfig(o.user, o.groups), method, path, o);
      const established = (crd: string) =>
        vi.waitFor(
          async () => {
            const r = await raw('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd}`);
            const conditions: { type: string; status: string }[] = r.json?.status?.conditions ?? [];
            if (!conditions.some((c) => c.type === 'Established' && c.status === 'True'))
              throw new Error(`CRD ${crd} is not Established: ${r.status} ${JSON.stringify(conditions)}`);
          },
          { timeout: 30_000, interval: 100 },
        );
      fn({ api: handle, kubeConfig, raw, established }, version);
    });
  }
}

/** One request through the kubeconfig's TLS and client certificate; the JSON body parsed when it is JSON. */
export async function rawRequest(
  kc: KubeConfig,
  method: string,
  path: string,
  o: RealRawOptions,
): Promise<RawResponse> {
  const url = new URL(path, kc.getCurrentCluster()?.server);
  const body = o.body === undefined ? undefined : JSON.stringify(o.body);
  const options: RequestOptions = {
    method,
    headers: {
      Accept: 'application/json',
      ...(body === undefined ? {} : { 'Content-Type': o.contentType ?? 'application/json' }),
    },
  };
  await kc.applyToHTTPSOptions(options);
  return new Promise((resolve, reject) => {
    const req = request(url, options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {}
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}
