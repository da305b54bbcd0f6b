/**
 * The original shared/recommendation/gomath.ts (before the number-only goPow loop and the power-of-two
 * fast path of goLdexp), kept verbatim as the oracle those rewrites are compared against.
 */
const buffer = new DataView(new ArrayBuffer(8));

function highWord(x: number): number {
  buffer.setFloat64(0, x);
  return buffer.getUint32(0);
}

function withHighWord(x: number, hi: number): number {
  buffer.setFloat64(0, x);
  buffer.setUint32(0, hi >>> 0);
  return buffer.getFloat64(0);
}

const SMALLEST_NORMAL = 2.2250738585072014e-308;
const TWO_52 = 4503599627370496;
const TWO_MINUS_53 = 1.1102230246251565e-16;

/** -2^63, what amd64 produces for int64(NaN) and for out-of-range conversions. */
export const MIN_INT64 = -(2 ** 63);
const TWO_63 = 2 ** 63;

/** Go's int64(x) on amd64: truncation toward zero; NaN and |x| ≥ 2^63 give MinInt64. */
export function goInt64(x: number): number {
  if (Number.isNaN(x) || x >= TWO_63 || x < -TWO_63) return MIN_INT64;
  return Math.trunc(x);
}

/** Go's math.Floor(x + 0.5) as an int, the `round` helper of util/histogram.go. */
export function goRound(x: number): number {
  return goInt64(Math.floor(x + 0.5));
}

/** Go's math.Frexp: x = frac × 2^exp with frac in [0.5, 1). */
export function goFrexp(x: number): [number, number] {
  if (x === 0 || !Number.isFinite(x)) return [x, 0];
  let exp = 0;
  if (Math.abs(x) < SMALLEST_NORMAL) {
    x *= TWO_52;
    exp = -52;
  }
  const hi = highWord(x);
  exp += ((hi >>> 20) & 0x7ff) - 1022;
  return [withHighWord(x, (hi & ~(0x7ff << 20)) | (1022 << 20)), exp];
}

/** Go's math.Ldexp: frac × 2^exp, rounded once (only subnormal results round at all). */
export function goLdexp(frac: number, exp: number): number {
  if (frac === 0 || !Number.isFinite(frac)) return frac;
  if (Math.abs(frac) < SMALLEST_NORMAL) {
    frac *= TWO_52;
    exp -= 52;
  }
  const hi = highWord(frac);
  exp += ((hi >>> 20) & 0x7ff) - 1023;
  if (exp < -1075) return frac < 0 ? -0 : 0;
  if (exp > 1023) return frac < 0 ? -Infinity : Infinity;
  let m = 1;
  if (exp < -1022) {
    // Build the value 2^53 too large, then one multiplication rounds it into the subnormal range.
    exp += 53;
    m = TWO_MINUS_53;
  }
  return m * withHighWord(frac, (hi & ~(0x7ff << 20)) | ((exp + 1023) << 20));
}

function isOddInt(y: number): boolean {
  if (Math.abs(y) >= 2 ** 53) return false;
  return Number.isInteger(y) && Math.abs(y % 2) === 1;
}

/**
 * Go's math.Pow. Exact for integer exponents (the only ones upstream uses: bucket starts and the
 * confidence exponents ±1, ±2). A fractional exponent goes through exp/log, where Go's amd64 assembly
 * may differ from V8 in the last ulp; no upstream code path needs that case.
 */
