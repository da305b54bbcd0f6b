/**
 * The soak's short configuration: runtimes in child processes killed with SIGKILL and racing, faults,
 * CLI commands on the same state; every invariant must hold. `npm run soak` is the full one.
 */
import { describe, expect, it } from 'vitest';
import { SHORT } from '../../soak/config.js';
import { formatReport } from '../../soak/report.js';
import { runSoak } from '../../soak/run.js';

describe('soak (short)', () => {
  it('keeps every invariant through faults, kills and a race', async () => {
    const report = await runSoak(SHORT);
    const broken = report.invariants.filter((i) => i.violations.length > 0);
    expect(broken, formatReport(report)).toEqual([]);
    expect(report.kills).toBe(SHORT.kills);
    expect(report.raceCycles).toBeGreaterThan(0);
    expect(Object.values(report.faults.applied).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    // Balloons were created and resized both ways; features were flipped.
    const said = formatReport(report);
    expect(report.balloons.pods, said).toBeGreaterThan(0);
    expect(report.balloons.inflates, said).toBeGreaterThan(0);
    expect(report.balloons.deflates, said).toBeGreaterThan(0);
    expect(report.flips.length).toBe(SHORT.flips.length);
    // Each lifecycle fault of issue 16 was hit (a reconciler frozen past its claim, an agent with a
    // skewed clock still using a feature it read off, a declared task failing until shown stuck): a fault
    // never injected would let its invariant hold over nothing.
    for (const [fault, n] of Object.entries(report.injected))
      expect(n, `${fault}\n${formatReport(report)}`).toBeGreaterThan(0);
    // Each check looked at something: a check over nothing would hold vacuously. (No dead letter is a
    // fine outcome, and so is no preemption: the check then counts the pods it watched.)
    const mayBeEmpty = ['every dead letter explained'];
    for (const i of report.invariants.filter((x) => !mayBeEmpty.includes(x.name)))
      expect(i.checked, i.name).toBeGreaterThan(0);
  }, 480_000);
});
