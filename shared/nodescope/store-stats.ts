/**
 * A node scope store's usage counted alike by every adapter (./store.ts StoreStats), so that the bench
 * and a unit test read the same figures: request units at DynamoDB's on-demand rounding (a write per
 * 1 KB, a read per 4 KB, half for an eventually consistent read), the yardstick the cost arithmetic uses.
 */
import type { StoreStats } from './store.js';

export const emptyStats = (): StoreStats => ({
  reads: 0,
  writes: 0,
  bytesRead: 0,
  bytesWritten: 0,
  readUnits: 0,
  writeUnits: 0,
});

export function countWrite(stats: StoreStats, bytes: number): void {
  stats.writes++;
  stats.bytesWritten += bytes;
  stats.writeUnits += Math.max(1, Math.ceil(bytes / 1024));
}

export function countRead(stats: StoreStats, bytes: number, consistent: boolean): void {
  stats.reads++;
  stats.bytesRead += bytes;
  stats.readUnits += Math.max(1, Math.ceil(bytes / 4096)) * (consistent ? 1 : 0.5);
}

/** A record's stored size, approximately (attribute names and values as UTF-8 text, bytes by length). */
export function approxSize(item: Record<string, unknown> | undefined): number {
  if (!item) return 0;
  return Buffer.byteLength(
    JSON.stringify(item, (_k, v) => (v instanceof Uint8Array ? 'x'.repeat(v.length) : v)),
  );
}
