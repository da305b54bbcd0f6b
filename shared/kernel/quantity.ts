/**
 * Kubernetes resource.Quantity (apimachinery pkg/api/resource): exact parsing and canonical formatting.
 *
 * A parsed quantity is kept as an integer count of nano-units (value × 10⁹) in a bigint. That is exact:
 * ParseQuantity rounds every value up (away from zero) to 1n, so no parsed quantity needs finer precision,
 * and bigint has no 2⁶³ ceiling. The quantity also remembers the family of its suffix (DecimalSI,
 * BinarySI, DecimalExponent) because the canonical string depends on it, exactly as in Go.
 */
import type { Bytes, Millicores } from './units.js';

export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

export interface Quantity {
  /** The value × 10⁹ (nano-units), exact. */
  readonly nanos: bigint;
  readonly format: QuantityFormat;
}

export class QuantityError extends Error {
  override name = 'QuantityError';
  constructor(
    readonly input: string,
    readonly reason: string,
  ) {
    super(`quantity ${JSON.stringify(input)}: ${reason}`);
  }
}

const SPLIT_RE = '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$';
/** The messages of apimachinery's ErrFormatWrong, ErrNumeric and ErrSuffix. */
export const QUANTITY_FORMAT_MESSAGE = `quantities must match the regular expression '${SPLIT_RE}'`;
const SUFFIX_MESSAGE = "unable to parse quantity's suffix";

const NANO = 1_000_000_000n;
const MAX_INT64 = (1n << 63n) - 1n;

const DECIMAL_SUFFIXES: Record<string, number> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
const BINARY_SUFFIXES: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL_BY_EXPONENT = new Map(Object.entries(DECIMAL_SUFFIXES).map(([s, e]) => [e, s]));
const BINARY_BY_EXPONENT = new Map(Object.entries(BINARY_SUFFIXES).map(([s, e]) => [e, s]));

const SUFFIX_CHARS = 'eEinumkKMGTP';
const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';

interface Scanned {
  negative: boolean;
  num: string;
  denom: string;
  suffix: string;
}

/** A port of parseQuantityString: a permissive scanner; the suffix is checked afterwards. */
function scan(str: string): Scanned {
  let pos = 0;
  let negative = false;
  if (str[0] === '-') {
    negative = true;
    pos++;
  } else if (str[0] === '+') {
    pos++;
  }
  while (pos < str.length && str[pos] === '0') pos++;
  if (pos >= str.length) return { negative, num: '0', denom: '', suffix: '' };
  let start = pos;
  while (isDigit(str[pos])) pos++;
  const num = str.slice(start, pos) || '0';
  let denom = '';
  if (str[pos] === '.') {
    pos++;
    start = pos;
    while (isDigit(str[pos])) pos++;
    denom = str.slice(start, pos);
  }
  const suffixStart = pos;
  while (pos < str.length && SUFFIX_CHARS.includes(str[pos] as string)) pos++;
  if (str[pos] === '-' || str[pos] === '+') pos++;
  while (isDigit(str[pos])) pos++;
  if (pos < str.length) throw new QuantityError(str, QUANTITY_FORMAT_MESSAGE);
  return { negative, num, denom, suffix: str.slice(suffixStart) };
}

interface Suffix {
  base: 10 | 2;
  exponent: number;
  format: QuantityFormat;
}

function interpretSuffix(s: string): Suffix | undefined {
  const dec = DECIMAL_SUFFIXES[s];
  if (dec !== undefined) return { base: 10, exponent: dec, format: 'DecimalSI' };
  const bin = BINARY_SUFFIXES[s];
  if (bin !== undefined) return { base: 2, exponent: bin, format: 'BinarySI' };
  if (s.length > 1 && (s[0] === 'e' || s[0] === 'E')) {
    const rest = s.slice(1);
    if (!/^[+-]?[0-9]+$/.test(rest)) return undefined;
    const exponent = Number(rest);
    if (!Number.isSafeInteger(exponent) || Math.abs(exponent) > 2 ** 31 - 1) return undefined;
    return { base: 10, exponent, format: 'DecimalExponent' };
  }
  return undefined;
}

/** Division rounding away from zero (inf.RoundUp), for b > 0. */
function divAwayFromZero(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b === 0n ? q : a < 0n ? q - 1n : q + 1n;
}

/** Parses a Kubernetes quantity ("250m", "1.5Gi", "1e3", a bare JSON number). Throws QuantityError. */
export function parseQuantity(input: string | number): Quantity {
  const str = typeof input === 'number' ? numberToQuantityString(input) : input;
  if (str.length === 0) throw new QuantityError(str, QUANTITY_FORMAT_MESSAGE);
  if (str === '0') return { nanos: 0n, format: 'DecimalSI' };
  const { negative, num, denom, suffix } = scan(str);
  const suf = interpretSuffix(suffix);
  if (!suf) throw new QuantityError(str, SUFFIX_MESSAGE);
  let digits = BigInt(num + denom);
  // value = digits × 10^(exp10) × 2^(exp2); nanos = value × 10^9
  let exp10 = -denom.length + 9;
  let exp2 = 0;
  if (suf.base === 10) exp10 += suf.exponent;
  else exp2 = suf.exponent;
  digits <<= BigInt(exp2);
  let nanos = exp10 >= 0 ? digits * 10n ** BigInt(exp10) : divAwayFromZero(digits, 10n ** BigInt(-exp10));
  let format = suf.format;
  if (format === 'BinarySI' && nanos > MAX_INT64 * NANO) nanos = MAX_INT64 * NANO;
  if (format === 'BinarySI' && nanos > 0n && nanos < NANO) format = 'DecimalSI';
  if (negative) nanos = -nanos;
  return { nanos, format };
}

