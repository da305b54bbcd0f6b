import { describe, expect, it } from 'vitest';
import { Faults } from '../../local/sim/faults.js';

describe('fault rules with a probability', () => {
  const hits = (probability: number, n: number) => {
    const f = new Faults();
    f.inject({ probability, fault: { type: 'status', code: 503 } });
    let hit = 0;
    for (let i = 0; i < n; i++) if (f.take('c', 'GET', '/api/v1/nodes', 'nodes').length > 0) hit++;
    return hit;
  };

  it('affects that share of matching requests', () => {
    expect(hits(0, 500)).toBe(0);
    expect(hits(1, 500)).toBe(500);
    const half = hits(0.5, 2000);
    expect(half).toBeGreaterThan(800);
    expect(half).toBeLessThan(1200);
  });

  it('refuses a probability outside 0..1, naming it', () => {
    expect(() => new Faults().inject({ probability: 2, fault: { type: 'reset' } })).toThrow(/probability/);
  });
});
