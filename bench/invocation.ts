/**
 * What a measured invocation (cycle.ts, balloon-cycle.ts) is given, as a Lambda would be: its settings
 * from the environment, the cluster client, and DynamoDB in the dynalite process.
 */
import { readFileSync } from 'node:fs';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { ClusterClient } from '../shared/k8s/client.js';
import { CLUSTER } from './spec.js';

export const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
};

export function invocation() {
  const client = ClusterClient.fromKubeconfig(readFileSync(env('BENCH_KUBECONFIG'), 'utf8'), {
    cluster: CLUSTER,
    context: CLUSTER,
    timeoutMs: 60_000,
  });
  const dynamo = new DynamoDBClient({
    endpoint: env('BENCH_DYNAMO'),
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 5,
  });
  const db = DynamoDBDocumentClient.from(dynamo, { marshallOptions: { removeUndefinedValues: true } });
  return {
    client,
    db,
    close: async () => {
      await client.close();
      dynamo.destroy();
    },
  };
}