export function goPow(x: number, y: number): number {
  if (y === 0 || x === 1) return 1;
  if (y === 1) return x;
  if (Number.isNaN(x) || Number.isNaN(y)) return Number.NaN;
  if (x === 0) {
    const negZero = Object.is(x, -0);
    if (y < 0) return negZero && isOddInt(y) ? -Infinity : Infinity;
    return negZero && isOddInt(y) ? x : 0;
  }
  if (!Number.isFinite(y)) {
    if (x === -1) return 1;
    return Math.abs(x) < 1 === y > 0 ? 0 : Infinity;
  }
  if (!Number.isFinite(x)) {
    if (x < 0) return goPow(1 / x, -y);
    return y < 0 ? 0 : Infinity;
  }
  if (y === 0.5) return Math.sqrt(x);
  if (y === -0.5) return 1 / Math.sqrt(x);

  let yi = Math.trunc(Math.abs(y));
  let yf = Math.abs(y) - yi;
  if (yf !== 0 && x < 0) return Number.NaN;
  if (yi >= TWO_63) {
    if (x === -1) return 1;
    return Math.abs(x) < 1 === y > 0 ? 0 : Infinity;
  }

  // ans = a1 × 2^ae
  let a1 = 1;
  let ae = 0;
  if (yf !== 0) {
    if (yf > 0.5) {
      yf--;
      yi++;
    }
    a1 = Math.exp(yf * Math.log(x));
  }

  // x^yi by repeated squaring over the bits of yi, lowest first, keeping the mantissa in [0.5, 1).
  let [x1, xe] = goFrexp(x);
  for (let i = BigInt(yi); i !== 0n; i >>= 1n) {
    if (xe < -(1 << 12) || 1 << 12 < xe) {
      // Catastrophic overflow: let Ldexp saturate.
      ae += xe;
      break;
    }
    if ((i & 1n) === 1n) {
      a1 *= x1;
      ae += xe;
    }
    x1 *= x1;
    xe <<= 1;
    if (x1 < 0.5) {
      x1 += x1;
      xe--;
    }
  }
  if (y < 0) {
    a1 = 1 / a1;
    ae = -ae;
  }
  return goLdexp(a1, ae);
}

/** A float64 from its IEEE-754 bits, so the constants below are exactly fdlibm's (e_exp.c). */
function fromBits(hi: number, lo: number): number {
  buffer.setUint32(0, hi);
  buffer.setUint32(4, lo);
  return buffer.getFloat64(0);
}

// The split of ln 2 (hi has trailing zero bits so t·LN2_HI is exact) and the Remez coefficients of e^r.
const LN2_HI = fromBits(0x3fe62e42, 0xfee00000); // 6.93147180369123816490e-01
const LN2_LO = fromBits(0x3dea39ef, 0x35793c76); // 1.90821492927058770002e-10
const P1 = fromBits(0x3fc55555, 0x55555555); // 1.66666666666666657415e-01
const P2 = fromBits(0xbf66c16c, 0x16bebd93); // -2.77777777770155933842e-03
const P3 = fromBits(0x3f11566a, 0xaf25de2c); // 6.61375632143793436117e-05
const P4 = fromBits(0xbebbbd41, 0xc5d26bf1); // -1.65339022054652515390e-06
const P5 = fromBits(0x3e663769, 0x72bea4d0); // 4.13813679705723846039e-08
const EXP2_OVERFLOW = 1.0239999999999999e3;
const EXP2_UNDERFLOW = -1.074e3;

/** e^(hi - lo) × 2^k for |hi - lo| ≤ ln(2)/2. */
function expMulti(hi: number, lo: number, k: number): number {
  const r = hi - lo;
  const t = r * r;
  const c = r - t * (P1 + t * (P2 + t * (P3 + t * (P4 + t * P5))));
  const y = 1 - (lo - (r * c) / (2 - c) - hi);
  return goLdexp(y, k);
}

/** Go's portable math.Exp2, as linux/amd64 runs it (decay factors, spec §2). */
export function goExp2(x: number): number {
  if (Number.isNaN(x) || x === Infinity) return x;
  if (x === -Infinity) return 0;
  if (x > EXP2_OVERFLOW) return Infinity;
  if (x < EXP2_UNDERFLOW) return 0;
  // x = k + t with k the nearest integer (halves away from zero) and |t| ≤ 0.5; 2^t = e^(t·ln 2).
  let k = 0;
  if (x > 0) k = Math.trunc(x + 0.5);
  else if (x < 0) k = Math.trunc(x - 0.5);
  const t = x - k;
  return expMulti(t * LN2_HI, -t * LN2_LO, k);
}

/** Go's uint32(x) for the checkpoint weights: x is already a rounded, non-negative int here. */
export function goUint32(x: number): number {
  const i = goInt64(x);
  // Go converts through int64 on amd64 and keeps the low 32 bits.
  return Number(BigInt.asUintN(32, BigInt(i)));
}
