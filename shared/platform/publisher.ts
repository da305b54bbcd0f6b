import {
  type EventBridgeClient,
  PutEventsCommand,
  type PutEventsRequestEntry,
} from '@aws-sdk/client-eventbridge';
import type { Detail, DetailType } from './events.js';
import { detailSchemas, EVENT_SOURCE } from './events.js';

export interface OutgoingEvent<T extends DetailType = DetailType> {
  detailType: T;
  detail: Detail<T>;
  /** ARNs or names the event concerns (EventBridge `resources`). */
  resources?: string[];
}

/** Puts fleetscope events on the bus. */
export interface EventPublisher {
  publish(events: OutgoingEvent[]): Promise<void>;
}

const MAX_ENTRIES = 10; // PutEvents accepts at most 10 entries per request
const MAX_ATTEMPTS = 4;
/** PutEvents requests in flight at once: a 1,000-cluster fan-out is 100 requests, not 100 round trips. */
const PARALLEL_BATCHES = 8;

/**
 * EventBridge publisher: validates each detail against the catalogue (a bad event is a bug here, not
 * downstream), batches by 10 and re-sends only the entries a partial failure rejected.
 */
export class EventBridgePublisher implements EventPublisher {
  constructor(
    private readonly client: EventBridgeClient,
    private readonly busName: string,
  ) {}

  async publish(events: OutgoingEvent[]): Promise<void> {
    const entries: PutEventsRequestEntry[] = events.map((e) => {
      detailSchemas[e.detailType].parse(e.detail);
      return {
        EventBusName: this.busName,
        Source: EVENT_SOURCE,
        DetailType: e.detailType,
        Detail: JSON.stringify(e.detail),
        Resources: e.resources ?? [],
      };
    });
    const batches: PutEventsRequestEntry[][] = [];
    for (let i = 0; i < entries.length; i += MAX_ENTRIES) batches.push(entries.slice(i, i + MAX_ENTRIES));
    let next = 0;
    const worker = async () => {
      while (next < batches.length) await this.putBatch(batches[next++] as PutEventsRequestEntry[]);
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL_BATCHES, batches.length) }, worker));
  }

  private async putBatch(batch: PutEventsRequestEntry[]): Promise<void> {
    let pending = batch;
    for (let attempt = 1; pending.length > 0; attempt++) {
      const out = await this.client.send(new PutEventsCommand({ Entries: pending }));
      if (!out.FailedEntryCount) return;
      const failed = pending.filter((_, i) => out.Entries?.[i]?.ErrorCode);
      if (attempt >= MAX_ATTEMPTS) {
        const codes = [...new Set(out.Entries?.map((e) => e.ErrorCode).filter(Boolean))].join(', ');
        throw new Error(
          `EventBridge rejected ${failed.length} event(s) after ${attempt} attempts (${codes})`,
        );
      }
      pending = failed;
      await new Promise((r) => setTimeout(r, 100 * 2 ** attempt));
    }
  }
}
