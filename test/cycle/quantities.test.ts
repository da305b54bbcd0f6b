/**
 * The cycle's quantity parsers remember short quantities: a remembered value must be the value parsing
 * gives, first time or later, before and after the bounded memory is emptied, and an invalid quantity
 * must still be refused each time.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cpuMillis, memoryBytes } from '../../shared/cycle/quantities.js';
import { formatCpu, formatMemory, parseCpu, parseMemory } from '../../shared/kernel/quantity.js';
import type { Bytes, Millicores } from '../../shared/kernel/units.js';

const quantity = fc
  .tuple(
    fc.oneof(fc.integer({ min: 0, max: 99 }), fc.integer({ min: 100, max: 99_999 })),
    fc.constantFrom('', 'm', 'n', 'u', 'k', 'M', 'G', 'Ki', 'Mi', 'Gi'),
  )
  .map(([n, s]) => `${n}${s}`);

describe('cpuMillis and memoryBytes', () => {
  it('give what parsing gives, remembered or not, across the memory being emptied', () => {
    // Every quantity twice over, in an order fast-check picks; far more distinct short quantities than
    // are remembered at once, so the memory is emptied on the way.
    const distinctShort = new Set<string>();
    let long = 0;
    fc.assert(
      fc.property(fc.array(quantity, { minLength: 50, maxLength: 200 }), (qs) => {
        for (let pass = 0; pass < 2; pass++)
          for (const q of qs) {
            if (q.length <= 6) distinctShort.add(q);
            else long++;
            expect(cpuMillis(q)).toBe(parseCpu(q));
            expect(memoryBytes(q)).toBe(parseMemory(q));
          }
      }),
      { numRuns: 300 },
    );
    expect(distinctShort.size).toBeGreaterThan(4096);
    expect(long).toBeGreaterThan(100);
  });

  it("read back what the annotations' formatters wrote as the exact parsers do", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 45 }), (v) => {
        const cpu = formatCpu(v as Millicores);
        const memory = formatMemory(v as Bytes);
        expect(cpuMillis(cpu)).toBe(parseCpu(cpu));
        expect(memoryBytes(memory)).toBe(parseMemory(memory));
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses an invalid quantity every time it is asked', () => {
    for (let i = 0; i < 2; i++) {
      expect(() => cpuMillis('1.2.3')).toThrow();
      expect(() => memoryBytes('12Q')).toThrow();
    }
  });
});
