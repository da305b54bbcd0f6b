/**
 * The faults a soak injects into every simulated cluster: a share of all requests answered 429 (with
 * Retry-After, rarest, since the client waits for it), 500, 503, or reset, a share of writes answered
 * 409, and a few responses slower than the client's timeout. Counts what was applied, by kind.
 */
import type { Faults } from '../local/sim/faults.js';
import type { Fault, FaultRule, Simulator } from '../local/sim/index.js';
import type { SoakConfig } from './config.js';

export function faultRules(cfg: SoakConfig): FaultRule[] {
  const r = cfg.faultRate;
  const rules: FaultRule[] = [
    { probability: r * 0.05, fault: { type: 'status', code: 429, retryAfterSeconds: 1 } },
    { probability: r * 0.25, fault: { type: 'status', code: 500 } },
    { probability: r * 0.25, fault: { type: 'status', code: 503 } },
    { probability: r * 0.2, fault: { type: 'reset' } },
  ];
  for (const method of ['PATCH', 'POST', 'PUT'])
    rules.push({ probability: r * 0.25, match: { method }, fault: { type: 'status', code: 409 } });
  if (cfg.slowResponses > 0)
    rules.push({ probability: 0.002, times: cfg.slowResponses, fault: { type: 'latency', ms: 10_500 } });
  return rules;
}

const label = (f: Fault) => (f.type === 'status' ? String(f.code) : f.type === 'latency' ? 'slow' : f.type);

/** Injects the rules and counts each fault applied; returns the counts and a way to stop faulting. */
export function injectFaults(sim: Simulator, cfg: SoakConfig) {
  const counts: Record<string, number> = {};
  const faults = sim.faults as Faults;
  const take = faults.take.bind(faults);
  faults.take = (...args) => {
    const out = take(...args);
    for (const f of out) counts[label(f)] = (counts[label(f)] ?? 0) + 1;
    return out;
  };
  for (const rule of faultRules(cfg)) faults.inject(rule);
  return { counts, clear: () => faults.clear() };
}
