/**
 * Go time.Time and time.Duration arithmetic, in the units upstream uses (spec §2, §10.3).
 *
 * A time is a bigint count of nanoseconds since the Unix epoch; a duration is a bigint count of
 * nanoseconds. bigint because decay exponents divide int64 nanosecond differences, Time.Sub saturates
 * at ±2^63 ns, and Time.Round counts from Go's zero time (year 1), none of which fit a float64.
 */
import type { EpochMillis } from '../kernel/units.js';

export type GoTime = bigint;
export type GoDuration = bigint;

export const NANOSECOND: GoDuration = 1n;
export const MICROSECOND: GoDuration = 1_000n;
export const MILLISECOND: GoDuration = 1_000_000n;
export const SECOND: GoDuration = 1_000_000_000n;
export const MINUTE: GoDuration = 60n * SECOND;
export const HOUR: GoDuration = 60n * MINUTE;

const MAX_DURATION = (1n << 63n) - 1n;
const MIN_DURATION = -(1n << 63n);

/** Go's zero time.Time (0001-01-01T00:00:00Z): 62135596800 s before the Unix epoch. */
export const ZERO_TIME: GoTime = -62_135_596_800n * SECOND;

export const isZeroTime = (t: GoTime): boolean => t === ZERO_TIME;

export const fromEpochMillis = (ms: EpochMillis | number): GoTime => BigInt(ms) * MILLISECOND;

/** Milliseconds since the epoch, floored (times from fleetscope's own inputs are whole milliseconds). */
export function toEpochMillis(t: GoTime): EpochMillis {
  const q = t / MILLISECOND;
  return Number(t < 0n && q * MILLISECOND !== t ? q - 1n : q) as EpochMillis;
}

/** time.Time.Sub: t - u, saturated to the int64 Duration range. */
export function timeSub(t: GoTime, u: GoTime): GoDuration {
  const d = t - u;
  if (d > MAX_DURATION) return MAX_DURATION;
  if (d < MIN_DURATION) return MIN_DURATION;
  return d;
}

/** Wraps like Go's int64 arithmetic (used where upstream multiplies Durations). */
export const int64 = (x: bigint): bigint => BigInt.asIntN(64, x);

/** time.Time.Round(d): nearest multiple of d counted from the zero time, halves rounded up. */
export function timeRound(t: GoTime, d: GoDuration): GoTime {
  if (d <= 0n) return t;
  const since = t - ZERO_TIME;
  let r = since % d;
  if (r < 0n) r += d;
  // Go's lessThanHalf: r + r < d, compared as unsigned.
  return r + r < d ? t - r : t + (d - r);
}

/** time.Duration.Truncate(m): d rounded toward zero to a multiple of m. */
export function durationTruncate(d: GoDuration, m: GoDuration): GoDuration {
  if (m <= 0n) return d;
  return d - (d % m);
}

/** time.Duration.Minutes(), computed as Go does (whole minutes plus the float remainder). */
export function durationMinutes(d: GoDuration): number {
  const min = d / MINUTE;
  const nsec = d % MINUTE;
  return Number(min) + Number(nsec) / (60 * 1e9);
}

export class DurationError extends Error {
  override name = 'DurationError';
}

const UNITS: Record<string, bigint> = {
  ns: NANOSECOND,
  us: MICROSECOND,
  µs: MICROSECOND, // U+00B5 micro sign
  μs: MICROSECOND, // U+03BC Greek mu
  ms: MILLISECOND,
  s: SECOND,
  m: MINUTE,
  h: HOUR,
};

const TWO63 = 1n << 63n;

/**
 * time.ParseDuration: "300ms", "-1.5h", "2h45m". Same grammar, overflow rules and fraction arithmetic
 * (the fraction is scaled through float64, as Go does, so "1.1h" gives Go's nanosecond count).
 */
