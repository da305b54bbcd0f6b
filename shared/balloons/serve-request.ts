/**
 * An explicit node size (NodeResizeRequested) served at once: checked against the node (it exists, the
 * size is within its allocatable) before anything is stored, then stored, then that node's balloon
 * resized, reading only that node and its pods. A refusal throws {@link ResizeRequestError}.
 */
import { ClusterSnapshot } from '../cycle/snapshot.js';
import type { ClusterClient } from '../k8s/client.js';
import { RawReader } from '../k8s/raw-reader.js';
import type { OutgoingEvent } from '../platform/publisher.js';
import { type Amounts, amounts } from './amounts.js';
import { balloonEvents } from './events.js';
import type { BalloonCycleResult } from './ledger.js';
import { runBalloonPhase } from './phase.js';
import { readNode } from './read.js';
import { checkAgainstNode, explicitRequest } from './requests.js';
import type { BalloonSettings } from './settings.js';
import type { BalloonStore } from './store.js';

export interface ServeRequestInput {
  cluster: string;
  /** The request, parsed. */
  node: string;
  size: Amounts;
  /** Who asked, for the audit trail. */
  requestedBy?: string;
  /** When it was asked (ISO 8601): names the cycle that serves it. */
  requestedAt: string;
  client: ClusterClient;
  store: BalloonStore;
  settings: Partial<BalloonSettings>;
  now: () => number;
}

export interface ServedRequest {
  result: BalloonCycleResult;
  events: OutgoingEvent[];
}

export async function serveResizeRequest(input: ServeRequestInput): Promise<ServedRequest> {
  const { cluster, node, size, client, now } = input;
  const snapshot = new ClusterSnapshot(new RawReader(client), { pageSize: 500 });
  const facts = await readNode(snapshot, node);
  checkAgainstNode(size, node, facts ? amounts(facts.allocatableCpu, facts.allocatableMemory) : undefined);
  await input.store.putRequest(
    cluster,
    explicitRequest(
      node,
      size,
      input.requestedBy ? `event: ${input.requestedBy}` : 'event',
      now(),
      facts?.uid,
    ),
  );
  const result = await runBalloonPhase({
    cluster,
    cycleId: `balloons/${input.requestedAt}/${node}`,
    client,
    snapshot,
    store: input.store,
    settings: input.settings,
    now,
    onlyNode: facts!,
  });
  const requests = snapshot.reader.stats.requests + client.stats().requests;
  return { result, events: balloonEvents(result, `request/${node}`, requests) };
}
