/**
 * The demo's balloon narrative tells the truth of the tables printed above it (issue 31.5): it quotes
 * the same records (the pool as it ends is the balloons table's rows), says the units of every pair
 * ("7.9 cores / 31Gi"), and calls the demo's own resize what it is.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { balloonStory } from '../../local/demo-balloons.js';
import { type LocalControlPlane, startControlPlane } from '../../local/start.js';
import { localBalloonSummaryLines } from '../../local/summary.js';
import { deps } from '../../shared/platform/deps.js';

let plane: LocalControlPlane;
let story: string[];
let table: string[];

beforeAll(async () => {
  plane = await startControlPlane({
    kubeconfig: undefined,
    clusters: 1,
    nodes: 3,
    speedup: 60,
    stateDir: undefined,
    manualClock: true,
    say: () => {},
  });
  await plane.runtime.scheduler.runOnce();
  story = await balloonStory(plane.runtime, plane.fleet.demo!.sim, deps().publisher);
  table = await localBalloonSummaryLines(plane.runtime);
}, 240_000);
afterAll(async () => plane?.stop());

/** A pair as a table cell reads it ("7.9 / 31Gi") from its words ("7.9 cores / 31Gi"). */
const asCell = (words: string) => words.replace(/ cores?\b/g, '');

describe("npm start's balloon narrative", () => {
  it('ends with the pool as the balloons table shows it, node by node', () => {
    const now = story.at(-1)!;
    expect(now).toMatch(/^ {2}the pool now \(the balloons table above\): /);
    const told = [
      ...now.matchAll(
        /(elastic-\d) offers (\S+ \S+ \/ \S+|\S+ \/ \S+) of (\S+ \S+ \/ \S+|\S+ \/ \S+), balloon (\S+ \S+ \/ \S+|\S+ \/ \S+?)(?:;|$)/g,
      ),
    ];
    expect(told.map((m) => m[1])).toEqual(['elastic-1', 'elastic-2', 'elastic-3']);
    for (const [, node, offers, allocatable, balloon] of told) {
      const row = table.find((l) => l.trim().startsWith(`${node} `));
      expect(row, node).toBeDefined();
      // NODE POOL SOURCE ALLOCATABLE OFFERS BALLOON ...: the same figures, in the table's vocabulary.
      const cells = row!.trim().split(/\s{2,}/);
      expect(cells.slice(3, 6), node).toEqual([asCell(allocatable!), asCell(offers!), asCell(balloon!)]);
    }
  });

  it('says the unit of every pair of CPU and memory', () => {
    for (const line of story)
      for (const m of line.matchAll(/(\S+) \/ (\S+)/g))
        expect(`${m[0]} in: ${line}`).toMatch(/(m|cores?|unbounded) \/ \d[\d.]*(Mi|Gi|Ki|Ti)\b|^- \//);
  });

  it("calls the demo's own resize its own, not node scope's", () => {
    const resize = story.find((l) => l.includes('resize of netd'));
    expect(resize).toMatch(/the demo's own request, not node scope's target/);
    expect(story.join('\n')).not.toMatch(/node scope's per-node upsize/);
  });
});
