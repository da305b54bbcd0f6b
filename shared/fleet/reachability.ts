/**
 * Whether a cluster was reachable is an observation of the last inventory, not a standing fact: shown
 * with its age, and as stale once the inventory that made it is older than two of its periods (the
 * control plane that took it may have stopped, as a stopped `npm start` does).
 */
import type { ClusterStatus } from './cluster.js';

/** The inventory's schedule period (shared/capabilities: inventory every 15 min). */
export const INVENTORY_PERIOD_MS = 15 * 60_000;
/** An observation older than this is stale: two inventories should have happened since. */
export const REACHABILITY_STALE_MS = 2 * INVENTORY_PERIOD_MS;

/** How long ago something happened, in the largest whole unit that reads well (`45s`, `3m`, `2h`, `4d`). */
export function ageText(iso: string, nowMs: number): string {
  const s = Math.max(0, Math.round((nowMs - Date.parse(iso)) / 1000));
  if (s < 120) return `${s}s ago`;
  if (s < 7200) return `${Math.round(s / 60)}m ago`;
  if (s < 172800) return `${Math.round(s / 3600)}h ago`;
  return `${Math.round(s / 86400)}d ago`;
}

export function isStale(status: Pick<ClusterStatus, 'observedAt'>, nowMs: number): boolean {
  return nowMs - Date.parse(status.observedAt) > REACHABILITY_STALE_MS;
}

/** `yes (3m ago)`, `no (45s ago)`, `stale: yes 2h ago`, or `never checked`. */
export function reachabilityText(
  status: Pick<ClusterStatus, 'reachable' | 'observedAt'> | undefined,
  nowMs: number,
): string {
  if (!status) return 'never checked';
  const seen = status.reachable ? 'yes' : 'no';
  const age = ageText(status.observedAt, nowMs);
  return isStale(status, nowMs) ? `stale: ${seen} ${age}` : `${seen} (${age})`;
}
