import { describe, expect, it } from 'vitest';
import { COMPACT_LINES_PER_SECTION, compactSummary, fullSummary } from '../../local/summary.js';

const fleet = (age: string, nodes: number) => [
  'fleet: 2 cluster(s), 2 reachable',
  'CLUSTER  REACHABLE       NODES',
  `demo-1   yes (${age} ago)   ${nodes}`,
  `demo-2   yes (${age} ago)   8`,
];

describe("npm start's compact summary", () => {
  it('shows a changed row under its section headline, not a row whose only change is its age', () => {
    const out = compactSummary(
      't',
      [fleet('3s', 8), ['features: 3 On']],
      [fleet('5m', 9), ['features: 3 On']],
    );
    expect(out).toEqual(['--- t ---', 'fleet: 2 cluster(s), 2 reachable', '  demo-1   yes (5m ago)   9']);
  });

  it('counts what it leaves out of a section that changed a lot', () => {
    const before = ['nodescope: 1', ...Array.from({ length: 10 }, (_, i) => `n${i} 10m`)];
    const after = ['nodescope: 1', ...Array.from({ length: 10 }, (_, i) => `n${i} 20m`)];
    const out = compactSummary('t', [before], [after]);
    expect(out).toHaveLength(2 + COMPACT_LINES_PER_SECTION + 1);
    expect(out.at(-1)).toBe(`  ... ${10 - COMPACT_LINES_PER_SECTION} more changed line(s) of 10`);
  });

  it('shows a new section whole, and its headline once when the headline itself changed', () => {
    const out = compactSummary('t', [], [['features: 1 TurningOn', 'demo-1 balloons TurningOn']]);
    expect(out).toEqual(['--- t ---', 'features: 1 TurningOn', '  demo-1 balloons TurningOn']);
  });

  it('prints the full summary as sections separated by one blank line', () => {
    expect(fullSummary('t', [['a', 'b'], ['c']])).toEqual(['\n=== t ===', 'a', 'b', '', 'c']);
  });
});
