/**
 * The kubelet's refusal to lower a container's memory limit below what it uses (1.34+, where the
 * apiserver lets a limit go down in place): the resize stays in PodResizeInProgress with reason Error
 * and this message, as the real kubelet words it ("cannot decrease memory limits: attempting to set
 * container "x" memory limit (N) below current usage (M)", several in brackets), and is actuated only
 * once usage has dropped below the new limit. The simulator checks containers only, not the pod-level
 * limit the real kubelet also checks (README: Divergences).
 */
export interface MemoryLimitDecrease {
  container: string;
  /** The new limit, bytes. */
  limit: number;
  /** The container's working set now, bytes. */
  usage: number;
}

export function memoryLimitRefusal(decreases: readonly MemoryLimitDecrease[]): string | undefined {
  const errors = decreases
    .filter((d) => d.limit < d.usage)
    .map(
      (d) =>
        `attempting to set container "${d.container}" memory limit (${d.limit}) below current usage (${d.usage})`,
    );
  if (errors.length === 0) return undefined;
  return `cannot decrease memory limits: ${errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`}`;
}
