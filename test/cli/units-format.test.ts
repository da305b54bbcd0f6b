import { describe, expect, it } from 'vitest';
import { amountFields, change, readableCpu, readableMemory } from '../../shared/kernel/units-format.js';

describe('amounts for people and machines', () => {
  it('reads cores or millicores, Mi or Gi', () => {
    expect([readableCpu(250), readableCpu(2000), readableCpu(12_345)]).toEqual(['250m', '2', '12.3']);
    expect([readableMemory(128 * 2 ** 20), readableMemory(1.5 * 2 ** 30)]).toEqual(['128Mi', '1.5Gi']);
  });

  it("shows VPA's uncapped upper bound (1e14) as unbounded, not 100G or 97656250000Ki", () => {
    expect(readableCpu(1e14)).toBe('unbounded');
    expect(readableMemory(1e14)).toBe('unbounded');
    expect(amountFields({ cpu: 1e14, memory: 2 ** 20 })).toEqual({
      cpuMillicores: undefined,
      cpu: undefined,
      memoryBytes: 2 ** 20,
      memory: '1Mi',
      unbounded: ['cpu'],
    });
  });

  it('puts current next to recommended with the change', () => {
    expect(change(250, 300, readableCpu)).toBe('250m → 300m (+50m, +20%)');
    expect(change(2 ** 30, 768 * 2 ** 20, readableMemory)).toBe('1Gi → 768Mi (-256Mi, -25%)');
    expect(change(undefined, 300, readableCpu)).toBe('300m');
    expect(change(250, undefined, readableCpu)).toBe('250m');
  });
});

describe('numeric flags', () => {
  it('accept decimal numbers only', async () => {
    const { decimalFlag } = await import('../../cli/command.js');
    expect(decimalFlag('--n', '1.5')).toBe(1.5);
    expect(decimalFlag('--n', '30', { integer: true })).toBe(30);
    for (const bad of ['0x10', '1e3', '', ' 5', 'Infinity', '-1'])
      expect(() => decimalFlag('--n', bad), bad).toThrow(/--n needs a decimal number/);
    expect(() => decimalFlag('--n', '1.5', { integer: true })).toThrow(/an integer/);
  });
});
