/**
 * The CLI's read-only views (`fleetscope recommendations`, `checkpoints export`) read a DaemonSet's head,
 * the base it names and the log entries after it. Another invocation's fold between those reads moves the
 * head to a new base and deletes the old base's chunks and the entries it replayed. A view that pairs an
 * old head with logs read after that fold shows a history without the deleted entries' samples (a warm
 * process keeps the old base) or fails (the old chunks are gone). Whatever the order of the race, the
 * view must equal one read after the fold.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BaseCache } from '../../shared/nodescope/base-cache.js';
import { exportCheckpoints } from '../../shared/nodescope/checkpoints.js';
import { getRecommendations } from '../../shared/nodescope/query.js';
import type { NodeScopeStore } from '../../shared/nodescope/store.js';
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
const NO_FOLD = { foldEveryMs: 30 * DAY };

describe('a fold by another invocation while a CLI view reads', () => {
  let env: Env;
  beforeAll(async () => {
    env = await startEnv(
      ['warm', 'cold', 'again', 'export'].map((name, i) => ({
        name,
        nodes: 4,
        seed: 41 + i,
        vpaCrd: true,
        daemonSets: [agentDaemonSet()],
      })),
    );
    for (const c of ['warm', 'cold', 'again', 'export'])
      env.sim.cluster(c).store.put(VPA_RESOURCE, vpaObject({ mode: 'Off' }));
  });
  afterAll(async () => {
    await env?.stop();
  });

  /** Five logged cycles after a first base; `view` then races the fold of all five by another cycle. */
  async function raced<T>(
    cluster: string,
    warm: boolean,
    view: (s: NodeScopeStore) => Promise<T>,
    raceAfter?: string,
  ) {
    const mine = new RacedStore(env.runtime.db, env.runtime.table, new BaseCache());
    mine.after = raceAfter;
    await cycle(env, cluster, 5 * MINUTE, NO_FOLD);
    for (let i = 0; i < 5; i++) await cycle(env, cluster, 5 * MINUTE, NO_FOLD);
    if (warm) await view(mine); // the view's process keeps the base it read
    mine.between = async () => {
      const r = await cycle(env, cluster, 5 * MINUTE, { foldEveryMs: 1 });
      expect(r.daemonSets[0]?.folded).toBe(true);
    };
    const got = await view(mine);
    expect(mine.ran).toBe(1);
    const after = await view(new DynamoNodeScopeStore(env.runtime.db, env.runtime.table, new BaseCache()));
    return { got, after };
  }

  it.each([
    ['warm', true],
    ['cold', false],
  ] as const)('recommendations (live) equal a read after the fold (%s process)', async (cluster, warm) => {
    const { got, after } = await raced(cluster, warm, (s) =>
      getRecommendations(s, cluster, 'monitoring', 'agent', { live: true }),
    );
    expect(after && Object.keys(after.nodes).length).toBeGreaterThan(0);
    expect(got).toEqual(after);
  });

  it('reads again when the fold comes between the head read and its base (cold process)', async () => {
    const { got, after } = await raced(
      'again',
      false,
      (s) => getRecommendations(s, 'again', 'monitoring', 'agent', { live: true }),
      'getHead',
    );
    expect(after && Object.keys(after.nodes).length).toBeGreaterThan(0);
    expect(got).toEqual(after);
  });

  it('checkpoints export equals a read after the fold', async () => {
    const { got, after } = await raced('export', true, (s) =>
      exportCheckpoints(s, 'export', 'monitoring', 'agent'),
    );
    expect(after?.length).toBeGreaterThan(0);
    expect(got).toEqual(after);
  });
});
