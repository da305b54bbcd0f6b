/**
 * The simulator's model of the apiserver's watch cache reach (local/sim/watch-cache.ts): events younger
 * than 75 s are all kept however many there are; older ones are kept while there are no more than 100
 * (the lower bound); until the first eviction the cache reaches back to the revision it was filled at.
 */
import { describe, expect, it } from 'vitest';
import { EVENT_FRESH_MS, WatchCacheWindow } from '../../local/sim/watch-cache.js';

describe('WatchCacheWindow', () => {
  it('reaches back to its fill revision until an event is evicted', () => {
    const w = new WatchCacheWindow(50);
    for (let rv = 51; rv <= 150; rv++) w.record(rv, 0);
    expect(w.floor()).toBe(50);
    expect(w.newest()).toBe(150);
  });

  it('keeps every event younger than 75 s, growing past 100', () => {
    const w = new WatchCacheWindow(0);
    for (let rv = 1; rv <= 5000; rv++) w.record(rv, rv);
    expect(w.floor()).toBe(0);
  });

  it('evicts only when full: stale events stay until newer ones fill the grown cache', () => {
    const w = new WatchCacheWindow(0);
    // 1,000 events within 75 s: the capacity doubles 100 -> 1,600.
    for (let rv = 1; rv <= 1000; rv++) w.record(rv, 0);
    const later = EVENT_FRESH_MS + 1;
    for (let rv = 1001; rv <= 1600; rv++) w.record(rv, later);
    expect(w.floor()).toBe(0);
    // Full, and the oldest is stale: each new event evicts the oldest, until the oldest left is fresh
    // again (rv 1001, 75 s younger than the first thousand), when it grows again.
    for (let rv = 1601; rv <= 2700; rv++) w.record(rv, later);
    expect(w.floor()).toBe(1000);
    // 75 s on, a cache that is not full evicts nothing, however old its events.
    w.record(2701, later + EVENT_FRESH_MS + 1);
    expect(w.floor()).toBe(1000);
  });

  it('halves a full cache whose newest quarter is stale, keeping the newest', () => {
    const w = new WatchCacheWindow(0);
    for (let rv = 1; rv <= 200; rv++) w.record(rv, 0);
    w.record(201, EVENT_FRESH_MS + 1);
    // Capacity 200 -> 100: rvs 101..200 kept, then 101 evicted for the new one.
    expect(w.floor()).toBe(101);
  });
});
