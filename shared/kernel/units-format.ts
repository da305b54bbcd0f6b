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

/** Up to `digits` decimals, trailing zeros dropped: 2.50 → "2.5", 2.00 → "2". */
const trimmed = (v: number, digits: number) => String(Number(v.toFixed(digits)));

/**
 * Millicores below a core, cores from there on (one vocabulary in every table and message: never
 * "7910m" beside "31.9"): 250 → "250m", 2000 → "2", 2009 → "2.01", 12345 → "12.3".
 */
export function readableCpu(m: number): string {
  if (isUnbounded(m)) return 'unbounded';
  const sign = m < 0 ? '-' : '';
  const a = Math.abs(Math.round(m));
  if (a < 1000) return `${sign}${a}m`;
  return `${sign}${trimmed(a / 1000, a < 10_000 ? 2 : 1)}`;
}

/** Mi below a gibibyte, Gi from there on: 128Mi, 1.5Gi, 29.6Gi. */
export function readableMemory(b: number): string {
  if (isUnbounded(b)) return 'unbounded';
  const sign = b < 0 ? '-' : '';
  const a = Math.abs(b);
  const gi = a / 2 ** 30;
  if (Math.round(a / 2 ** 20) >= 1024) return `${sign}${trimmed(gi, gi < 10 ? 2 : 1)}Gi`;
  return `${sign}${Math.round(a / 2 ** 20)}Mi`;
}

/** US dollars for people: "$1,234.56" (cents below $1,000, whole dollars above). */
export function readableUsd(usd: number): string {
  const digits = Math.abs(usd) >= 1000 ? 0 : 2;
  return `${usd < 0 ? '-' : ''}$${Math.abs(usd).toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })}`;
}

/**
 * An amount in a sentence, where a bare "500" could be cores or millicores: "500m", "2 cores",
 * "1 core", "512Mi", "1.5Gi".
 */
export function amountWords(r: 'cpu' | 'memory', v: number): string {
  if (r === 'memory') return readableMemory(v);
  const text = readableCpu(v);
  if (text.endsWith('m') || text === 'unbounded') return text;
  return `${text} ${text === '1' ? 'core' : 'cores'}`;
}

/** A CPU and memory pair in a sentence, each with its unit: "7.9 cores / 31Gi", "500m / 1Gi". */
export const pairWords = (a: { cpu?: number; memory?: number } | undefined): string =>
  a?.cpu === undefined || a.memory === undefined
    ? NONE
    : `${amountWords('cpu', a.cpu)} / ${amountWords('memory', a.memory)}`;

/** What an absent value reads in every table: one placeholder, never a blank cell. */
export const NONE = '-';

/** A table cell for an amount that may be absent. */
export const cpuCell = (m: number | undefined): string => (m === undefined ? NONE : readableCpu(m));
export const memoryCell = (b: number | undefined): string => (b === undefined ? NONE : readableMemory(b));

/** CPU and memory in one cell: "250m / 512Mi", "31.9 / 119.4Gi", "unbounded / unbounded". */
export const pairCell = (a: { cpu?: number; memory?: number } | undefined): string =>
  a ? `${cpuCell(a.cpu)} / ${memoryCell(a.memory)}` : NONE;

/** A time in tables: RFC 3339 to the second, UTC. */
export const timeCell = (ms: number | undefined): string =>
  ms === undefined || !Number.isFinite(ms) ? NONE : new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** How long ago: "45s", "12m", "3h", "2d" (ahead of `now`: "in 5m"). */
export function age(ms: number, now: number): string {
  const d = now - ms;
  const a = Math.abs(d) / 1000;
  const text =
    a < 60
      ? `${Math.round(a)}s`
      : a < 3600
        ? `${Math.round(a / 60)}m`
        : a < 86_400
          ? `${Math.round(a / 3600)}h`
          : `${Math.round(a / 86_400)}d`;
  return d >= 0 ? `${text} ago` : `in ${text}`;
}

/** "2026-11-26T16:53:22Z (3m ago)": a stored value says how old it is. */
export const asOfCell = (ms: number, now: number): string => `${timeCell(ms)} (${age(ms, now)})`;

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
