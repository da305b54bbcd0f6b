/**
 * Test-side helpers for the VPA vectors: the vectors' little languages (time expressions such as
 * "T+24h-1s", weight expressions such as "10000*eps - eps", tolerances) and exact quantity parsing.
 */
import { expect } from 'vitest';
import {
  type GoDuration,
  type GoTime,
  HOUR,
  parseGoDuration,
  parseRfc3339,
} from '../../shared/recommendation/gotime.js';
import {
  type HistogramOptions,
  newExponentialHistogramOptions,
  newLinearHistogramOptions,
} from '../../shared/recommendation/model/histogram-options.js';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type JsonObject = { [k: string]: Json };

export const asObject = (v: Json | undefined, what = 'value'): JsonObject => {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error(`${what}: expected an object`);
  return v;
};
export const asArray = (v: Json | undefined, what = 'value'): Json[] => {
  if (!Array.isArray(v)) throw new Error(`${what}: expected an array`);
  return v;
};
export const asNumber = (v: Json | undefined, what = 'value'): number => {
  if (typeof v !== 'number') throw new Error(`${what}: expected a number`);
  return v;
};
export const asString = (v: Json | undefined, what = 'value'): string => {
  if (typeof v !== 'string') throw new Error(`${what}: expected a string`);
  return v;
};

/** Go durations plus whole days ("7d"), which the vectors use in time expressions. */
export function duration(s: string): GoDuration {
  const days = /^(\d+)d(.*)$/.exec(s);
  if (days) return BigInt(days[1] as string) * 24n * HOUR + (days[2] ? duration(days[2]) : 0n);
  return parseGoDuration(s);
}

/** "2009-02-13T23:31:30Z (Go time.Unix(1234567890,0))" → the timestamp before the comment. */
export function leadingTime(s: string): GoTime {
  const token = s.trim().split(/\s+/)[0] as string;
  const t = parseRfc3339(token);
  if (t === undefined) throw new Error(`not a timestamp: ${s}`);
  return t;
}

/** A time expression: an RFC 3339 time, or a named base ("T", "T0") followed by ±durations. */
export function timeExpr(s: string, bases: Record<string, GoTime>): GoTime {
  const direct = parseRfc3339(s.trim());
  if (direct !== undefined) return direct;
  const m = /^([A-Za-z][A-Za-z0-9]*)((?:[+-][0-9.]+[a-zµμ]+(?:[0-9.]+[a-zµμ]+)*)*)$/.exec(
    s.replace(/\s+/g, ''),
  );
  if (!m) throw new Error(`not a time expression: ${s}`);
  const base = bases[m[1] as string];
  if (base === undefined) throw new Error(`unknown time base ${m[1]} in ${s}`);
  let t = base;
  for (const part of (m[2] as string).matchAll(/([+-])([^+-]+)/g)) {
    const d = duration(part[2] as string);
    t = part[1] === '+' ? t + d : t - d;
  }
  return t;
}

/** Evaluates "3*eps", "10000*eps - eps", "0.3*eps" left to right with float64 arithmetic. */
export function numberExpr(v: Json | undefined, vars: Record<string, number>): number {
  if (typeof v === 'number') return v;
  if (typeof v !== 'string') throw new Error(`not a numeric expression: ${JSON.stringify(v)}`);
  const tokens = v.match(/\d+(?:\.\d+)?(?:e[+-]?\d+)?|[A-Za-z_]\w*|[-+*/()]/g) ?? [];
  let i = 0;
  const peek = () => tokens[i];
  const next = () => tokens[i++] as string;
  const primary = (): number => {
    const t = next();
    if (t === '(') {
      const x = sum();
      next();
      return x;
    }
    if (t === '-') return -primary();
    if (/^\d/.test(t)) return Number(t);
    const x = vars[t];
    if (x === undefined) throw new Error(`unknown variable ${t} in ${v}`);
    return x;
  };
  const product = (): number => {
    let x = primary();
    while (peek() === '*' || peek() === '/') x = next() === '*' ? x * primary() : x / primary();
    return x;
  };
  const sum = (): number => {
    let x = product();
    while (peek() === '+' || peek() === '-') x = next() === '+' ? x + product() : x - product();
    return x;
  };
  const result = sum();
  if (i !== tokens.length) throw new Error(`cannot parse ${v}`);
  return result;
}

