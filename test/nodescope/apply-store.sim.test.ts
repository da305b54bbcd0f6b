/**
 * The apply item (resize records and what each node's pod requests) of a DaemonSet on a large cluster:
 * 5,000 nodes' requests must fit DynamoDB's 400 KB item limit, and an item written before the requests
 * were packed still reads back.
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.js';
import { type PodRequests, sameRequests } from '../../shared/nodescope/pod-requests.js';
import type { NodeScopeStore } from '../../shared/nodescope/store.js';
import { DynamoNodeScopeStore } from '../../shared/nodescope/store-dynamo.js';

let runtime: LocalRuntime;
let store: NodeScopeStore;
beforeAll(async () => {
  runtime = await startLocalRuntime({ retryDelayMs: 5 });
  store = new DynamoNodeScopeStore(runtime.db, runtime.table);
});
afterAll(() => runtime.stop());

/** Requests as a 5,000-node cluster's pods of one DaemonSet carry them, after some resizes. */
function requestsOf(nodes: number): PodRequests {
  const out: PodRequests = {};
  for (let i = 0; i < nodes; i++)
    out[`ip-10-${(i >> 16) & 255}-${(i >> 8) & 255}-${i & 255}.eu-west-1.compute.internal`] = {
      'prometheus-node-exporter': { cpu: 40 + (i % 37) * 7, memory: 33_554_432 + (i % 91) * 1_048_576 },
      'kube-rbac-proxy-sidecar': { cpu: 20, memory: 33_554_432 },
    };
  return out;
}

describe('the apply item', () => {
  it("holds 5,000 nodes' requests and reads them back as they were", async () => {
    const requests = requestsOf(5000);
    const ok = await store.putApply('big', 'monitoring/node-exporter', { records: {}, requests }, 0);
    expect(ok).toBe(true);
    const back = await store.getApply('big', 'monitoring/node-exporter');
    expect(back.version).toBe(1);
    expect(back.requests).toEqual(requests);
    expect(sameRequests(back.requests, requests)).toBe(true);
    // Written again on top of its version, and refused on a stale one.
    expect(await store.putApply('big', 'monitoring/node-exporter', { records: {}, requests }, 1)).toBe(true);
    expect(await store.putApply('big', 'monitoring/node-exporter', { records: {}, requests }, 1)).toBe(false);
  });

  it('reads an item written with the requests as a plain map', async () => {
    const requests = requestsOf(3);
    await runtime.db.send(
      new PutCommand({
        TableName: runtime.table,
        Item: {
          pk: 'CLUSTER#old',
          sk: 'nodescope#apply#monitoring/node-exporter',
          records: {},
          requests,
          version: 4,
        },
      }),
    );
    const back = await store.getApply('old', 'monitoring/node-exporter');
    expect(back).toEqual({ records: {}, requests, version: 4 });
  });
});
