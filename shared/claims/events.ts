/**
 * Building the claims events (pure): ClusterClaimsChanged with old and new values, and
 * ClusterSetMembershipChanged. A claim value may hold 128 KiB and an EventBridge event at most 256 KB,
 * so values longer than EVENT_VALUE_BYTES are cut and carry their size and SHA-256.
 */
import { createHash } from 'node:crypto';
import type { Detail } from '../platform/events.js';
import type { OutgoingEvent } from '../platform/publisher.js';
import { utf8Bytes } from './rules.js';

export const EVENT_VALUE_BYTES = 256;
/** At most this many changes per ClusterClaimsChanged event (more are split over several events). */
export const EVENT_MAX_CHANGES = 16;

type ClaimsChanged = Detail<'ClusterClaimsChanged'>;
export type ClaimChange = ClaimsChanged['changes'][number];
export type ClaimsChangeReason = ClaimsChanged['reason'];

export function summarizeValue(value: string | undefined | null): ClaimChange['old'] {
  if (value === undefined || value === null) return null;
  const bytes = utf8Bytes(value);
  if (bytes <= EVENT_VALUE_BYTES) return { value, bytes, truncated: false };
  // Cut on a code point boundary, within the byte budget.
  let cut = '';
  let used = 0;
  for (const ch of value) {
    const n = utf8Bytes(ch);
    if (used + n > EVENT_VALUE_BYTES) break;
    cut += ch;
    used += n;
  }
  return {
    value: cut,
    bytes,
    truncated: true,
    sha256: createHash('sha256').update(value, 'utf8').digest('hex'),
  };
}

export function change(
  claim: string,
  oldValue: string | undefined,
  newValue: string | undefined,
): ClaimChange {
  return { claim, old: summarizeValue(oldValue), new: summarizeValue(newValue) };
}

/** One or more ClusterClaimsChanged events (split by EVENT_MAX_CHANGES); none when nothing changed. */
export function claimsChangedEvents(input: {
  cluster: string;
  clusterId?: string;
  clusterSet?: string;
  origin: ClaimsChanged['origin'];
  reason: ClaimsChangeReason;
  changes: ClaimChange[];
  at: Date;
}): OutgoingEvent<'ClusterClaimsChanged'>[] {
  const out: OutgoingEvent<'ClusterClaimsChanged'>[] = [];
  for (let i = 0; i < input.changes.length; i += EVENT_MAX_CHANGES) {
    out.push({
      detailType: 'ClusterClaimsChanged',
      detail: {
        cluster: input.cluster,
        ...(input.clusterId ? { clusterId: input.clusterId } : {}),
        ...(input.clusterSet ? { clusterSet: input.clusterSet } : {}),
        origin: input.origin,
        reason: input.reason,
        changes: input.changes.slice(i, i + EVENT_MAX_CHANGES),
        changedAt: input.at.toISOString(),
      },
      resources: [`cluster/${input.cluster}`],
    });
  }
  return out;
}

export function membershipChangedEvent(input: {
  cluster: string;
  clusterId: string;
  change: 'join' | 'leave' | 'move';
  from?: string;
  to?: string;
  reason: Detail<'ClusterSetMembershipChanged'>['reason'];
  at: Date;
}): OutgoingEvent<'ClusterSetMembershipChanged'> {
  return {
    detailType: 'ClusterSetMembershipChanged',
    detail: {
      cluster: input.cluster,
      clusterId: input.clusterId,
      change: input.change,
      ...(input.from ? { from: input.from } : {}),
      ...(input.to ? { to: input.to } : {}),
      reason: input.reason,
      changedAt: input.at.toISOString(),
    },
    resources: [
      `cluster/${input.cluster}`,
      ...[input.from, input.to].filter(Boolean).map((s) => `clusterset/${s}`),
    ],
  };
}
