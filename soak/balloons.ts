/**
 * Balloons in the soak: the first clusters (a share of the fleet) get an elastic node pool, a balloon
 * policy sizing it (what an operator stores with `fleetscope balloons policy set`), and a batch workload
 * that comes and goes between cycles, so that balloons are created, shrunk (pods arrive: the pool grows,
 * its balloons deflate) and grown (pods leave: after the cool-down, the balloons inflate again).
 * The soak changes pods straight in the simulator's store, as the cluster's users would: nothing of it
 * goes through the apiserver's handlers that the invariants observe.
 */

import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Simulator } from '../local/sim/index.js';
import { validatePolicy } from '../shared/balloons/policy.js';
import { DynamoBalloonStore } from '../shared/balloons/store-dynamo.js';
import type { SoakConfig } from './config.js';

export const POOL_LABEL = 'pool';
export const POOL = 'elastic';
const BATCH_NS = 'batch';
/** Batch pods per balloon cluster, at most: more than its elastic nodes can hold at their policy's max. */
const MAX_BATCH = 12;

export const SOAK_POLICY = validatePolicy({
  name: 'elastic',
  selector: `${POOL_LABEL}=${POOL}`,
  headroomPercent: 20,
  headroomMin: { cpu: '250m', memory: '512Mi' },
  min: { cpu: '500m', memory: '1Gi' },
  max: { cpu: '3500m', memory: '7Gi' },
  step: { cpu: '250m', memory: '256Mi' },
  // Two soak cycles: shrinks are held back now and then, growth never.
  shrinkCooldownMinutes: 4,
});

export const balloonClusters = (cfg: SoakConfig, names: string[]): string[] =>
  names.slice(0, Math.ceil(names.length * cfg.balloonShare));

/** Adds the elastic pool and a first batch workload to each balloon cluster (before registration). */
export function addElasticPools(sim: Simulator, cfg: SoakConfig, clusters: string[]): void {
  for (const name of clusters) {
    const c = sim.cluster(name);
    for (let i = 1; i <= cfg.elasticNodes; i++)
      c.addNode({
        name: `${name}-elastic-${i}`,
        cpu: '4',
        memory: '8Gi',
        reserved: { cpu: '100m', memory: '512Mi' },
        labels: { [POOL_LABEL]: POOL, 'kubernetes.io/os': 'linux' },
      });
    for (let i = 0; i < 2 * cfg.elasticNodes; i++) addBatchPod(sim, name);
  }
}

let batchSeq = 0;

function addBatchPod(sim: Simulator, cluster: string): void {
  const c = sim.cluster(cluster);
  if (!c.store.get('namespaces', BATCH_NS))
    c.store.put('namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: BATCH_NS } });
  c.store.put('pods', {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `batch-${++batchSeq}`, namespace: BATCH_NS, labels: { app: 'batch' } },
    spec: {
      nodeSelector: { [POOL_LABEL]: POOL },
      containers: [
        {
          name: 'work',
          image: 'registry.k8s.io/pause:3.10',
          resources: { requests: { cpu: '500m', memory: '1Gi' } },
        },
      ],
    },
  });
}

/** Batch pods come and go: 1-3 arrive or 1-3 finish (deleted), on a share of the balloon clusters. */
export function changeWorkloads(
  sim: Simulator,
  cfg: SoakConfig,
  clusters: string[],
  random: () => number,
): { added: number; removed: number } {
  const out = { added: 0, removed: 0 };
  for (const name of clusters) {
    if (random() >= cfg.workloadChange) continue;
    const c = sim.cluster(name);
    const pods = c.store.list('pods', BATCH_NS);
    const n = 1 + Math.floor(random() * 3);
    if (pods.length === 0 || (pods.length < MAX_BATCH && random() < 0.5)) {
      for (let i = 0; i < n && pods.length + i < MAX_BATCH; i++, out.added++) addBatchPod(sim, name);
    } else {
      for (const p of pods.slice(0, n)) {
        c.store.delete('pods', p.metadata.name, BATCH_NS);
        out.removed++;
      }
    }
  }
  return out;
}

/**
 * The clean cycles' workload, scripted so that both resizes happen where no fault, kill or race can
 * decide it, per cluster from the first clean cycle its balloons are On (`started`, filled by the caller:
 * they may come On only during the clean cycles, after a flip or a registration again late in the run,
 * and balloons left at the floor by an earlier turn-off are not resized before then): the batch is
 * back to its first size at once (balloons deflate if they held that room), and it finishes two cycles
 * later (balloons inflate once the shrink cool-down has passed). A random workload alone could end the
 * run without an inflate: a pool whose batch was gone when its balloons were turned on gets them at
 * their full size, with no resize at all; so could a script on fixed cycles, run before the balloons.
 */
export function settleWorkloads(
  sim: Simulator,
  cfg: SoakConfig,
  clusters: string[],
  settleCycle: number,
  started: Map<string, number>,
): { added: number; removed: number } {
  const out = { added: 0, removed: 0 };
  for (const name of clusters) {
    const c = sim.cluster(name);
    const from = started.get(name);
    if (from === undefined) continue;
    const pods = c.store.list('pods', BATCH_NS);
    if (settleCycle === from)
      for (let i = pods.length; i < 2 * cfg.elasticNodes; i++, out.added++) addBatchPod(sim, name);
    if (settleCycle === from + 2)
      for (const p of pods) {
        c.store.delete('pods', p.metadata.name, BATCH_NS);
        out.removed++;
      }
  }
  return out;
}

/** Stores the soak's policy for the cluster unless it has one (the operator's step after turning on). */
export async function ensurePolicy(db: DynamoDBDocumentClient, table: string, cluster: string) {
  const store = new DynamoBalloonStore(db, table);
  const items = await store.load(cluster);
  if (items.policies.some((p) => p.name === SOAK_POLICY.name)) return false;
  await store.putPolicy(cluster, SOAK_POLICY);
  return true;
}
