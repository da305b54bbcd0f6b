import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalDynamo } from '../../local/dynamo.js';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.js';
import { DynamoRegistry } from '../../shared/fleet/registry-dynamo.js';

// A kubeconfig whose server refuses connections: the cluster is unreachable, quickly.
const unreachableKubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: gone, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: gone, user: {token: not-a-real-token}}]
contexts: [{name: gone, context: {cluster: gone, user: gone}}]
current-context: gone
`;

/** An inventory ClusterWorkRequested event as EventBridge delivers it to the handler. */
const inventoryRequested = (id: string, cluster: string, cycleId: string) => ({
  version: '0',
  id,
  'detail-type': 'ClusterWorkRequested',
  source: 'fleetscope',
  account: '000000000000',
  time: '2026-11-21T10:00:00Z',
  region: 'us-east-1',
  resources: [],
  detail: { cluster, capability: 'inventory', cycleId, requestedAt: '2026-11-21T10:00:00Z' },
});

describe('local runtime (dynalite, bus, scheduler, real handlers)', () => {
  let runtime: LocalRuntime;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetscope-runtime-'));
    runtime = await startLocalRuntime({ retryDelayMs: 5 });
  });
  afterAll(async () => {
    await runtime?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('dead-letters a scheduled invocation with malformed input after Lambda-style retries, naming the field', async () => {
    const ok = await runtime.invoker.invokeAsync('dispatch', { capability: 7 }, 'test');
    expect(ok).toBe(false);
    const dead = runtime.invoker.deadLetters.at(-1)!;
    expect(dead.functionId).toBe('dispatch');
    expect(dead.attempts).toBe(3);
    expect(dead.error).toContain('capability');
    expect(runtime.invoker.stats.get('dispatch')!.retries).toBeGreaterThanOrEqual(2);
  });

  it('fans a schedule out to every registered cluster and records an unreachable one without failing', async () => {
    const path = join(dir, 'gone.yaml');
    await writeFile(path, unreachableKubeconfig);
    const store = new DynamoRegistry(runtime.db, runtime.table);
    for (const name of ['gone-a', 'gone-b']) {
      await store.add({
        name,
        kubeconfig: { kind: 'file', path, context: 'gone' },
        labels: {},
        registeredAt: new Date().toISOString(),
      });
    }
    const before = runtime.invoker.deadLetters.length;
    await runtime.scheduler.runOnce();
    const requested = runtime.bus.log.filter(
      (e) =>
        e.detailType === 'ClusterWorkRequested' &&
        (e.detail as { capability: string }).capability === 'inventory',
    );
    expect(requested.map((e) => (e.detail as { cluster: string }).cluster).sort()).toEqual([
      'gone-a',
      'gone-b',
    ]);
    for (const name of ['gone-a', 'gone-b']) {
      const status = await store.getStatus(name);
      expect(status?.reachable).toBe(false);
      expect(status?.error).toMatch(/gone-a|gone-b|127\.0\.0\.1|connect|refused/i);
      expect(status?.error).not.toContain('not-a-real-token');
    }
    // Unreachable clusters are results, not failures: the cycle dead-lettered nothing.
    expect(runtime.invoker.deadLetters).toHaveLength(before);
  });

  it('runs an event-triggered handler once per event id, however often the event is delivered', async () => {
    const event = inventoryRequested('redelivered-event-1', 'gone-a', 'inventory/x');
    const published = () => runtime.bus.log.filter((e) => e.detailType === 'ClusterInventoried').length;
    const start = published();
    const first = await runtime.invoker.invoke('inventory', event);
    const second = await runtime.invoker.invoke('inventory', event);
    expect(second).toEqual(first);
    expect(published() - start).toBe(1);
  });
});

describe('local runtime restarted in one process', () => {
  it('puts the environment back on stop, and a second runtime works with fresh adapters', async () => {
    const before = process.env.FLEETSCOPE_TABLE;
    const first = await startLocalRuntime({ retryDelayMs: 5 });
    await first.stop();
    expect(process.env.FLEETSCOPE_TABLE).toBe(before);
    expect(process.env.AWS_ENDPOINT_URL_DYNAMODB).toBeUndefined();

    const second = await startLocalRuntime({ retryDelayMs: 5 });
    try {
      const event = inventoryRequested('after-restart-1', 'nobody', 'c');
      // The idempotency middleware captured its client when the handler was first imported; it must
      // follow the new runtime's DynamoDB rather than the stopped one.
      await expect(second.invoker.invoke('inventory', event)).resolves.toEqual({ skipped: true });
      await expect(second.invoker.invoke('inventory', event)).resolves.toEqual({ skipped: true });
      const records = await second.db.send(new ScanCommand({ TableName: second.idempotencyTable }));
      expect(records.Items?.map((i) => i.id)).toEqual([expect.stringMatching(/^inventory#/)]);
    } finally {
      await second.stop();
    }
  });
});

describe('local runtime on an AWS-compatible endpoint', () => {
  it('uses AWS_ENDPOINT_URL and FLEETSCOPE_TABLE instead of the embedded DynamoDB, creating the tables', async () => {
    // A second dynalite stands in for LocalStack: reached only through AWS_ENDPOINT_URL.
    const emulator = await startLocalDynamo();
    const saved = { url: process.env.AWS_ENDPOINT_URL, table: process.env.FLEETSCOPE_TABLE };
    process.env.AWS_ENDPOINT_URL = emulator.endpoint;
    process.env.FLEETSCOPE_TABLE = 'fleetscope-on-emulator';
    try {
      const rt = await startLocalRuntime({ retryDelayMs: 5 });
      try {
        expect(rt.dynamoEndpoint).toBe('aws');
        await new DynamoRegistry(rt.db, rt.table).add({
          name: 'via-emulator',
          kubeconfig: { kind: 'file', path: '/nonexistent', context: 'x' },
          labels: {},
          registeredAt: new Date().toISOString(),
        });
        expect(await rt.invoker.invoke('dispatch', { capability: 'inventory' })).toEqual({
          capability: 'inventory',
          dispatched: 1,
        });
      } finally {
        await rt.stop();
      }
      const direct = new DynamoDBClient({
        endpoint: emulator.endpoint,
        credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
      });
      const tables = await direct.send(new ListTablesCommand({}));
      direct.destroy();
      expect(tables.TableNames).toContain('fleetscope-on-emulator');
    } finally {
      for (const [k, v] of [
        ['AWS_ENDPOINT_URL', saved.url],
        ['FLEETSCOPE_TABLE', saved.table],
      ] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      await emulator.stop();
    }
  });
});
