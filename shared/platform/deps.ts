import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { type RuntimeConfig, readConfig } from './config.js';
import { EventBridgePublisher, type EventPublisher } from './publisher.js';

/**
 * The adapters a handler needs, built once per Lambda container from the environment. Endpoints come
 * from the SDK's own settings (AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_DYNAMODB, ...), which is how the local
 * runtime and LocalStack swap them: the handler code is the same everywhere.
 */
export interface Deps {
  config: RuntimeConfig;
  dynamo: DynamoDBClient;
  db: DynamoDBDocumentClient;
  publisher: EventPublisher;
}

let current: Deps | undefined;

export function deps(): Deps {
  if (!current) {
    const config = readConfig();
    const dynamo = new DynamoDBClient({ maxAttempts: 5 });
    current = {
      config,
      dynamo,
      db: DynamoDBDocumentClient.from(dynamo, { marshallOptions: { removeUndefinedValues: true } }),
      publisher: new EventBridgePublisher(new EventBridgeClient({ maxAttempts: 5 }), config.bus),
    };
  }
  return current;
}

/** Forget the built adapters (tests and the local runtime change the environment between runs). */
export function resetDeps(): void {
  current?.dynamo.destroy();
  current = undefined;
}

/**
 * A DynamoDB client that always sends through the current deps' client. Middlewares that capture a
 * client at import time (Powertools idempotency) then follow a reset of the adapters (tests, the local
 * runtime restarted in one process) instead of holding a destroyed client.
 */
export class CurrentDynamoClient extends DynamoDBClient {
  constructor() {
    super({});
    const delegate = (...args: unknown[]) => (deps().dynamo.send as (...a: unknown[]) => unknown)(...args);
    this.send = delegate as DynamoDBClient['send'];
  }
}
