/**
 * The task stores' DynamoDB adapter (the port: TaskStores in ./spec.ts): the fleetscope table as a
 * performed task writes it, through the cluster state's and the capabilities' DynamoDB adapters. Every
 * write command (a clear-state delete, a hook's stored state) passes the task's fence first, as a
 * cluster write does, so a holder whose claim lapsed writes nothing there either (./claim-fence.ts).
 */
import {
  BatchWriteCommand,
  DeleteCommand,
  type DynamoDBDocumentClient,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { DynamoBalloonStore } from '../balloons/store-dynamo.js';
import { DynamoClaimStore } from '../claims/store-dynamo.js';
import { DynamoClusterState } from './cluster-state-dynamo.js';
import type { TaskStores } from './spec.js';

const DYNAMO_WRITES = [PutCommand, DeleteCommand, UpdateCommand, BatchWriteCommand, TransactWriteCommand];

/** The client whose every write command first passes `fence`. */
export function fencedClient(
  db: DynamoDBDocumentClient,
  fence: (operation: string) => Promise<void>,
): DynamoDBDocumentClient {
  return new Proxy(db, {
    get: (target, prop, receiver) => {
      if (prop !== 'send') {
        const v = Reflect.get(target, prop, receiver);
        return typeof v === 'function' ? v.bind(target) : v;
      }
      return async (command: object, ...rest: unknown[]) => {
        // By class, not by name: the bundles are minified.
        if (DYNAMO_WRITES.some((c) => command instanceof c)) await fence('dynamodb write');
        return (target.send as (...a: unknown[]) => unknown)(command, ...rest);
      };
    },
  });
}

export function dynamoTaskStores(db: DynamoDBDocumentClient, table: string): TaskStores {
  return {
    fenced(fence) {
      const fenced = fencedClient(db, fence);
      return {
        state: new DynamoClusterState(fenced, table),
        balloons: new DynamoBalloonStore(fenced, table),
        claims: new DynamoClaimStore(fenced, table),
      };
    },
  };
}
