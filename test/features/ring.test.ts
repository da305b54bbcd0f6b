/**
 * Finding 5 of issue 16: the hash ring is the live set of reconcilers, not a fixed count. Reconcilers
 * announce themselves with heartbeat items (conditional writes, a TTL); a dead reconciler's share is
 * taken over within one claim period. On a manual clock, over the local DynamoDB server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.js';
import { CLAIM_MS } from '../../shared/features/machine.js';
import type { ReconcilerRing } from '../../shared/features/members.js';
import { DynamoClusterPass, DynamoReconcilerRing } from '../../shared/features/members-dynamo.js';
import { ownerAmong } from '../../shared/features/sharding.js';

const CLUSTERS = Array.from({ length: 60 }, (_, i) => `c${i}`);

describe('the ring of live reconcilers', () => {
  let runtime: LocalRuntime;
  let now = Date.UTC(2026, 10, 2);
  const clock = () => now;
  beforeAll(async () => {
    runtime = await startLocalRuntime({ retryDelayMs: 5 });
  });
  afterAll(async () => runtime?.stop());

  const ring = (id: string) => new DynamoReconcilerRing(runtime.db, runtime.table, id, clock);
  const share = async (r: ReconcilerRing) => {
    const live = await r.live();
    return CLUSTERS.filter((c) => ownerAmong(c, live) === r.id);
  };

  it('spreads clusters over the reconcilers that announced themselves, and takes a dead one share within a claim period', async () => {
    const [a, b, c] = [ring('shard-0'), ring('shard-1'), ring('shard-2')];
    for (const r of [a, b, c]) await r.announce();
    const shares = await Promise.all([a, b, c].map(share));
    expect(shares.flat().sort()).toEqual([...CLUSTERS].sort()); // each cluster has exactly one owner
    expect(shares.every((s) => s.length > 5)).toBe(true);

    // shard-2 dies (stops announcing); a and b go on announcing every pass (2 minutes).
    const orphaned = shares[2]!;
    let takenOverAt: number | undefined;
    const died = now;
    for (let t = 0; t <= CLAIM_MS + 2 * 60_000; t += 2 * 60_000) {
      now = died + t;
      await a.announce();
      await b.announce();
      const [sa, sb] = await Promise.all([share(a), share(b)]);
      if (takenOverAt === undefined && orphaned.every((o) => sa.includes(o) || sb.includes(o)))
        takenOverAt = now;
    }
    expect(takenOverAt, 'its share was taken over').toBeDefined();
    expect(takenOverAt! - died).toBeLessThanOrEqual(CLAIM_MS);
    expect((await a.live()).sort()).toEqual(['shard-0', 'shard-1']);
    // Only its clusters moved (rendezvous hashing).
    expect((await share(a)).filter((x) => !shares[0]!.includes(x)).every((x) => orphaned.includes(x))).toBe(
      true,
    );

    // It comes back: announced again, it owns its share again at once.
    await c.announce();
    expect(await share(c)).toEqual(orphaned);
  });

  it('a heartbeat never goes back in time (an older announcement of the same reconciler is refused)', async () => {
    const r = ring('shard-9');
    expect(await r.announce()).toBe(true);
    const later = now;
    now -= 60_000;
    expect(await r.announce()).toBe(false);
    now = later;
    expect(await r.live()).toContain('shard-9');
  });

  it('one pass over a cluster at a time: the event-triggered function leaves a cluster to the pass under way', async () => {
    const passes = new DynamoClusterPass(runtime.db, runtime.table, clock);
    let ran = 0;
    const owner = passes.run('c1', 'shard-0', async () => {
      // The event arrives while the owner's pass is on the cluster.
      expect(await passes.run('c1', 'features/ev', async () => ran++)).toBeUndefined();
      return 'owner';
    });
    expect(await owner).toBe('owner');
    expect(ran).toBe(0);
    expect(await passes.run('c1', 'features/ev', async () => ++ran)).toBe(1); // given back: free again
    // A holder that died: its pass lapses after a claim period.
    expect(await passes.take('c2', 'shard-1')).toBe(true);
    expect(await passes.take('c2', 'shard-0')).toBe(false);
    now += CLAIM_MS;
    expect(await passes.take('c2', 'shard-0')).toBe(true);
    await passes.release('c2', 'shard-1'); // not its holder any more: nothing given back
    expect(await passes.take('c2', 'features/ev')).toBe(false);
  });
});
