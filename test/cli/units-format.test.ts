import { describe, expect, it } from 'vitest';
import { textTable } from '../../shared/kernel/text-table.js';
import {
  amountFields,
  amountWords,
  change,
  pairCell,
  readableCpu,
  readableMemory,
} from '../../shared/kernel/units-format.js';

describe('amounts for people and machines', () => {
  it('reads cores or millicores, Mi or Gi', () => {
    expect([readableCpu(250), readableCpu(2000), readableCpu(12_345)]).toEqual(['250m', '2', '12.3']);
    expect([readableMemory(128 * 2 ** 20), readableMemory(1.5 * 2 ** 30)]).toEqual(['128Mi', '1.5Gi']);
  });

  it('uses one unit per magnitude: m only below a core, Mi only below a Gi', () => {
    expect([readableCpu(999), readableCpu(1000), readableCpu(2009), readableCpu(7910)]).toEqual([
      '999m',
      '1',
      '2.01',
      '7.91',
    ]);
    expect(readableCpu(31_900)).toBe('31.9');
    expect([readableMemory(1023 * 2 ** 20), readableMemory(29.6 * 2 ** 30)]).toEqual(['1023Mi', '29.6Gi']);
    expect(readableMemory(1023.7 * 2 ** 20)).toBe('1Gi');
    expect(pairCell({ cpu: 1e14, memory: 1e14 })).toBe('unbounded / unbounded');
    expect(pairCell({ cpu: 7910, memory: 29.6 * 2 ** 30 })).toBe('7.91 / 29.6Gi');
    expect(pairCell(undefined)).toBe('-');
  });

  it('says the unit of an amount in a sentence, where a bare number could be cores or millicores', () => {
    expect([amountWords('cpu', 500_000), amountWords('cpu', 1000), amountWords('cpu', 250)]).toEqual([
      '500 cores',
      '1 core',
      '250m',
    ]);
    expect(amountWords('memory', 2 ** 30)).toBe('1Gi');
  });

  it('fills an empty table cell with "-", never a blank', () => {
    expect(
      textTable([
        ['A', 'B', 'C'],
        ['x', '', 'z'],
      ]),
    ).toEqual(['A  B  C', 'x  -  z']);
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
