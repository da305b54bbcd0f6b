/**
 * CPU and memory together, as integers (millicores, bytes): the unit of every balloon computation. The
 * kubelet admits a resize atomically across resources, so balloons are sized as pairs.
 */
import { formatCpu, formatMemory, parseCpu, parseMemory, QuantityError } from '../kernel/quantity.js';
import type { Bytes, Millicores } from '../kernel/units.js';
import { amountWords, pairCell, readableCpu, readableMemory } from '../kernel/units-format.js';

export interface Amounts {
  cpu: Millicores;
  memory: Bytes;
}

export const RESOURCES = ['cpu', 'memory'] as const;
export type Resource = (typeof RESOURCES)[number];

export const amounts = (cpu: number, memory: number): Amounts => ({
  cpu: cpu as Millicores,
  memory: memory as Bytes,
});
export const ZERO: Amounts = amounts(0, 0);

export const each = (f: (r: Resource) => number): Amounts => amounts(f('cpu'), f('memory'));
export const add = (a: Amounts, b: Amounts): Amounts => each((r) => a[r] + b[r]);
export const sub = (a: Amounts, b: Amounts): Amounts => each((r) => a[r] - b[r]);
export const max = (a: Amounts, b: Amounts): Amounts => each((r) => Math.max(a[r], b[r]));
export const min = (a: Amounts, b: Amounts): Amounts => each((r) => Math.min(a[r], b[r]));
export const equal = (a: Amounts, b: Amounts): boolean => a.cpu === b.cpu && a.memory === b.memory;
export const isZero = (a: Amounts): boolean => a.cpu === 0 && a.memory === 0;
export const map = each;

/** Kubernetes quantity strings, canonical ("1500m", "2Gi"). */
export const quantitiesOf = (a: Amounts) => ({ cpu: formatCpu(a.cpu), memory: formatMemory(a.memory) });

/** Amounts with their units in the field names, for JSON, events and DynamoDB. */
export const unitsOf = (a: Amounts) => ({ cpuMillicores: a.cpu, memoryBytes: a.memory });
/** Both: what JSON, events and the CLI show for an amount. */
export const capacityOf = (a: Amounts) => ({ ...unitsOf(a), ...quantitiesOf(a) });
export const fromUnits = (u: { cpuMillicores: number; memoryBytes: number }): Amounts =>
  amounts(u.cpuMillicores, u.memoryBytes);

/** "cpu / memory" for tables and messages ("-" when absent): the one pair formatter. */
export const pairText = pairCell;

/** Human form for messages: "cpu 500m, memory 2Gi", "cpu 31.9 cores, memory 119.4Gi". */
export function describeAmounts(a: Amounts): string {
  return `cpu ${amountWords('cpu', a.cpu)}, memory ${amountWords('memory', a.memory)}`;
}
export { amountWords, readableCpu, readableMemory };

export class AmountError extends Error {
  override name = 'AmountError';
}

/** Parses a cpu or memory quantity given by a user; the error names the field and the rule broken. */
export function parseAmount(field: string, resource: Resource, value: unknown): number {
  if (typeof value !== 'string' && typeof value !== 'number')
    throw new AmountError(`${field}: a ${resource} quantity is required`);
  let n: number;
  try {
    n = resource === 'cpu' ? parseCpu(value) : parseMemory(value);
  } catch (err) {
    const why = err instanceof QuantityError ? err.message : String(err);
    throw new AmountError(`${field}: "${value}" is not a ${resource} quantity (${why})`);
  }
  if (n < 0) throw new AmountError(`${field}: "${value}" is negative`);
  if (!Number.isSafeInteger(n)) throw new AmountError(`${field}: "${value}" is out of range`);
  // A unit-less memory quantity is bytes: "4" meant as 4Gi would size a node to nothing.
  if (resource === 'memory' && n > 0 && n < MI && /^\s*[0-9.eE+]+\s*$/.test(String(value)))
    throw new AmountError(
      `${field}: "${value}" is ${n} bytes (a memory quantity without a unit is bytes); write the unit, as in ${String(value).trim()}Gi or ${String(value).trim()}Mi`,
    );
  return n;
}
const MI = 1024 * 1024;

export function parseAmounts(field: string, value: { cpu?: unknown; memory?: unknown } | undefined): Amounts {
  if (value === undefined || value === null || typeof value !== 'object')
    throw new AmountError(`${field}: cpu and memory are required`);
  const unknown = Object.keys(value).filter((k) => k !== 'cpu' && k !== 'memory');
  if (unknown.length > 0)
    throw new AmountError(`${field}.${unknown[0]}: unknown field (${field} has cpu and memory)`);
  return amounts(
    parseAmount(`${field}.cpu`, 'cpu', value.cpu),
    parseAmount(`${field}.memory`, 'memory', value.memory),
  );
}
