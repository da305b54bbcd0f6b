import { mkdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceInUseException,
} from '@aws-sdk/client-dynamodb';
import { createIdempotencyTableInput, createTableInput } from '../shared/platform/table.js';

export interface LocalDynamo {
  endpoint: string;
  stop(): Promise<void>;
}

/**
 * A real DynamoDB-protocol server (dynalite) on an ephemeral loopback port. With `path` it persists
 * under the state directory (LevelDB); without, it is in memory. One process at a time may hold a path.
 */
export async function startLocalDynamo(opts: { path?: string } = {}): Promise<LocalDynamo> {
  if (opts.path) await mkdir(opts.path, { recursive: true });
  // Loaded here, not at the top: a CLI command that reaches a running state server never needs it, and
  // loading dynalite and its LevelDB stack was a good part of a command's start.
  const { default: dynalite } = await import('dynalite');
  const server = dynalite({ path: opts.path, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        opts.path && /lock/i.test(String(err.message))
          ? new Error(`state directory ${opts.path} is in use by another fleetscope process`)
          : err,
      ),
    );
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

/** Creates fleetscope's tables from the definition the CDK stack deploys, if they are absent. */
export async function ensureTables(endpoint: string, names: { table: string; idempotencyTable: string }) {
  const client = new DynamoDBClient({
    endpoint,
    region: process.env.AWS_REGION ?? 'us-east-1',
    // dynalite takes any credentials; an emulator given real ones in the environment gets those.
    ...(process.env.AWS_ACCESS_KEY_ID
      ? {}
      : { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
  });
  try {
    for (const input of [
      createTableInput(names.table),
      createIdempotencyTableInput(names.idempotencyTable),
    ]) {
      try {
        await client.send(new DescribeTableCommand({ TableName: input.TableName }));
      } catch {
        try {
          await client.send(new CreateTableCommand(input));
        } catch (err) {
          if (!(err instanceof ResourceInUseException)) throw err;
        }
      }
    }
  } finally {
    client.destroy();
  }
}