/** "relative 1e-15", "absolute 1e-15 per bucket", "relative 0.05 (as asserted upstream)"; default exact. */
export function tolerance(v: Json | undefined): { kind: 'exact' | 'relative' | 'absolute'; eps: number } {
  if (typeof v !== 'string') return { kind: 'exact', eps: 0 };
  const m = /^(relative|absolute)\s+([0-9.eE+-]+)/.exec(v);
  if (!m) throw new Error(`unknown tolerance ${v}`);
  return { kind: m[1] as 'relative' | 'absolute', eps: Number(m[2]) };
}

export function expectClose(
  actual: number,
  expected: number,
  tol: ReturnType<typeof tolerance>,
  what: string,
): void {
  if (tol.kind === 'exact' || expected === actual) {
    expect(actual, what).toBe(expected);
    return;
  }
  const diff = Math.abs(actual - expected);
  const bound = tol.kind === 'relative' ? tol.eps * Math.abs(expected) : tol.eps;
  expect(diff <= bound, `${what}: ${actual} vs ${expected} (${tol.kind} ${tol.eps})`).toBe(true);
}

/** Histogram options as the vectors write them. */
export function histogramOptions(o: JsonObject): HistogramOptions {
  const type = asString(o.type, 'options.type');
  const epsilon = asNumber(o.epsilon, 'options.epsilon');
  if (type === 'linear')
    return newLinearHistogramOptions(asNumber(o.maxValue), asNumber(o.bucketSize), epsilon);
  if (type === 'exponential')
    return newExponentialHistogramOptions(
      asNumber(o.maxValue),
      asNumber(o.firstBucketSize),
      asNumber(o.ratio),
      epsilon,
    );
  throw new Error(`unknown histogram type ${type}`);
}

const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

const ceilDiv = (a: bigint, b: bigint): bigint => (a % b === 0n ? a / b : a / b + (a > 0n ? 1n : 0n));

/** A Kubernetes quantity as an exact count of nano-units. */
export function quantityNanos(q: string | number): bigint {
  const s = String(q);
  const m = /^([+-]?)(\d*)(?:\.(\d*))?([a-zA-Z]*|[eE][+-]?\d+)$/.exec(s);
  if (!m) throw new Error(`bad quantity ${s}`);
  const digits = BigInt(`${m[2] || '0'}${m[3] ?? ''}`);
  const suffix = m[4] as string;
  // value = digits × 10^-scale × (10^exp | 2^exp); nanos rounds up, as ParseQuantity does.
  let num = digits;
  let e10 = 9 - (m[3] ?? '').length;
  const binary = BINARY[suffix];
  if (binary !== undefined) num <<= BigInt(binary);
  else {
    const exp = /^[eE]/.test(suffix) ? Number(suffix.slice(1)) : DECIMAL[suffix];
    if (exp === undefined) throw new Error(`bad suffix in ${s}`);
    e10 += exp;
  }
  const nanos = e10 >= 0 ? num * 10n ** BigInt(e10) : ceilDiv(num, 10n ** BigInt(-e10));
  return m[1] === '-' ? -nanos : nanos;
}

/** Quantity.MilliValue(). */
export const milli = (q: string | number): bigint => ceilDiv(quantityNanos(q), 1_000_000n);
/** Quantity.Value(). */
export const units = (q: string | number): bigint => ceilDiv(quantityNanos(q), 1_000_000_000n);

/** A resource's integer amount as the recommender keeps it: CPU in millicores, memory in bytes. */
export const amountOf = (resource: string, q: string | number): bigint =>
  resource === 'cpu' ? milli(q) : units(q);

/** Tracks which expected keys a handler checked, so that no expectation passes unchecked. */
export class Expected {
  private readonly used = new Set<string>();
  constructor(readonly obj: JsonObject) {}

  has(k: string): boolean {
    return k in this.obj;
  }

  get(k: string): Json {
    if (!(k in this.obj)) throw new Error(`expected.${k} missing`);
    this.used.add(k);
    return this.obj[k] as Json;
  }

  take(k: string): Json | undefined {
    if (!(k in this.obj)) return undefined;
    this.used.add(k);
    return this.obj[k];
  }

  keys(): string[] {
    return Object.keys(this.obj);
  }

  /** Every key except tolerances must have been checked. */
  done(): void {
    const unchecked = Object.keys(this.obj).filter((k) => !this.used.has(k) && !/tolerance/i.test(k));
    expect(unchecked, 'expected keys no check looked at').toEqual([]);
  }
}
