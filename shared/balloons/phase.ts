/**
 * The balloons phase of a cluster cycle, and an explicit request served at once: builds the cycle's
 * parts (store, in-cluster objects, resizer) for one cluster client and runs it.
 */
import type { ClusterSnapshot } from '../cycle/snapshot.js';
import type { NodeFacts } from '../cycle/views.js';
import type { ClusterClient } from '../k8s/client.js';
import { Resizer, rawResizeApi } from '../resize/index.js';
import { runBalloonCycle } from './cycle.js';
import { freshPods } from './fresh-read.js';
import { wanted } from './gate.js';
import { BalloonObjects } from './incluster.js';
import type { BalloonCycleResult } from './ledger.js';
import { nodeRead, snapshotRead } from './read.js';
import { type BalloonSettings, DEFAULT_BALLOON_SETTINGS } from './settings.js';
import type { BalloonItems, BalloonStore } from './store.js';

export interface BalloonPhaseInput {
  cluster: string;
  cycleId: string;
  client: ClusterClient;
  snapshot: ClusterSnapshot;
  store: BalloonStore;
  settings?: Partial<BalloonSettings>;
  now?: () => number;
  /** What node scope added to pods' requests earlier in the cycle (by pod uid). */
  growth?: ReadonlyMap<string, { cpu: number; memory: number }>;
  /** Deflate every balloon (turning balloons off). */
  drain?: boolean;
  /** Serve one node only (an explicit request), already read. */
  onlyNode?: NodeFacts;
  /** The cluster's balloon items, when the caller has read them already. */
  items?: BalloonItems;
}

export function runBalloonPhase(input: BalloonPhaseInput): Promise<BalloonCycleResult> {
  const settings = { ...DEFAULT_BALLOON_SETTINGS, ...input.settings };
  const now = input.now ?? Date.now;
  const api = rawResizeApi(input.snapshot.reader);
  return runBalloonCycle({
    cluster: input.cluster,
    cycleId: input.cycleId,
    store: input.store,
    objects: new BalloonObjects(input.client, input.snapshot.reader, settings.image),
    resizer: new Resizer(api, { now, backoff: settings.backoff }),
    api,
    read: input.onlyNode
      ? nodeRead(input.snapshot, input.onlyNode)
      : snapshotRead(input.snapshot, input.growth),
    fresh: freshPods(input.snapshot.reader),
    settings,
    now,
    ...(input.onlyNode ? { onlyNode: input.onlyNode.name } : {}),
    ...(input.drain ? { drain: true } : {}),
    ...(input.items ? { items: input.items } : {}),
  });
}

/**
 * A cluster's balloon items, read once: whether anything asks for balloons decides whether the cycle
 * lists every pod, and the same items are then handed to the phase (no second read).
 */
export async function loadBalloonItems(
  store: BalloonStore,
  cluster: string,
): Promise<{ items: BalloonItems; configured: boolean }> {
  const items = await store.load(cluster);
  return { items, configured: wanted(items, []) };
}
