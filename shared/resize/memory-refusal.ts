/**
 * The kubelet's refusal to lower a memory limit below what the container (or the pod) uses now: a
 * resize left in PodResizeInProgress with reason Error and the message "cannot decrease memory limits:
 * [attempting to set pod memory limit (N) below current usage (M), attempting to set container "x"
 * memory limit (N) below current usage (M)]" (one error without the brackets). Read so the caller can
 * say what happened in its own units and keep to the usage the kubelet saw.
 */
import { readableMemory } from '../kernel/units-format.js';

export interface MemoryLimitRefusal {
  /** The container; undefined for the pod-level limit. */
  container?: string;
  /** The limit asked for, and the usage the kubelet measured, bytes. */
  limit: number;
  usage: number;
}

const REFUSAL =
  /attempting to set (?:pod|container "([^"]*)") memory limit \((\d+)\) below current usage \((\d+)\)/g;

/** The refusals a kubelet's message names; none when it is another error. */
export function memoryLimitRefusals(message: string | undefined): MemoryLimitRefusal[] {
  if (!message) return [];
  return [...message.matchAll(REFUSAL)].map((m) => ({
    ...(m[1] !== undefined ? { container: m[1] } : {}),
    limit: Number(m[2]),
    usage: Number(m[3]),
  }));
}

/** The refusal in people's units: `container "x": limit 100Mi below 182Mi in use`. */
export function describeMemoryRefusals(refusals: readonly MemoryLimitRefusal[]): string {
  const one = (r: MemoryLimitRefusal) =>
    `${r.container === undefined ? 'the pod' : `container "${r.container}"`}: limit ${readableMemory(r.limit)} below ${readableMemory(r.usage)} in use`;
  return `the kubelet refused to lower the memory limit below usage (${refusals.map(one).join('; ')}); the same request is not sent again`;
}
