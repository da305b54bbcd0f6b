/**
 * ResourceAmount arithmetic of upstream model/types.go (spec §4.1): an int64 of millicores (CPU) or
 * bytes (memory); every conversion from float truncates toward zero, clamps negatives to 0 and values
 * above MaxResourceAmount (1e14) to it. NaN falls through to Go's int64(NaN), MinInt64 on amd64.
 */
import { goInt64 } from '../gomath.js';

/** An int64 amount: millicores for CPU, bytes for memory. A JS number, exact up to 2^53. */
export type ResourceAmount = number;

export const MAX_RESOURCE_AMOUNT: ResourceAmount = 1e14;

export type ResourceName = 'cpu' | 'memory';
export const RESOURCE_NAMES: readonly ResourceName[] = ['cpu', 'memory'];

/** A set of amounts, possibly partial (controlledResources may drop one). */
export type Resources = Partial<Record<ResourceName, ResourceAmount>>;

export function resourceAmountFromFloat(amount: number): ResourceAmount {
  if (amount < 0) return 0;
  if (amount > MAX_RESOURCE_AMOUNT) return MAX_RESOURCE_AMOUNT;
  return goInt64(amount);
}

/** CPUAmountFromCores: cores × 1000, truncated. */
export const cpuAmountFromCores = (cores: number): ResourceAmount => resourceAmountFromFloat(cores * 1000.0);
/** CoresFromCPUAmount: millicores / 1000. */
export const coresFromCpuAmount = (millicores: ResourceAmount): number => millicores / 1000.0;
/** MemoryAmountFromBytes: truncated. */
export const memoryAmountFromBytes = (b: number): ResourceAmount => resourceAmountFromFloat(b);
/** BytesFromMemoryAmount. */
export const bytesFromMemoryAmount = (amount: ResourceAmount): number => amount;
/** ScaleResource: float64(amount) × factor, truncated. */
export const scaleResource = (amount: ResourceAmount, factor: number): ResourceAmount =>
  resourceAmountFromFloat(amount * factor);

export const resourceAmountMax = (a: ResourceAmount, b: ResourceAmount): ResourceAmount => (a > b ? a : b);

/** RoundUpToScale: math.Ceil(float64(v)/float64(scale)) × float64(scale), as the rounding flags do. */
export function roundUpToScale(value: ResourceAmount, scale: number): ResourceAmount {
  if (!(scale > 0)) throw new RangeError(`scale must be greater than zero, got ${scale}`);
  return goInt64(Math.ceil(value / scale) * scale);
}
