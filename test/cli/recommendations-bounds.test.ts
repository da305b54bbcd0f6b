/**
 * Issue 31, item 6: a node row's UPPER read "unbounded" beside a finite DaemonSet-wide one, with nothing
 * to say why. Both are upstream's math (the node's row rests on less history); the table says so.
 */
import { describe, expect, it } from 'vitest';
import { boundsNote } from '../../cli/commands/recommendations-bounds.js';
import { UNBOUNDED_AMOUNT } from '../../shared/kernel/units-format.js';
import type { ContainerRec } from '../../shared/nodescope/model.js';

const rec = (upperCpu: number, upperMemory: number): ContainerRec => ({
  target: { cpu: 50, memory: 64 * 2 ** 20 },
  lowerBound: { cpu: 25, memory: 32 * 2 ** 20 },
  upperBound: { cpu: upperCpu, memory: upperMemory },
  uncappedTarget: { cpu: 50, memory: 64 * 2 ** 20 },
});
const node = (r: ContainerRec) => ({ containers: { agent: r } }) as never;

describe("recommendations get's note on upper bounds", () => {
  it('explains node rows unbounded beside a finite DaemonSet-wide row, counting them', () => {
    const note = boundsNote({
      dsWide: { agent: rec(6_019_800, 7276 * 2 ** 30) },
      nodes: {
        'n-1': node(rec(UNBOUNDED_AMOUNT, UNBOUNDED_AMOUNT)),
        'n-2': node(rec(UNBOUNDED_AMOUNT, 3 * 2 ** 30)),
        'n-3': node(rec(900, 3 * 2 ** 30)),
      },
    });
    expect(note).toMatch(
      /^note: 2 node row\(s\) read UPPER unbounded where the DaemonSet-wide row is finite/,
    );
    expect(note).toMatch(/pools every node's/);
  });

  it('says nothing when the rows agree', () => {
    const finite = rec(900, 3 * 2 ** 30);
    expect(boundsNote({ dsWide: { agent: finite }, nodes: { 'n-1': node(finite) } })).toBeUndefined();
    const none = rec(UNBOUNDED_AMOUNT, UNBOUNDED_AMOUNT);
    expect(boundsNote({ dsWide: { agent: none }, nodes: { 'n-1': node(none) } })).toBeUndefined();
  });
});
