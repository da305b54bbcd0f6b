/**
 * A follow is never taken for a cycle, by a worker of any version, and never reaches a worker that
 * predates it during a deploy. The dispatch puts it on the bus as its own detail-type,
 * ClusterFollowRequested, which no rule for ClusterWorkRequested matches (the only rule a cycle worker
 * from before the follow had), and which the cycle's follow rule alone routes, to the cycle function.
 * That rule targets the function's ARN, so CloudFormation creates it after updating the function; a
 * follow sent before it exists matches no rule and is dropped, quietly (the next cycle lists).
 * ClusterWorkRequested keeps the shape it had before the follow, so old and new workers accept each
 * other's dispatches of a cycle.
 */
import { describe, expect, it } from 'vitest';
import { allRules } from '../../shared/capabilities.js';
import { CYCLE } from '../../shared/cycle/capability.js';
import type { RegisteredCluster } from '../../shared/fleet/cluster.js';
import { workRequests } from '../../shared/fleet/dispatch.js';
import { matches } from '../../shared/platform/event-pattern.js';
import { detailSchemas } from '../../shared/platform/events.js';
import type { OutgoingEvent } from '../../shared/platform/publisher.js';
import { busEvent } from '../support/bus-event.js';

const cluster: RegisteredCluster = {
  name: 'c-1',
  kubeconfig: { kind: 'file', path: '/k.yaml' },
  labels: {},
  registeredAt: '2026-01-01T00:00:00Z',
};
const now = new Date('2026-01-01T00:01:00Z');
const onBus = (e: OutgoingEvent) => busEvent(e.detailType, e.detail as Record<string, unknown>, now);
const routes = (e: OutgoingEvent) =>
  allRules()
    .filter((r) => matches(r.pattern, onBus(e)))
    .map((r) => r.id);

describe('a follow on the bus', () => {
  const [follow] = workRequests(CYCLE, [cluster], now, true);
  const [cycle] = workRequests(CYCLE, [cluster], now);

  it('is its own detail-type, routed by the follow rule alone, to the cycle function', () => {
    expect(follow?.detailType).toBe('ClusterFollowRequested');
    expect(routes(follow!)).toEqual(['cycle-follow-on-request']);
    expect(allRules().find((r) => r.id === 'cycle-follow-on-request')?.target).toBe(CYCLE);
    expect(routes(cycle!)).toEqual(['cycle-on-request']);
  });

  it('is matched by no rule for ClusterWorkRequested, the only kind a worker from before the follow knew', () => {
    const workRules = allRules().filter((r) => r.pattern['detail-type'].includes('ClusterWorkRequested'));
    expect(workRules.map((r) => r.id)).toContain('cycle-on-request');
    for (const r of workRules) expect(matches(r.pattern, onBus(follow!)), r.id).toBe(false);
  });

  it("leaves a cycle's request in the shape it had before the follow (the strict schemas of both versions accept it)", () => {
    expect(cycle?.detailType).toBe('ClusterWorkRequested');
    expect(Object.keys(cycle!.detail).sort()).toEqual(['capability', 'cluster', 'cycleId', 'requestedAt']);
    // A follow flag on a cycle's request is refused, never dropped: a lenient parse would run a cycle.
    const flagged = { ...cycle!.detail, follow: true };
    expect(detailSchemas.ClusterWorkRequested.safeParse(flagged).success).toBe(false);
  });
});
