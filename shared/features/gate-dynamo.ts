/** A worker's gate ports on the fleetscope table (the gate: ./gate.ts). */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { OutgoingEvent } from '../platform/publisher.js';
import type { GatePorts } from './gate.js';
import { DynamoFeatureStore } from './store-dynamo.js';

/** A worker's gate ports: its table, its bus (uses announced), its logger's warnings. */
export function workerGatePorts(
  deps: {
    db: DynamoDBDocumentClient;
    config: { table: string };
    publisher: { publish(events: OutgoingEvent[]): Promise<void> };
  },
  warn: GatePorts['warn'],
): GatePorts {
  return {
    store: new DynamoFeatureStore(deps.db, deps.config.table),
    publish: (e) => deps.publisher.publish(e),
    warn,
  };
}
