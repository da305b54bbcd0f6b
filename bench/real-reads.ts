/**
 * The reads on a real kube-apiserver (BENCH_ONLY=real): to come. Skipped, with its reason, without the
 * real binaries (FLEETSCOPE_KUBE_ASSETS and etcd).
 */
import { findKubeAssets } from '../local/envtest/assets.js';

export async function realReadsBench(): Promise<string | undefined> {
  const found = findKubeAssets();
  if (!found.ok)
    return `${found.why} (the real kube-apiserver of ../shared/k8s: FLEETSCOPE_KUBE_ASSETS=/work/shared/k8s)`;
  return 'not built yet';
}