export function parseGoDuration(input: string): GoDuration {
  const invalid = () => new DurationError(`time: invalid duration ${JSON.stringify(input)}`);
  let s = input;
  let neg = false;
  if (s !== '' && (s[0] === '-' || s[0] === '+')) {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') throw invalid();
  let d = 0n;
  while (s !== '') {
    const c0 = s[0] as string;
    if (!(c0 === '.' || (c0 >= '0' && c0 <= '9'))) throw invalid();
    // Leading integer: an overflow past 2^63 is an error.
    let i = 0;
    let v = 0n;
    while (i < s.length && (s[i] as string) >= '0' && (s[i] as string) <= '9') {
      if (v > TWO63 / 10n) throw invalid();
      v = v * 10n + BigInt((s[i] as string).charCodeAt(0) - 48);
      if (v > TWO63) throw invalid();
      i++;
    }
    const pre = i > 0;
    s = s.slice(i);
    // Fraction: precision stops accumulating on overflow instead of failing.
    let f = 0n;
    let scale = 1;
    let post = false;
    if (s !== '' && s[0] === '.') {
      s = s.slice(1);
      let j = 0;
      let overflow = false;
      while (j < s.length && (s[j] as string) >= '0' && (s[j] as string) <= '9') {
        if (!overflow) {
          if (f > (TWO63 - 1n) / 10n) overflow = true;
          else {
            const y = f * 10n + BigInt((s[j] as string).charCodeAt(0) - 48);
            if (y > TWO63) overflow = true;
            else {
              f = y;
              scale *= 10;
            }
          }
        }
        j++;
      }
      post = j > 0;
      s = s.slice(j);
    }
    if (!pre && !post) throw invalid();
    let u = 0;
    while (u < s.length) {
      const c = s[u] as string;
      if (c === '.' || (c >= '0' && c <= '9')) break;
      u++;
    }
    if (u === 0) throw new DurationError(`time: missing unit in duration ${JSON.stringify(input)}`);
    const unitName = s.slice(0, u);
    s = s.slice(u);
    const unit = UNITS[unitName];
    if (unit === undefined)
      throw new DurationError(
        `time: unknown unit ${JSON.stringify(unitName)} in duration ${JSON.stringify(input)}`,
      );
    if (v > TWO63 / unit) throw invalid();
    v *= unit;
    if (f > 0n) {
      // float64(f) * (float64(unit) / scale), truncated to uint64, exactly as Go computes it.
      v += BigInt(Math.trunc(Number(f) * (Number(unit) / scale)));
      if (v > TWO63) throw invalid();
    }
    d += v;
    if (d > TWO63) throw invalid();
  }
  if (neg) return -d;
  if (d > TWO63 - 1n) throw invalid();
  return d;
}

/** time.Duration.String(): "24h0m0s", "1h30m0s", "500ms". */
export function formatGoDuration(d: GoDuration): string {
  if (d === 0n) return '0s';
  const neg = d < 0n;
  let u = neg ? -d : d;
  let out: string;
  if (u < SECOND) {
    let unit = 'ns';
    let div = 1n;
    if (u >= MILLISECOND) {
      unit = 'ms';
      div = MILLISECOND;
    } else if (u >= MICROSECOND) {
      unit = 'µs';
      div = MICROSECOND;
    }
    out = fixed(u, div) + unit;
  } else {
    const h = u / HOUR;
    u -= h * HOUR;
    const m = u / MINUTE;
    u -= m * MINUTE;
    out = `${fixed(u, SECOND)}s`;
    if (h > 0n) out = `${h}h${m}m${out}`;
    else if (m > 0n) out = `${m}m${out}`;
  }
  return neg ? `-${out}` : out;
}

function fixed(v: bigint, div: bigint): string {
  const whole = v / div;
  const frac = v % div;
  if (frac === 0n) return `${whole}`;
  const digits = div.toString().length - 1;
  return `${whole}.${frac.toString().padStart(digits, '0').replace(/0+$/, '')}`;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * Parses an RFC 3339 timestamp (as time.Parse(time.RFC3339, s) accepts it: a fraction of up to nine
 * digits, Z or a ±hh:mm offset) to nanoseconds. Returns undefined when it is not one.
 */
export function parseRfc3339(s: string): GoTime | undefined {
  const m = RFC3339.exec(s);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const fraction = m[7];
  const zone = m[8] as string;
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 59) return undefined;
  const daysInMonth = new Date(Date.UTC(2000, month, 0)).getUTCDate();
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  if (day < 1 || day > (month === 2 ? (leap ? 29 : 28) : daysInMonth)) return undefined;
  if (fraction && fraction.length > 10) return undefined;
  let offsetSeconds = 0;
  if (zone !== 'Z' && zone !== 'z') {
    const oh = Number(zone.slice(1, 3));
    const om = Number(zone.slice(4, 6));
    if (oh > 23 || om > 59) return undefined;
    offsetSeconds = (oh * 3600 + om * 60) * (zone[0] === '-' ? -1 : 1);
  }
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  const seconds = BigInt(date.getTime() / 1000 - offsetSeconds);
  const nanos = fraction ? BigInt(fraction.slice(1).padEnd(9, '0')) : 0n;
  return seconds * SECOND + nanos;
}

/** metav1.Time's JSON form: RFC 3339 in UTC at second precision; the zero time is null. */
export function formatMetaTime(t: GoTime): string | null {
  if (isZeroTime(t)) return null;
  const secs = t >= 0n ? t / SECOND : (t - (SECOND - 1n)) / SECOND;
  const d = new Date(Number(secs) * 1000);
  const year = d.getUTCFullYear();
  if (year < 0 || year > 9999)
    throw new RangeError(`time ${t}ns is outside the years 0000-9999 that RFC 3339 allows`);
  return `${d.toISOString().slice(0, 19)}Z`;
}

/** RFC 3339 at full (nanosecond) precision, for messages and tests. */
export function formatRfc3339Nano(t: GoTime): string {
  const secs = t >= 0n ? t / SECOND : (t - (SECOND - 1n)) / SECOND;
  const nanos = t - secs * SECOND;
  const base = new Date(Number(secs) * 1000).toISOString().slice(0, 19);
  return nanos === 0n ? `${base}Z` : `${base}.${nanos.toString().padStart(9, '0').replace(/0+$/, '')}Z`;
}
