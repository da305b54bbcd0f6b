/**
 * The faults a soak injects into every simulated cluster. A share of the requests gets a fault, and
 * which one is a weighted draw among the kinds that apply to that request: 429 (with Retry-After,
 * rarest, since the client waits for it), 500, 503, reset, and 409 for writes only. Writes are a small
 * share of the traffic, so they are faulted at a higher rate of their own: otherwise 409s (the only
 * write-only kind) would hardly ever be drawn. A few responses are slower than the client's timeout.
 *
 * The draw replaces the simulator's first-match rules (with which the kinds checked first starved the
 * later ones) through its `take`; nothing in the simulator changes. Counts each kind applied, and how
 * many requests each kind could have applied to.
 */
import type { Faults } from '../local/sim/faults.js';
import type { Fault, Simulator } from '../local/sim/index.js';
import { prng } from '../shared/kernel/prng.js';
import type { SoakConfig } from './config.js';

export interface FaultKind {
  label: string;
  weight: number;
  writesOnly?: boolean;
  fault: Fault;
}

export const FAULT_KINDS: FaultKind[] = [
  { label: '429', weight: 0.05, fault: { type: 'status', code: 429, retryAfterSeconds: 1 } },
  { label: '500', weight: 0.25, fault: { type: 'status', code: 500 } },
  { label: '503', weight: 0.25, fault: { type: 'status', code: 503 } },
  { label: 'reset', weight: 0.2, fault: { type: 'reset' } },
  { label: '409', weight: 0.25, writesOnly: true, fault: { type: 'status', code: 409 } },
];

const WRITES = new Set(['PATCH', 'POST', 'PUT']);
/** Writes are faulted this many times as often as reads (see above). */
export const WRITE_FAULT_BOOST = 5;
const SLOW: Fault = { type: 'latency', ms: 10_500 };
const SLOW_PROBABILITY = 0.002;

/** The kind drawn for one request (or none), given two uniform draws in [0, 1). */
export function drawFault(
  cfg: Pick<SoakConfig, 'faultRate'>,
  method: string,
  u1: number,
  u2: number,
): FaultKind | undefined {
  const write = WRITES.has(method.toUpperCase());
  const rate = Math.min(1, cfg.faultRate * (write ? WRITE_FAULT_BOOST : 1));
  if (u1 >= rate) return undefined;
  const kinds = FAULT_KINDS.filter((k) => write || !k.writesOnly);
  const total = kinds.reduce((a, k) => a + k.weight, 0);
  let x = u2 * total;
  for (const k of kinds) {
    x -= k.weight;
    if (x < 0) return k;
  }
  return kinds.at(-1);
}

export interface FaultCounts {
  /** Faults applied, by kind ("slow" for the slow responses). */
  applied: Record<string, number>;
  /** Requests each kind could have applied to (every request; writes for 409). */
  eligible: Record<string, number>;
}

/** Faults a share of every request; returns the counts and a way to stop faulting. */
export function injectFaults(sim: Simulator, cfg: SoakConfig) {
  const counts: FaultCounts = { applied: {}, eligible: {} };
  const random = prng(cfg.seed * 7919 + 1);
  const faults = sim.faults as Faults;
  const take = faults.take.bind(faults);
  let active = true;
  let slowLeft = cfg.slowResponses;
  const add = (m: Record<string, number>, k: string) => {
    m[k] = (m[k] ?? 0) + 1;
  };
  faults.take = (cluster, method, path, kind) => {
    const out = take(cluster, method, path, kind); // rules a test injects itself, if any
    if (!active) return out;
    const write = WRITES.has(method.toUpperCase());
    for (const k of FAULT_KINDS) if (write || !k.writesOnly) add(counts.eligible, k.label);
    const drawn = drawFault(cfg, method, random(), random());
    if (drawn && !out.some((f) => f.type !== 'latency')) {
      out.push(drawn.fault);
      add(counts.applied, drawn.label);
    }
    if (slowLeft > 0 && random() < SLOW_PROBABILITY) {
      slowLeft--;
      out.unshift(SLOW);
      add(counts.applied, 'slow');
    }
    return out;
  };
  return {
    counts,
    clear: () => {
      active = false;
      faults.clear();
    },
  };
}
