import { describe, expect, it } from 'vitest';
import {
  canonicalizeQuantity,
  compareQuantities,
  formatCpu,
  formatMemory,
  formatQuantity,
  formatUsageCpu,
  formatUsageMemory,
  parseCpu,
  parseMemory,
  parseQuantity,
  QuantityError,
} from '../../shared/kernel/quantity.js';
import { bytes, millicores } from '../../shared/kernel/units.js';

// Examples from k8s-api-facts.md section 4 (apimachinery quantity.go / quantity_test.go).
describe('canonical form', () => {
  it.each([
    ['1.5', '1500m'],
    ['1.08', '1080m'],
    ['0.001', '1m'],
    ['1000M', '1G'],
    ['1000m', '1'],
    ['0.1m', '100u'],
    ['1080000000n', '1080m'],
    ['5000000n', '5m'],
  ])('DecimalSI %s -> %s', (input, out) => expect(canonicalizeQuantity(input)).toBe(out));

  it.each([
    ['1024Mi', '1Gi'],
    ['1.5Gi', '1536Mi'],
    ['307200Ki', '300Mi'],
    ['.001Ki', '1024m'],
    ['1Ki', '1Ki'],
    ['2048Ki', '2Mi'],
  ])('BinarySI %s -> %s', (input, out) => expect(canonicalizeQuantity(input)).toBe(out));

  it.each([
    ['1e3', '1e3'],
    ['.001e12', '1e9'],
    ['1000e-12', '1e-9'],
    ['12E-3', '12e-3'],
  ])('DecimalExponent %s -> %s', (input, out) => expect(canonicalizeQuantity(input)).toBe(out));

  it('keeps plain bytes below 1024 and non-multiples as decimal', () => {
    expect(canonicalizeQuantity('1025')).toBe('1025');
    expect(canonicalizeQuantity('5')).toBe('5');
    expect(formatQuantity({ nanos: 500_000_000n, format: 'BinarySI' })).toBe('500m');
  });

  it('never converts between the decimal and binary families', () => {
    expect(canonicalizeQuantity('1G')).toBe('1G');
    expect(canonicalizeQuantity('1000Mi')).toBe('1000Mi');
    expect(compareQuantities(parseQuantity('1G'), parseQuantity('1Gi'))).toBe(-1);
    expect(compareQuantities(parseQuantity('1000m'), parseQuantity('1'))).toBe(0);
  });

  it('formats zero and negatives', () => {
    expect(canonicalizeQuantity('0')).toBe('0');
    expect(canonicalizeQuantity('0Mi')).toBe('0');
    expect(canonicalizeQuantity('-1.5')).toBe('-1500m');
    expect(canonicalizeQuantity('+2')).toBe('2');
  });

  it('falls back to an exponent above the largest SI suffix', () => {
    expect(canonicalizeQuantity('1000E')).toBe('1e21');
    expect(canonicalizeQuantity('1E')).toBe('1E');
  });
});

describe('parsing', () => {
  it('rounds up to the nearest nano, away from zero', () => {
    expect(parseQuantity('0.9n').nanos).toBe(1n);
    expect(parseQuantity('1.0000000001').nanos).toBe(1_000_000_001n);
    expect(parseQuantity('-0.1n').nanos).toBe(-1n);
  });

  it('is exact beyond 2^53 and caps BinarySI at 2^63-1', () => {
    expect(parseQuantity('18446744073709551616').nanos).toBe(18446744073709551616n * 1_000_000_000n);
    expect(parseQuantity('8Ei').nanos).toBe(((1n << 63n) - 1n) * 1_000_000_000n);
  });

  it('accepts bare JSON numbers', () => {
    expect(canonicalizeQuantity(0.5)).toBe('500m');
    expect(canonicalizeQuantity(2)).toBe('2');
  });

  it.each(['K', '1K', '1Kb', '1KB', '1mi', '1e', '1.5.5', 'abc', '', ' 1', '1 '])(
    'rejects %j with a QuantityError naming the input',
    (bad) => {
      expect(() => parseQuantity(bad)).toThrow(QuantityError);
      expect(() => parseQuantity(bad)).toThrow(JSON.stringify(bad));
    },
  );

  it('distinguishes a suffix error from a format error', () => {
    expect(() => parseQuantity('1mi')).toThrow("unable to parse quantity's suffix");
    expect(() => parseQuantity('1K')).toThrow("unable to parse quantity's suffix");
    expect(() => parseQuantity('1Kb')).toThrow('quantities must match the regular expression');
    expect(() => parseQuantity('1.5.5')).toThrow('quantities must match the regular expression');
  });

  it('treats a lone E as exa and e/E with digits as an exponent', () => {
    expect(parseQuantity('2E').nanos).toBe(2n * 10n ** 18n * 1_000_000_000n);
    expect(parseQuantity('2E2').nanos).toBe(200n * 1_000_000_000n);
    expect(parseQuantity('2e-3').format).toBe('DecimalExponent');
  });
});