function numberToQuantityString(n: number): string {
  if (!Number.isFinite(n)) throw new QuantityError(String(n), QUANTITY_FORMAT_MESSAGE);
  // JSON numbers are decimal text; toString gives the shortest exact-enough form ("1e+21" parses as an exponent).
  return String(n);
}

/** mantissa × 10^exponent with no trailing zeros in the mantissa, then the exponent lowered to a multiple of 3. */
function canonicalDecimal(nanos: bigint): { mantissa: bigint; exponent: number } {
  let mantissa = nanos;
  let exponent = -9;
  while (mantissa % 10n === 0n) {
    mantissa /= 10n;
    exponent++;
  }
  const rem = ((exponent % 3) + 3) % 3;
  if (rem !== 0) {
    mantissa *= 10n ** BigInt(rem);
    exponent -= rem;
  }
  return { mantissa, exponent };
}

/** The canonical string of a quantity, as Quantity.String() / MarshalJSON write it. */
export function formatQuantity(q: Quantity): string {
  if (q.nanos === 0n) return '0';
  let format = q.format;
  if (format === 'BinarySI') {
    const abs = q.nanos < 0n ? -q.nanos : q.nanos;
    if (abs < 1024n * NANO || q.nanos % NANO !== 0n) format = 'DecimalSI';
  }
  if (format === 'BinarySI') {
    let value = q.nanos / NANO;
    let exponent = 0;
    while (exponent < 60 && value % 1024n === 0n) {
      value /= 1024n;
      exponent += 10;
    }
    return `${value}${BINARY_BY_EXPONENT.get(exponent) ?? ''}`;
  }
  const { mantissa, exponent } = canonicalDecimal(q.nanos);
  if (format === 'DecimalSI') {
    const suffix = DECIMAL_BY_EXPONENT.get(exponent);
    if (suffix !== undefined) return `${mantissa}${suffix}`;
  }
  return exponent === 0 ? `${mantissa}` : `${mantissa}e${exponent}`;
}

/** Parses and re-emits a quantity in canonical form ("1024Mi" → "1Gi", "0.5" → "500m"). */
export function canonicalizeQuantity(s: string | number): string {
  return formatQuantity(parseQuantity(s));
}

/** Compares two quantities numerically (never by string: "1G" ≠ "1Gi"). */
export function compareQuantities(a: Quantity, b: Quantity): -1 | 0 | 1 {
  return a.nanos < b.nanos ? -1 : a.nanos > b.nanos ? 1 : 0;
}

/** ceil(q × 1000), as Quantity.MilliValue() (rounding away from zero). */
export function milliValue(q: Quantity): number {
  return Number(divAwayFromZero(q.nanos, 1_000_000n));
}

/** ceil(q), as Quantity.Value() (rounding away from zero). */
export function integerValue(q: Quantity): number {
  return Number(divAwayFromZero(q.nanos, NANO));
}

/** CPU as whole millicores, rounded up as MilliValue does ("0.1m" → 1). */
export function parseCpu(s: string | number): Millicores {
  return milliValue(parseQuantity(s)) as Millicores;
}

/** Memory as whole bytes, rounded up as Value does ("0.5" → 1). */
export function parseMemory(s: string | number): Bytes {
  return integerValue(parseQuantity(s)) as Bytes;
}

/** Millicores in canonical DecimalSI form: 250 → "250m", 2000 → "2", 0 → "0". */
export function formatCpu(m: Millicores): string {
  if (!Number.isInteger(m)) throw new RangeError(`formatCpu: ${m} is not a whole number of millicores`);
  return formatQuantity({ nanos: BigInt(m) * 1_000_000n, format: 'DecimalSI' });
}

/** Bytes in canonical BinarySI form: 134217728 → "128Mi", 1000000 → "1000000" (not a multiple of 1024). */
export function formatMemory(b: Bytes): string {
  if (!Number.isInteger(b)) throw new RangeError(`formatMemory: ${b} is not a whole number of bytes`);
  return formatQuantity({ nanos: BigInt(b) * NANO, format: 'BinarySI' });
}

/**
 * CPU usage as metrics-server writes it: NewScaledQuantity(nanocores, -9), DecimalSI, so normally
 * "123456789n", but "5m" for 5000000 and "0" for 0.
 */
export function formatUsageCpu(nanocores: number | bigint): string {
  if (typeof nanocores === 'number' && Number.isSafeInteger(nanocores) && nanocores >= 0) {
    // Fast path (metrics lists format tens of thousands of these): strip factors of 1000, pick the suffix.
    if (nanocores === 0) return '0';
    let m = nanocores;
    let i = 0;
    while (i < 3 && m % 1000 === 0) {
      m /= 1000;
      i++;
    }
    return `${m}${['n', 'u', 'm', ''][i]}`;
  }
  const n = typeof nanocores === 'bigint' ? nanocores : BigInt(Math.round(nanocores));
  return formatQuantity({ nanos: n, format: 'DecimalSI' });
}

/** Memory usage as metrics-server writes it (working-set bytes, BinarySI): "12345Ki", or plain bytes. */
export function formatUsageMemory(bytesValue: number | bigint): string {
  if (typeof bytesValue === 'number' && Number.isSafeInteger(bytesValue) && bytesValue >= 1024) {
    let m = bytesValue;
    let i = 0;
    while (i < 6 && m % 1024 === 0) {
      m /= 1024;
      i++;
    }
    return `${m}${['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'][i]}`;
  }
  const n = typeof bytesValue === 'bigint' ? bytesValue : BigInt(Math.round(bytesValue));
  return formatQuantity({ nanos: n * NANO, format: 'BinarySI' });
}
