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

/**
 * Parsed values of short quantities. A cycle parses the same few requests and limits ("250m", "128Mi")
 * hundreds of thousands of times (views, the resize state, what the scheduler counts); a lookup costs a
 * tenth of a parse. Usages (metrics-server's "123456789n", "12345Ki") are longer and nearly all distinct:
 * they are parsed, not remembered. Bounded: emptied when full.
 */
const SHORT = 6;
const REMEMBERED = 4096;
function remembered(
  cache: Map<string, number | undefined>,
  q: string,
  parse: (q: string) => number | undefined,
): number | undefined {
  if (q.length > SHORT) return parse(q);
  const hit = cache.get(q);
  if (hit !== undefined || cache.has(q)) return hit;
  const v = parse(q);
  if (cache.size >= REMEMBERED) cache.clear();
  cache.set(q, v);
  return v;
}
const cpuCache = new Map<string, number | undefined>();
const memoryCache = new Map<string, number | undefined>();

/** Millicores, rounded up ("1234567n" → 2). */
export function cpuMillis(q: string | number | undefined): number | undefined {
  if (q === undefined || q === null) return undefined;
  if (typeof q === 'number') return Math.ceil(q * 1000);
  return remembered(cpuCache, q, parseCpuText);
}

function parseCpuText(q: string): number | undefined {
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
  return remembered(memoryCache, q, parseMemoryText);
}

function parseMemoryText(q: string): number | undefined {
  const m = MEM_RE.exec(q);
  if (m) {
    const v = Number(m[1]) * (MEM_SCALE[m[2] as string] as number);
    if (v <= Number.MAX_SAFE_INTEGER) return v;
  }
  return parseMemory(q);
}
