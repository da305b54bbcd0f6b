import { describe, expect, it } from 'vitest';
import { OWNER_LEASE_SECONDS, ownerLeaseObject, ownershipOf } from '../../shared/fleet/ownership.js';

const lease = (holder: string, renewedMs: number) => ({
  holder,
  renewedMs,
  durationSeconds: OWNER_LEASE_SECONDS,
  resourceVersion: '1',
});

describe('a cluster owner lease', () => {
  const t = Date.parse('2026-11-26T18:00:00Z');
  it('is mine, free, held by another live control plane, or expired after its duration', () => {
    expect(ownershipOf(undefined, 'me', t)).toEqual({ kind: 'free' });
    expect(ownershipOf(lease('', t), 'me', t)).toEqual({ kind: 'free' });
    expect(ownershipOf(lease('me', 0), 'me', t)).toEqual({ kind: 'mine' });
    expect(ownershipOf(lease('them', t - 60_000), 'me', t)).toEqual({
      kind: 'other',
      holder: 'them',
      renewedAt: '2026-11-26T17:59:00.000Z',
    });
    const end = t - OWNER_LEASE_SECONDS * 1000;
    expect(ownershipOf(lease('them', end), 'me', t).kind).toBe('other');
    expect(ownershipOf(lease('them', end - 1), 'me', t)).toEqual({ kind: 'expired', holder: 'them' });
  });

  it('is written as a Lease with a MicroTime renewTime', () => {
    expect(ownerLeaseObject('me', t, '7')).toMatchObject({
      apiVersion: 'coordination.k8s.io/v1',
      metadata: { name: 'fleetscope-owner', namespace: 'fleetscope-system', resourceVersion: '7' },
      spec: {
        holderIdentity: 'me',
        leaseDurationSeconds: OWNER_LEASE_SECONDS,
        renewTime: '2026-11-26T18:00:00.000000Z',
      },
    });
  });
});
