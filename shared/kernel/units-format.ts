/**
 * Amounts for people (tables, messages) and for machines (JSON, YAML), shared by every command: people
 * read cores or millicores and Mi or Gi; machines get numbers with the unit in the field name plus the
 * Kubernetes quantity string. Upstream VPA's "no cap" is 1e14 (millicores, bytes), which as a quantity
 * reads 100G or 97656250000Ki: shown as "unbounded" instead.
 */
import { formatCpu, formatMemory } from './quantity.js';
import type { Bytes, Millicores } from './units.js';

/** Upstream VPA's upper bound when nothing caps it (model.MaxResourceAmount). */
export const UNBOUNDED_AMOUNT = 1e14;
export const isUnbounded = (n: number): boolean => n >= UNBOUNDED_AMOUNT;

/** Cores or millicores: 2000 → "2", 250 → "250m", 12345 → "12.3". */
export function readableCpu(m: number): string {
  if (isUnbounded(m)) return 'unbounded';
  return m % 1000 === 0 ? String(m / 1000) : m >= 10_000 ? (m / 1000).toFixed(1) : `${m}m`;
}

/** Mi below a gibibyte, Gi from there on. */
export function readableMemory(b: number): string {
  if (isUnbounded(b)) return 'unbounded';
  const gi = b / 2 ** 30;
  if (gi >= 1) return `${Number.isInteger(gi) ? gi : gi.toFixed(1)}Gi`;
  return `${Math.round(b / 2 ** 20)}Mi`;
}

/** US dollars for people: "$1,234.56" (cents below $1,000, whole dollars above). */
export function readableUsd(usd: number): string {
  const digits = Math.abs(usd) >= 1000 ? 0 : 2;
  return `${usd < 0 ? '-' : ''}$${Math.abs(usd).toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })}`;
}

/** A table cell for an amount that may be absent. */
export const cpuCell = (m: number | undefined): string => (m === undefined ? '-' : readableCpu(m));
export const memoryCell = (b: number | undefined): string => (b === undefined ? '-' : readableMemory(b));

/** "250m → 300m (+50m, +20%)": current next to recommended, with the change as a delta and a percentage. */
export function change(
  current: number | undefined,
  next: number | undefined,
  cell: (n: number) => string,
): string {
  if (next === undefined) return current === undefined ? '-' : cell(current);
  if (current === undefined || current === 0 || isUnbounded(next)) return cell(next);
  const pct = Math.round(((next - current) / current) * 100);
  const delta = `${next >= current ? '+' : '-'}${cell(Math.abs(next - current))}`;
  return `${cell(current)} → ${cell(next)} (${delta}, ${pct >= 0 ? '+' : ''}${pct}%)`;
}

/**
 * The JSON/YAML form of a cpu and memory pair: numbers with their unit in the field name, the quantity
 * strings beside them, and `unbounded: true` rather than a number nobody means. Absent stays absent.
 */
export function amountFields(a: { cpu?: number; memory?: number } | undefined) {
  if (!a) return undefined;
  const bounded = (n: number | undefined) => (n === undefined || isUnbounded(n) ? undefined : n);
  const cpu = bounded(a.cpu);
  const memory = bounded(a.memory);
  const unbounded = (['cpu', 'memory'] as const).filter((r) => a[r] !== undefined && isUnbounded(a[r]));
  return {
    cpuMillicores: cpu,
    memoryBytes: memory,
    cpu: cpu === undefined ? undefined : formatCpu(cpu as Millicores),
    memory: memory === undefined ? undefined : formatMemory(memory as Bytes),
    ...(unbounded.length ? { unbounded } : {}),
  };
}
