/**
 * Another invocation folds a DaemonSet while a cycle reads its storage: the fold moves the head to a new
 * base and deletes the old base's chunks and the log entries it replayed. A cycle that pairs the head
 * (and the base it names, kept in process or read) with logs read on either side of that fold would
 * compute from a base without the samples of the deleted entries. The cycle must compute from a base and
 * logs that belong together: here, exactly what the other invocation's fold stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BaseCache } from '../../shared/nodescope/base-cache.js';
import type { CycleResult, DsOutcome } from '../../shared/nodescope/cycle.js';
import { DynamoNodeScopeStore } from '../../shared/nodescope/store-dynamo.js';
import {
  agentDaemonSet,
  cycle,
  type Env,
  MINUTE,
  RacedStore,
  startEnv,
  VPA_RESOURCE,
  vpaObject,
} from './helpers.js';

const DAY = 24 * 60 * MINUTE;
/** Never due within the test (the other invocation folds with a period of 1 ms). */
const NO_FOLD = { foldEveryMs: 30 * DAY };

const agent = (r: CycleResult): DsOutcome => {
  const o = r.daemonSets.find((d) => d.name === 'agent');
  if (!o) throw new Error(`no outcome for agent: ${JSON.stringify(r.detail.errors)}`);
  return o;
};

describe('a fold by another invocation between the head read and the log read', () => {
  let env: Env;
  beforeAll(async () => {
    env = await startEnv([
      { name: 'warm', nodes: 4, seed: 31, vpaCrd: true, daemonSets: [agentDaemonSet()] },
      { name: 'cold', nodes: 4, seed: 32, vpaCrd: true, daemonSets: [agentDaemonSet()] },
    ]);
    for (const c of ['warm', 'cold']) env.sim.cluster(c).store.put(VPA_RESOURCE, vpaObject({ mode: 'Off' }));
  });
  afterAll(async () => {
    await env?.stop();
  });

  it.each(['warm', 'cold'] as const)(
    'leaves the cycle computing from what that fold stored (%s process)',
    async (cluster) => {
      const mine = new RacedStore(env.runtime.db, env.runtime.table, new BaseCache());
      const other = new DynamoNodeScopeStore(env.runtime.db, env.runtime.table, new BaseCache());
      expect(agent(await cycle(env, cluster, 5 * MINUTE, NO_FOLD, mine)).folded).toBe(true); // the first base
      for (let i = 0; i < 5; i++)
        expect(agent(await cycle(env, cluster, 5 * MINUTE, NO_FOLD, mine)).pendingLogs).toBe(i);
      if (cluster === 'cold') mine.bases.clear();
      else expect(mine.bases.stats.hits).toBeGreaterThan(0); // the base is kept in process
      // The other invocation's cycle, at the same time, folds the five logged cycles and its own.
      let theirs: CycleResult | undefined;
      mine.between = async () => {
        theirs = await cycle(env, cluster, 0, { foldEveryMs: 1 }, other);
      };
      const raced = await cycle(env, cluster, 5 * MINUTE, NO_FOLD, mine);
      expect(mine.ran).toBe(1);
      const folded = agent(theirs as CycleResult);
      expect(folded.folded).toBe(true);
      expect(folded.pendingLogs).toBe(5);
      expect(raced.detail.errors).toEqual([]);
      const got = agent(raced);
      expect(got.folded).toBe(false);
      expect(got.recs.size).toBe(folded.recs.size);
      expect(got.recs.size).toBeGreaterThan(0);
      for (const [node, rec] of folded.recs) expect(got.recs.get(node)).toEqual(rec);
      expect(got.dsWide).toEqual(folded.dsWide);
    },
  );
});
