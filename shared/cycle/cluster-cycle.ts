/**
 * One cycle of one cluster: node scope, then balloons, over one snapshot of the cluster. The caller
 * decides which phases run (each as its feature allows) and sends what the cycle returns: its bus
 * events and metrics.
 */
import { createHash } from 'node:crypto';
import { balloonEvents, balloonMetrics } from '../balloons/events.js';
import type { BalloonCycleResult } from '../balloons/ledger.js';
import { loadBalloonItems, runBalloonPhase } from '../balloons/phase.js';
import type { BalloonSettings } from '../balloons/settings.js';
import type { BalloonStore } from '../balloons/store.js';
import type { ClusterClient } from '../k8s/client.js';
import { RawReader } from '../k8s/raw-reader.js';
import { nodescopeEvents, nodescopeMetrics, requestGrowth } from '../nodescope/bus-events.js';
import { type CycleLogger, type CycleResult, runCycle } from '../nodescope/cycle.js';
import type { NodeScopeSettings } from '../nodescope/settings.js';
import type { NodeScopeStore } from '../nodescope/store.js';
import type { DomainMetric } from '../platform/observability.js';
import type { OutgoingEvent } from '../platform/publisher.js';
import { clusterPrefix, type KeptLists } from './kept-lists.js';
import type { ListRead } from './resume.js';
import { ClusterSnapshot } from './snapshot.js';

export interface ClusterCycleInput {
  cluster: string;
  cycleId: string;
  /** The schedule tick's time (ISO 8601): the sort key of node scope's log entries. */
  cycleKey: string;
  client: ClusterClient;
  /** Where node scope keeps its histories, logs and recommendations (read only when `nodescope` is set). */
  nodescopeStore: NodeScopeStore;
  /** Where balloons keep their policies, sizes and state (read only when `balloons` is set). */
  balloonStore: BalloonStore;
  /** Page size of the snapshot's lists of nodes and pods. */
  pageSize: number;
  /** Node scope's settings; absent when node scope is off. */
  nodescope?: NodeScopeSettings;
  /** The balloons' settings; absent when balloons are off. */
  balloons?: Partial<BalloonSettings>;
  now: () => number;
  logger: CycleLogger;
  /**
   * The process's lists kept from earlier cycles (the function module's; absent: every list is read in
   * full). This cycle takes its nodes and pods up from them and leaves its own for the next.
   */
  kept?: KeptLists;
}

export interface ClusterCycleResult {
  /** How each large list was read: taken up from the kept one (and how many changes) or listed (why). */
  reads: Record<string, ListRead>;
  nodescope?: CycleResult;
  balloons?: BalloonCycleResult;
  events: OutgoingEvent[];
  metrics: DomainMetric[];
}

/** One cycle; once done, the idle sockets its reads and writes kept alive are closed (the next is a minute away). */
export async function runClusterCycle(input: ClusterCycleInput): Promise<ClusterCycleResult> {
  const reader = new RawReader(input.client);
  return reader.closingIdle(() => cycle(input, reader));
}

async function cycle(input: ClusterCycleInput, reader: RawReader): Promise<ClusterCycleResult> {
  const { cluster, cycleId, client } = input;
  // Balloons need every pod; when they run, node scope takes its pods from the same list.
  const balloonItems = input.balloons ? await loadBalloonItems(input.balloonStore, cluster) : undefined;
  const snapshot = new ClusterSnapshot(reader, {
    pageSize: input.pageSize,
    allPods: balloonItems?.configured ?? false,
    ...(input.kept ? { kept: { lists: input.kept, scope: keptScope(client), now: input.now } } : {}),
  });
  const requests = () => snapshot.reader.stats.requests + client.stats().requests;
  const fallbacksBefore = reader.stats.protobufFallbacks;
  const ns = input.nodescope ? await nodescopePhase(input, input.nodescope, snapshot) : undefined;
  const before = requests();
  const balloons = input.balloons
    ? await runBalloonPhase({
        cluster,
        cycleId,
        client,
        snapshot,
        store: input.balloonStore,
        settings: input.balloons,
        now: input.now,
        ...(ns ? { growth: requestGrowth(ns) } : {}),
        ...(balloonItems ? { items: balloonItems.items } : {}),
      })
    : undefined;
  const balloonRequests = requests() - before;
  const fallbacks = snapshot.reader.stats.protobufFallbacks - fallbacksBefore;
  if (fallbacks > 0)
    input.logger.warn('pods answered in protobuf did not decode: those lists were read as JSON', {
      cluster,
      lists: fallbacks,
    });
  return {
    reads: Object.fromEntries(snapshot.reads),
    ...(ns ? { nodescope: ns } : {}),
    ...(balloons ? { balloons } : {}),
    events: [
      ...(ns ? nodescopeEvents(cluster, ns) : []),
      ...(balloons ? balloonEvents(balloons, cycleId, balloonRequests) : []),
    ],
    metrics: [
      ...(ns ? nodescopeMetrics(ns).map(([name, n]): DomainMetric => [name, 'Count', n]) : []),
      ...(balloons ? balloonMetrics(balloons) : []),
    ],
  };
}

/**
 * Whose kept lists these are: the cluster's name, its API server and its certificate authority, so that
 * a name registered again for another cluster, or a cluster rebuilt behind the same address (a new CA),
 * does not take up the old one's lists.
 */
export function keptScope(client: ClusterClient): string {
  const ca = client.kubeConfig.getCurrentCluster()?.caData ?? '';
  return `${clusterPrefix(client.cluster)}${client.server} ${createHash('sha256').update(ca).digest('hex').slice(0, 16)}`;
}

function nodescopePhase(
  input: ClusterCycleInput,
  settings: NodeScopeSettings,
  snapshot: ClusterSnapshot,
): Promise<CycleResult> {
  return runCycle({
    cluster: input.cluster,
    cycleId: input.cycleId,
    cycleKey: input.cycleKey,
    client: input.client,
    snapshot,
    store: input.nodescopeStore,
    settings,
    now: input.now,
    keepRecommendations: false,
    logger: input.logger,
  });
}
