import { describe, expect, it } from 'vitest';
import {
  COMPACT_LINES_PER_SECTION,
  compactSummary,
  FULL_SUMMARY_EVERY_MS,
  fullSummary,
  Summaries,
} from '../../local/summary.js';
import { reachabilityText } from '../../shared/fleet/reachability.js';
import { clipWords, textTable } from '../../shared/kernel/text-table.js';

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

describe("npm start's summaries over three minutes of wall time (manual clock)", () => {
  const T0 = Date.parse('2026-12-01T10:00:00Z');
  /** The fleet table as fleetSummaryLines draws it: ages tick, and a longer one widens the column. */
  const fleetAt = (wall: number, nodes: number) => [
    'fleet: 1 cluster(s), 1 reachable',
    ...textTable([
      ['CLUSTER', 'REACHABLE', 'VERSION', 'NODES'],
      [
        'demo-1',
        reachabilityText({ reachable: true, observedAt: new Date(T0 - 9000).toISOString() }, wall),
        'v1.35.0',
        String(nodes),
      ],
    ]),
  ];

  it('finds no change in a table whose age column widened (9s ago -> 10s ago)', () => {
    // T0 - 9 s observed: 9s ago at T0, 10s ago a second later; and nothing at all to print.
    expect(compactSummary('t', [fleetAt(T0, 6)], [fleetAt(T0 + 1000, 6)])).toEqual([]);
  });

  it('prints only when something changed state, not when ages ticked', async () => {
    let wall = T0;
    let nodes = 6;
    const printed: string[] = [];
    const summaries = new Summaries(async () => [fleetAt(wall, nodes), ['features: 3 On']], {
      verbose: false,
      wallNow: () => wall,
      write: (t) => printed.push(t),
    });
    expect(await summaries.print()).toBe(true); // the first, in full
    for (let second = 1; second <= 180; second++) {
      wall = T0 + second * 1000;
      if (second === 90) nodes = 7; // the one change of state in three minutes
      await summaries.print('cycle');
    }
    // "yes (9s ago)" -> "yes (10s ago)" shifted every later cell: not a change.
    expect(printed).toHaveLength(2);
    expect(printed[0]).toMatch(/^\n=== summary 1 at 2026-12-01T10:00:00.000Z wall time ===/);
    expect(printed[1]!.split('\n')).toEqual([
      '--- summary 2 at 2026-12-01T10:01:30.000Z wall time (ran: cycle): what changed (Enter: full tables) ---',
      'fleet: 1 cluster(s), 1 reachable',
      expect.stringMatching(/^ {2}demo-1 +yes \(\d+s ago\) +v1\.35\.0 +7$/),
    ]);
  });

  it('still draws the full tables every five minutes of wall time, and on Enter', async () => {
    let wall = T0;
    const printed: string[] = [];
    const summaries = new Summaries(async () => [fleetAt(wall, 6)], {
      verbose: false,
      wallNow: () => wall,
      write: (t) => printed.push(t),
    });
    await summaries.print();
    wall += FULL_SUMMARY_EVERY_MS - 1000;
    expect(await summaries.print()).toBe(false);
    summaries.askFull();
    expect(await summaries.print()).toBe(true);
    wall += FULL_SUMMARY_EVERY_MS;
    expect(await summaries.print()).toBe(true);
    expect(printed.map((p) => p.split('\n')[1])).toEqual([
      expect.stringMatching(/summary 1 /),
      expect.stringMatching(/summary 2 /),
      expect.stringMatching(/summary 3 /),
    ]);
  });
});

describe("the summary's feature table", () => {
  it('cuts a long wait at a word, and says there is more', () => {
    const wait =
      'waiting 10m for components to stop using it (two cycle periods), then deletes the DaemonSet';
    const cell = clipWords(wait, 40);
    expect(cell).toBe('waiting 10m for components to stop…');
    expect(cell.length).toBeLessThanOrEqual(40);
    expect(clipWords('short', 40)).toBe('short');
  });
});
