/** A node's resize history stays bounded: the newest entries within the cap, none past the TTL, a repeated hold once. */
import { describe, expect, it } from 'vitest';
import {
  boundHistory,
  entryOfReport,
  HISTORY_CAP,
  HISTORY_TTL_MS,
  type HistoryEntry,
  repeats,
} from '../../../shared/nodescope/guards/history.js';

const entry = (at: number, over: Partial<HistoryEntry> = {}): HistoryEntry => ({
  at,
  outcome: 'requested',
  pod: 'agent-x',
  podUid: 'u1',
  ...over,
});

describe('the resize history', () => {
  it('keeps the newest HISTORY_CAP entries, none older than the TTL', () => {
    const now = 100 * HISTORY_TTL_MS;
    const old = Array.from({ length: HISTORY_CAP }, (_, i) => entry(now - HISTORY_TTL_MS + i));
    const added = [entry(now - 1), entry(now)];
    // At `now` the oldest has reached the TTL; of the 21 left, the newest 20.
    const kept = boundHistory(old, added, now);
    expect(kept).toHaveLength(HISTORY_CAP);
    expect(kept[0]).toEqual(entry(now - HISTORY_TTL_MS + 2));
    expect(kept.at(-1)).toEqual(entry(now));
    expect(boundHistory(old, [], now + HISTORY_TTL_MS + HISTORY_CAP)).toEqual([]);
  });

  it('says a hold by the same guard of the same pod once; a revert or another guard is new', () => {
    const held = entry(1, { outcome: 'guarded', by: 'LimitRange lr' });
    expect(repeats(held, { ...held, at: 2 })).toBe(true);
    expect(repeats(held, { ...held, by: 'ResourceQuota rq' })).toBe(false);
    expect(repeats(held, { ...held, podUid: 'u2' })).toBe(false);
    expect(repeats(held, entry(3, { outcome: 'reverted', reason: 'OOM-killed after the downsize' }))).toBe(
      false,
    );
  });

  it('reads each resize outcome as its entry', () => {
    const key = { namespace: 'ns', pod: 'agent-x', podUid: 'u1', node: 'n1', containers: [], at: 5 };
    expect(entryOfReport({ kind: 'resized', outcome: 'Completed', ...key }).outcome).toBe('actuated');
    const refused = (refusal: 'Deferred' | 'Infeasible' | 'ActuationError' | 'Forbidden') =>
      entryOfReport({ kind: 'refused', refusal, message: 'why', ...key });
    expect(refused('Deferred').outcome).toBe('deferred');
    expect(refused('Infeasible').outcome).toBe('infeasible');
    expect(refused('ActuationError')).toMatchObject({ outcome: 'error', reason: 'why' });
    expect(refused('Forbidden')).toMatchObject({ outcome: 'refused', refusal: 'Forbidden' });
  });
});
