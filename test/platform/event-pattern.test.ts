import { describe, expect, it } from 'vitest';
import { allRules } from '../../shared/capabilities.js';
import { matches } from '../../shared/platform/event-pattern.js';

const event = (detailType: string, detail: Record<string, unknown>) => ({
  version: '0',
  id: '1',
  'detail-type': detailType,
  source: 'fleetscope',
  detail,
});

describe('event patterns', () => {
  it('matches exact values, nested fields, prefix, anything-but and exists', () => {
    const e = event('ClusterWorkRequested', { capability: 'inventory', cluster: 'prod-1' });
    expect(matches({ source: ['fleetscope'] }, e)).toBe(true);
    expect(matches({ source: ['other'] }, e)).toBe(false);
    expect(matches({ detail: { capability: ['inventory', 'claims'] } }, e)).toBe(true);
    expect(matches({ detail: { capability: ['claims'] } }, e)).toBe(false);
    expect(matches({ detail: { cluster: [{ prefix: 'prod-' }] } }, e)).toBe(true);
    expect(matches({ detail: { cluster: [{ 'anything-but': ['prod-1'] }] } }, e)).toBe(false);
    expect(matches({ detail: { missing: [{ exists: false }] } }, e)).toBe(true);
    expect(matches({ detail: { missing: [{ exists: true }] } }, e)).toBe(false);
    expect(matches({ detail: { missing: ['x'] } }, e)).toBe(false);
  });

  it('routes each catalogue rule only to the events it names', () => {
    const work = event('ClusterWorkRequested', { capability: 'inventory', cluster: 'a' });
    const other = event('ClusterWorkRequested', { capability: 'something-else', cluster: 'a' });
    const registered = event('ClusterRegistered', { cluster: 'a' });
    const targets = (e: Record<string, unknown>) =>
      allRules()
        .filter((r) => matches(r.pattern, e))
        .map((r) => r.id);
    expect(targets(work)).toContain('inventory-on-request');
    expect(targets(other)).not.toContain('inventory-on-request');
    expect(targets(registered)).toContain('inventory-on-registration');
    expect(targets(registered)).not.toContain('inventory-on-request');
  });
});
