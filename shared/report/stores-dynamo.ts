/**
 * The report's stores over the fleetscope table: the one report module that is handed a DynamoDB
 * client. Each capability's store is its own adapter; this only wires them for gather.ts.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoBalloonStore } from '../balloons/store-dynamo.js';
import { DynamoClaimStore } from '../claims/store-dynamo.js';
import { DynamoClusterState } from '../features/cluster-state-dynamo.js';
import { danglingState } from '../features/dangling.js';
import { DynamoFeatureStore } from '../features/store-dynamo.js';
import { DynamoRegistry } from '../fleet/registry-dynamo.js';
import { DynamoNodeScopeStore } from '../nodescope/store-dynamo.js';
import type { ReportStores } from './gather.js';

export function reportStoresOn(db: DynamoDBDocumentClient, table: string): ReportStores {
  return {
    registry: new DynamoRegistry(db, table),
    nodescope: new DynamoNodeScopeStore(db, table),
    balloons: new DynamoBalloonStore(db, table),
    claims: new DynamoClaimStore(db, table),
    features: new DynamoFeatureStore(db, table),
    danglingState: (spec, cluster) =>
      danglingState(spec, { cluster, state: new DynamoClusterState(db, table) }),
  };
}
