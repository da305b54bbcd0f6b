/**
 * Fast parsing of the quantities a cycle reads tens of thousands of times (metrics-server usages,
 * container requests): the common shapes ("123456789n", "250m", "2", "12345Ki", "128Mi", "1000000")
 * in plain arithmetic, anything else through the exact BigInt parser. Both round up as
 * Quantity.MilliValue() / Value() do, which is what upstream's recommender reads.
 */
import { parseCpu, parseMemory } from '../kernel/quantity.js';

const CPU_RE = /^(\d{1,15})(n|u|m|)$/;
const MEM_RE = /^(\d{1,15})(Ki|Mi|Gi|Ti|k|M|G|)$/;
const MEM_SCALE: Record<string, number> = {
  '': 1,
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
  Ti: 1024 ** 4,
  k: 1e3,
  M: 1e6,
  G: 1e9,
};

/** Millicores, rounded up ("1234567n" → 2). */
export function cpuMillis(q: string | number | undefined): number | undefined {
  if (q === undefined || q === null) return undefined;
  if (typeof q === 'number') return Math.ceil(q * 1000);
  const m = CPU_RE.exec(q);
  if (m) {
    const n = Number(m[1]);
    switch (m[2]) {
      case 'n':
        return Math.ceil(n / 1e6);
      case 'u':
        return Math.ceil(n / 1e3);
      case 'm':
        return n;
      default:
        if (n * 1000 <= Number.MAX_SAFE_INTEGER) return n * 1000;
    }
  }
  return parseCpu(q);
}

/** Bytes, rounded up. */
export function memoryBytes(q: string | number | undefined): number | undefined {
  if (q === undefined || q === null) return undefined;
  if (typeof q === 'number') return Math.ceil(q);
  const m = MEM_RE.exec(q);
  if (m) {
    const v = Number(m[1]) * (MEM_SCALE[m[2] as string] as number);
    if (v <= Number.MAX_SAFE_INTEGER) return v;
  }
  return parseMemory(q);
}
