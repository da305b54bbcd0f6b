/**
 * Node scope's cycle on the in-memory store (issue 32): the same cycles over two identical simulated
 * clusters (one simulator each, same name and seed), one stored in DynamoDB (dynalite), one in
 * process, give the same recommendations, fold alike and count the same requests: what the port
 * promises is all the cycle relies on.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getRecommendations } from '../../shared/nodescope/query.js';
import type { NodeScopeStore } from '../../shared/nodescope/store.js';
import { MemoryNodeScopeStore } from '../../shared/nodescope/store-memory.js';
import { agentDaemonSet, cycle, type Env, MINUTE, startEnv, VPA_RESOURCE, vpaObject } from './helpers.js';

const CLUSTER = 'twin';
const DS = 'monitoring/agent';

async function twin(): Promise<Env> {
  const env = await startEnv([
    { name: CLUSTER, nodes: 4, seed: 31, vpaCrd: true, daemonSets: [agentDaemonSet()] },
  ]);
  env.sim.cluster(CLUSTER).store.put(VPA_RESOURCE, vpaObject({ mode: 'Off' }));
  return env;
}

const recommendations = (store: NodeScopeStore) =>
  getRecommendations(store, CLUSTER, 'monitoring', 'agent', { live: true });

describe('the node scope cycle on the in-memory store', () => {
  let onDynamo: Env;
  let onMemory: Env;
  const memory = new MemoryNodeScopeStore();
  beforeAll(async () => {
    [onDynamo, onMemory] = [await twin(), await twin()];
  });
  afterAll(async () => {
    await onDynamo?.stop();
    await onMemory?.stop();
  });

  it('recommends, folds and counts as the DynamoDB store does', async () => {
    const settings = { foldEveryMs: 30 * MINUTE };
    for (let i = 0; i < 16; i++) {
      const [d, m] = [onDynamo.store.stats.writes, memory.stats.writes];
      await cycle(onDynamo, CLUSTER, 5 * MINUTE, settings);
      const r = await cycle(onMemory, CLUSTER, 5 * MINUTE, settings, memory);
      expect(r.detail.errors).toEqual([]);
      expect(memory.stats.writes - m, `cycle ${i}: the same writes`).toBe(onDynamo.store.stats.writes - d);
    }
    const [dynamoHead, memoryHead] = [
      await onDynamo.store.getHead(CLUSTER, DS),
      await memory.getHead(CLUSTER, DS),
    ];
    expect(memoryHead?.gen).toBeGreaterThan(0);
    const folds = (h: typeof memoryHead) => [h?.gen, h?.chunks, h?.foldedThrough, h?.stats];
    expect(folds(memoryHead)).toEqual(folds(dynamoHead));
    const fromMemory = await recommendations(memory);
    expect(Object.keys(fromMemory?.nodes ?? {}).length).toBeGreaterThan(0);
    expect(fromMemory).toEqual(await recommendations(onDynamo.store));
    expect(memory.stats.reads).toBe(onDynamo.store.stats.reads);
  });
});
