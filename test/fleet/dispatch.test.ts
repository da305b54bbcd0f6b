/** Fan-out at fleet scale without servers: dispatch pages through the registry, publishes in parallel batches. */
import type { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { describe, expect, it } from 'vitest';
import type { RegisteredCluster } from '../../shared/fleet/cluster.js';
import { dispatchCycle } from '../../shared/fleet/dispatch.js';
import { EventBridgePublisher, type OutgoingEvent } from '../../shared/platform/publisher.js';

const cluster = (i: number, owner?: string): RegisteredCluster => ({
  name: `c-${i}`,
  kubeconfig: { kind: 'file', path: '/k.yaml' },
  labels: {},
  registeredAt: '2026-01-01T00:00:00Z',
  ...(owner ? { owner } : {}),
});

describe('dispatch at fleet scale', () => {
  it('publishes each registry page as it is read, only for clusters this control plane owns', async () => {
    const pages = [
      Array.from({ length: 600 }, (_, i) => cluster(i, i % 100 === 0 ? 'other@eu-west-1' : 'me@us-east-1')),
      Array.from({ length: 400 }, (_, i) => cluster(600 + i)),
    ];
    const published: OutgoingEvent[][] = [];
    const r = await dispatchCycle(
      'inventory',
      {
        async *pages() {
          for (const p of pages) yield p;
        },
      },
      { publish: async (events) => void published.push(events) },
      'me@us-east-1',
      new Date('2026-01-01T00:15:00Z'),
    );
    expect(r).toEqual({ dispatched: 994, ownedElsewhere: 6, pages: 2 });
    expect(published.map((p) => p.length)).toEqual([594, 400]);
    expect(published[0]![0]).toMatchObject({
      detailType: 'ClusterWorkRequested',
      detail: { cluster: 'c-1', capability: 'inventory', cycleId: 'inventory/2026-01-01T00:15:00.000Z' },
    });
  });

  it('sends 1,000 events as 100 PutEvents of 10, several in flight at once', async () => {
    let inFlight = 0;
    let most = 0;
    const sizes: number[] = [];
    const client = {
      send: async (cmd: { input: { Entries: unknown[] } }) => {
        inFlight++;
        most = Math.max(most, inFlight);
        sizes.push(cmd.input.Entries.length);
        await new Promise((r) => setTimeout(r, 2));
        inFlight--;
        return { FailedEntryCount: 0, Entries: cmd.input.Entries.map(() => ({ EventId: 'x' })) };
      },
    } as unknown as EventBridgeClient;
    const events = Array.from({ length: 1000 }, (_, i) => ({
      detailType: 'ClusterWorkRequested' as const,
      detail: {
        cluster: `c-${i}`,
        capability: 'inventory',
        cycleId: 'x',
        requestedAt: '2026-01-01T00:00:00Z',
      },
    }));
    await new EventBridgePublisher(client, 'fleetscope').publish(events);
    expect(sizes).toHaveLength(100);
    expect(new Set(sizes)).toEqual(new Set([10]));
    expect(most).toBe(8);
  });
});
