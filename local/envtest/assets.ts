/**
 * Where the real Kubernetes binaries are, in the spirit of envtest's KUBEBUILDER_ASSETS: one variable,
 * FLEETSCOPE_KUBE_ASSETS, names a directory holding `kube-apiserver-vX.Y.Z` binaries, and for a whole
 * cluster `kube-scheduler-`, `kube-controller-manager-` and `kubemark-vX.Y.Z` of the same version (or
 * the same compressed as `.xz`, decompressed once into a cache beside the project); etcd is taken from
 * that directory or, failing that, from PATH (Debian's `etcd-server` package).
 */
import { execFileSync } from 'node:child_process';
import { accessSync, chmodSync, constants, existsSync, mkdirSync, readdirSync, renameSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';

export const ASSETS_ENV = 'FLEETSCOPE_KUBE_ASSETS';

export interface KubeAssets {
  /** The etcd binary. */
  etcd: string;
  /** kube-apiserver binaries by version (`1.36.2`), newest first. */
  apiservers: ReadonlyMap<string, string>;
  /** The rest of a control plane and the hollow nodes, by version, where all three are there. */
  clusters: ReadonlyMap<string, ClusterBinaries>;
}

export interface ClusterBinaries {
  scheduler: string;
  controllerManager: string;
  /** kubemark, whose `--morph=kubelet` is the real kubelet over a fake runtime (a hollow node). */
  kubemark: string;
}

export type AssetsLookup = { ok: true; assets: KubeAssets } | { ok: false; why: string };

const BINARY = /^(kube-apiserver|kube-scheduler|kube-controller-manager|kubemark)-v(\d+\.\d+\.\d+)(\.xz)?$/;
type Component = 'kube-apiserver' | 'kube-scheduler' | 'kube-controller-manager' | 'kubemark';
const CACHE = resolve(import.meta.dirname, '../../node_modules/.cache/fleetscope-kube-assets');

/** The assets the environment names, or why there are none (a sentence a person can act on). */
export function findKubeAssets(env: NodeJS.ProcessEnv = process.env): AssetsLookup {
  const dir = env[ASSETS_ENV];
  if (!dir) return { ok: false, why: `${ASSETS_ENV} is not set` };
  if (!existsSync(dir)) return { ok: false, why: `${ASSETS_ENV}=${dir} does not exist` };
  const etcd = executable(join(dir, 'etcd')) ?? onPath('etcd', env.PATH ?? '');
  if (!etcd) return { ok: false, why: `no etcd in ${dir} or on PATH (apt-get install etcd-server)` };
  const found = new Map<Component, Map<string, string>>();
  for (const name of readdirSync(dir).sort(byVersionDesc)) {
    const m = BINARY.exec(name);
    const [component, version] = [m?.[1] as Component, m?.[2]];
    if (!m || !version) continue;
    const byVersion = found.get(component) ?? new Map<string, string>();
    found.set(component, byVersion);
    if (byVersion.has(version)) continue;
    byVersion.set(version, join(dir, name));
  }
  const apiservers = resolved(found.get('kube-apiserver'), 'kube-apiserver');
  if (apiservers.size === 0)
    return { ok: false, why: `no kube-apiserver-vX.Y.Z[.xz] in ${ASSETS_ENV}=${dir}` };
  const clusters = new Map<string, ClusterBinaries>();
  for (const version of apiservers.keys()) {
    const [s, c, k] = (['kube-scheduler', 'kube-controller-manager', 'kubemark'] as const).map((n) =>
      found.get(n)?.get(version),
    );
    if (s && c && k)
      clusters.set(version, {
        scheduler: usable(s, `kube-scheduler-v${version}`),
        controllerManager: usable(c, `kube-controller-manager-v${version}`),
        kubemark: usable(k, `kubemark-v${version}`),
      });
  }
  return { ok: true, assets: { etcd, apiservers, clusters } };
}

function resolved(files: Map<string, string> | undefined, component: Component): Map<string, string> {
  const out = new Map<string, string>();
  for (const [version, file] of files ?? []) out.set(version, usable(file, `${component}-v${version}`));
  return out;
}

/** The binary itself, or its decompressed copy in the cache. */
function usable(file: string, name: string): string {
  return file.endsWith('.xz') ? decompressed(file, name) : file;
}

/** The binary for a version given as `1.36` or `1.36.2`. */
export function apiserverFor(assets: KubeAssets, version: string): string | undefined {
  for (const [v, path] of assets.apiservers) if (v === version || v.startsWith(`${version}.`)) return path;
  return undefined;
}

function decompressed(xzFile: string, name: string): string {
  const out = join(CACHE, name);
  if (existsSync(out)) return out;
  mkdirSync(CACHE, { recursive: true });
  const partial = `${out}.${process.pid}.partial`;
  // xz is in every Debian base image; a partial file renamed into place keeps parallel workers safe.
  execFileSync('sh', ['-c', 'xz -dc "$1" > "$2"', 'xz', xzFile, partial]);
  chmodSync(partial, 0o755);
  renameSync(partial, out);
  return out;
}

function executable(path: string): string | undefined {
  try {
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    return undefined;
  }
}

function onPath(name: string, path: string): string | undefined {
  for (const dir of path.split(delimiter)) {
    const found = dir && executable(join(dir, name));
    if (found) return found;
  }
  return undefined;
}

function byVersionDesc(a: string, b: string): number {
  return b.localeCompare(a, 'en', { numeric: true });
}