describe('cpu and memory', () => {
  it('parseCpu rounds up to whole millicores like MilliValue', () => {
    expect(parseCpu('250m')).toBe(250);
    expect(parseCpu('2')).toBe(2000);
    expect(parseCpu('0.1m')).toBe(1);
    expect(parseCpu('123456789n')).toBe(124);
    expect(parseCpu('1.5')).toBe(1500);
  });

  it('parseMemory rounds up to whole bytes like Value', () => {
    expect(parseMemory('128Mi')).toBe(134217728);
    expect(parseMemory('1G')).toBe(1_000_000_000);
    expect(parseMemory('0.5')).toBe(1);
    expect(parseMemory('12345Ki')).toBe(12345 * 1024);
    expect(parseMemory('1e3')).toBe(1000);
  });

  it('formatCpu writes canonical DecimalSI', () => {
    expect(formatCpu(millicores(250))).toBe('250m');
    expect(formatCpu(millicores(2000))).toBe('2');
    expect(formatCpu(millicores(1500))).toBe('1500m');
    expect(formatCpu(millicores(0))).toBe('0');
    expect(formatCpu(millicores(3_000_000))).toBe('3k');
    expect(() => formatCpu(millicores(1.5))).toThrow(RangeError);
  });

  it('formatMemory writes canonical BinarySI', () => {
    expect(formatMemory(bytes(134217728))).toBe('128Mi');
    expect(formatMemory(bytes(1_000_000))).toBe('1000000');
    expect(formatMemory(bytes(1024))).toBe('1Ki');
    expect(formatMemory(bytes(1023))).toBe('1023');
    expect(formatMemory(bytes(16 * 2 ** 30))).toBe('16Gi');
    expect(formatMemory(bytes(0))).toBe('0');
  });

  it('round-trips', () => {
    for (const m of [1, 10, 250, 999, 1000, 1001, 3800, 64000])
      expect(parseCpu(formatCpu(millicores(m)))).toBe(m);
    for (const b of [1, 1023, 1024, 4096, 123456789, 2 ** 40])
      expect(parseMemory(formatMemory(bytes(b)))).toBe(b);
  });
});

describe('metrics-server usage formatting (facts section 3)', () => {
  it('writes nanocores, collapsing to larger suffixes when exact', () => {
    expect(formatUsageCpu(123456789)).toBe('123456789n');
    expect(formatUsageCpu(487558164)).toBe('487558164n');
    expect(formatUsageCpu(5_000_000)).toBe('5m');
    expect(formatUsageCpu(1_000_000_000)).toBe('1');
    expect(formatUsageCpu(1000)).toBe('1u');
    expect(formatUsageCpu(0)).toBe('0');
  });

  it('writes working-set bytes as Ki when divisible by 1024, else plain', () => {
    expect(formatUsageMemory(12345 * 1024)).toBe('12345Ki');
    expect(formatUsageMemory(732212 * 1024)).toBe('732212Ki');
    expect(formatUsageMemory(51200 * 1024)).toBe('50Mi');
    expect(formatUsageMemory(123456789)).toBe('123456789');
  });
});
