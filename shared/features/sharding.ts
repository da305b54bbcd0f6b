/**
 * Which reconciler looks after which cluster, decided by deterministic hashing (KEP-3920 picks its
 * leader among the apiservers the same way, so that no extra traffic is needed): every reconciler
 * computes the same answer from the cluster's name and the number of reconcilers, with no lease, lock
 * or message. Rendezvous (highest random weight) hashing: when the number of reconcilers changes, only
 * the clusters of the added or removed one move. Correctness never depends on it: every state change is
 * a conditional write, so two reconcilers that disagree (a deploy changing the count) waste a write,
 * never take a step twice.
 */
import { createHash } from 'node:crypto';

const weight = (key: string, shard: number): bigint =>
  createHash('sha256').update(`${shard}\u0000${key}`).digest().readBigUInt64BE(0);

/** The shard (0..shards-1) that owns `key`. */
export function ownerOf(key: string, shards: number): number {
  if (!Number.isInteger(shards) || shards < 1)
    throw new Error(`shards must be a positive integer, not ${shards}`);
  let best = 0;
  let bestWeight = -1n;
  for (let s = 0; s < shards; s++) {
    const w = weight(key, s);
    if (w > bestWeight) {
      best = s;
      bestWeight = w;
    }
  }
  return best;
}

/**
 * The member of `members` (the live reconcilers' ids) that owns `key`, by the same rendezvous hashing:
 * when a member joins or leaves, only the keys it takes or held move. Undefined with no member.
 */
export function ownerAmong(key: string, members: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestWeight = -1n;
  for (const m of members) {
    const w = createHash('sha256').update(`${m}\u0000${key}`).digest().readBigUInt64BE(0);
    if (w > bestWeight || (w === bestWeight && best !== undefined && m < best)) {
      best = m;
      bestWeight = w;
    }
  }
  return best;
}

/** A stable order of keys for `seed` (a rollout's waves): the same seed orders them the same way. */
export function hashOrder<T>(items: readonly T[], keyOf: (t: T) => string, seed: string): T[] {
  const keyed = items.map((t) => ({ t, w: weight(`${seed}/${keyOf(t)}`, 0) }));
  return keyed.sort((a, b) => (a.w < b.w ? -1 : a.w > b.w ? 1 : 0)).map((k) => k.t);
}
