/**
 * What node scope keeps about each cluster, and the port it keeps it through ({@link NodeScopeStore}):
 *
 *   the cluster's last cycle    summary, refused targets, upstream VPA notices (ClusterRecord)
 *   a DaemonSet's head          base generation and chunk count, DaemonSet-wide recommendation, fold
 *                               bookkeeping, version (DsHead): the checkpoint's table of contents
 *   the base's chunks           packed, compressed node states (histograms) and recommendations of one
 *                               generation: immutable once the head names them
 *   the samples log             one cycle's samples since the base, per DaemonSet (immutable)
 *   the applied sizes           resize records, each node's pod requests, what the guards held back,
 *                               the rollout (ApplyRecord)
 *   a node's resize history     bounded entries (guards/history.ts)
 *
 * In domain terms only: a head is written over the version read or refused with {@link VersionConflict}
 * (another invocation folded first); a chunk, a log entry, the applied sizes and a history are written
 * only where the one read still stands, false when another writer got there first (lost the race),
 * never how a store found out. A fold is committed by the head write alone, so a crash at any point
 * leaves the old base or the new one, never a mix.
 * Adapters: ./store-dynamo.ts (the fleetscope table), ./store-memory.ts (in process, for unit tests),
 * held to one contract by test/nodescope/store-contract.test.ts.
 */
import type { Detail } from '../platform/events.js';
import type { ContainerPolicy } from '../recommendation/index.js';
import type { ResizeRecord } from '../resize/index.js';
import type { BaseCache } from './base-cache.js';
import type { HistoryEntry } from './guards/history.js';
import type { GuardsSummary } from './guards/summary.js';
import type { ContainerRec } from './model.js';
import type { PodRequests } from './pod-requests.js';
import type { RolloutRecord } from './rollout.js';
import type { TargetScope, TemplateContainer } from './targets.js';
import type { UpstreamNotice } from './upstream-vpa.js';

/** A DaemonSet's key in the store: "<ns>/<name>". */
export const dsKeyOf = (namespace: string, name: string) => `${namespace}/${name}`;

export interface DsHead {
  cluster: string;
  namespace: string;
  name: string;
  vpa: { namespace: string; name: string; uid: string };
  updateMode: string;
  /** The target digest the base was built for (containers and policies). */
  digest: string;
  containers: string[];
  /** The template's containers and the VPA's policies: enough to recommend from storage alone. */
  template: TemplateContainer[];
  policies: Record<string, ContainerPolicy>;
  /** Base generation (0: none yet) and its chunk count. */
  gen: number;
  chunks: number;
  /** When the base was written (ms), and the last cycle folded into it. */
  baseAt: number;
  foldedThrough: string;
  /** The DaemonSet-wide recommendation upstream VPA would give (default scope), as of the base. */
  dsWide: Record<string, ContainerRec>;
  /** The scope the base was built for (absent in heads written before scopes: node). */
  scope?: TargetScope;
  /** The groups' recommendations as of the base, by scope value (groups.ts groupsToHead: JSON). */
  groups?: string;
  /** Counts as of the base. */
  stats: {
    nodes: number;
    eligibleNodes: number;
    fallbackNodes: number;
    scopes: number;
    /** Sums over eligible nodes: per-node targets vs the DaemonSet-wide target on every node. */
    perNodeCpu: number;
    perNodeMemory: number;
    dsWideCpu: number;
    dsWideMemory: number;
    lastSampleAt: number;
  };
  /** Digest of the summary last written to the VPA's status. */
  statusDigest?: string;
  /** Unique per fold (base-cache.ts: what a base kept in process is checked against); absent in old heads. */
  baseId?: string;
  version: number;
}

export interface ClusterRecord {
  cluster: string;
  lastCycle: Detail<'NodeScopeCycleCompleted'>;
  /** Refused targets last reported (uid#reason), so each is reported once. */
  rejected: { namespace: string; vpa: string; uid: string; kind: string; name: string; reason: string }[];
  /** No resize request before this time: the server has no pods/resize (ms). */
  resizeUnsupportedUntil?: number;
  resizeUnsupported?: string;
  /** Upstream VPA as the last cycle found it (upstream-vpa.ts upstreamPhrase). */
  upstream?: string;
  /** Scoped VPAs left to another recommender, and warnings on those fleetscope sizes (each said once). */
  notices?: UpstreamNotice[];
}

/** One cycle's log entry as stored (codec.ts has its format). */
export interface StoredLog {
  cycle: string;
  data: Uint8Array;
}

export interface ApplyRecord {
  records: Record<string, ResizeRecord>;
  /** What each node's pod requested at the last cycle that saw them change. */
  requests?: PodRequests;
  /** What the guards held back at the last cycle that changed it (guards/summary.ts). */
  guards?: GuardsSummary;
  /** The canary wave, the downsizes a revert may follow, the hold and the reverts (rollout.ts). */
  rollout?: RolloutRecord;
  version: number;
}

/** What a cycle writes of the applied sizes (the version is the store's). */
export type ApplyWrite = Pick<ApplyRecord, 'records' | 'requests' | 'guards' | 'rollout'>;

/** One node's resize history (guards/history.ts), newest entry last. */
export interface NodeHistory {
  node: string;
  entries: HistoryEntry[];
  version: number;
}

/** A head write lost the race: its stored version is no longer the one read. */
export class VersionConflict extends Error {
  override name = 'VersionConflict';
}

/** The store's usage, for the bench and the cost arithmetic (./store-stats.ts counts it). */
export interface StoreStats {
  reads: number;
  writes: number;
  /** Bytes read and written (record payloads), and the request units they cost at on-demand rounding. */
  bytesRead: number;
  bytesWritten: number;
  readUnits: number;
  writeUnits: number;
}

export interface NodeScopeStore {
  /** What this store's reads and writes cost so far (a cycle reports the difference). */
  readonly stats: StoreStats;
  /** The decoded bases kept between cycles (base-cache.ts): fold.ts and state.ts consult it. */
  readonly bases: BaseCache;

  getCluster(cluster: string): Promise<ClusterRecord | undefined>;
  putCluster(rec: ClusterRecord): Promise<void>;

  getHead(cluster: string, ds: string): Promise<DsHead | undefined>;
  /** Heads of one cluster (without their chunks or logs), in DaemonSet key order. */
  listHeads(cluster: string): Promise<DsHead[]>;
  /** Every head of the fleet, by cluster then DaemonSet. */
  listAllHeads(): Promise<DsHead[]>;
  /** Writes the head if its stored version is still `expected` (0: none); else VersionConflict. */
  putHead(head: DsHead, expected: number): Promise<void>;
  deleteHead(cluster: string, ds: string): Promise<void>;

  /** Writes a chunk of a new generation; false when it exists (another invocation is folding). */
  putChunk(
    cluster: string,
    ds: string,
    gen: number,
    k: number,
    body: Uint8Array,
    now: number,
  ): Promise<boolean>;
  /** The chunks of a generation, in order; undefined when one is gone (a newer fold deleted it). */
  getChunks(cluster: string, ds: string, gen: number, count: number): Promise<Uint8Array[] | undefined>;
  deleteChunks(cluster: string, ds: string, gen: number, count: number): Promise<void>;

  /** Appends a cycle's samples; false when the cycle was already written (a redelivered event). */
  putLog(cluster: string, ds: string, cycle: string, body: Uint8Array, now: number): Promise<boolean>;
  /** Log entries after `after` (a cycle key), in cycle order. */
  listLogs(cluster: string, ds: string, after: string): Promise<StoredLog[]>;
  /** Every DaemonSet's log entries of one cluster, by DaemonSet, each in cycle order. */
  listClusterLogs(cluster: string): Promise<Map<string, StoredLog[]>>;
  deleteLogs(cluster: string, ds: string, cycles: readonly string[]): Promise<void>;

  /** The applied sizes (version 0 and no records when none were written). */
  getApply(cluster: string, ds: string): Promise<ApplyRecord>;
  /** Several DaemonSets' applied sizes, by DaemonSet key. */
  getApplies(cluster: string, dss: readonly string[]): Promise<Map<string, ApplyRecord>>;
  /** Writes the applied sizes if nobody else did since version `prev` was read; false: lost the race. */
  putApply(cluster: string, ds: string, apply: ApplyWrite, prev: number): Promise<boolean>;
  deleteApply(cluster: string, ds: string): Promise<void>;

  /** A node's history (version 0 and no entries when none was written). */
  getHistory(cluster: string, ds: string, node: string): Promise<NodeHistory>;
  /** Every node's history of a DaemonSet, in node order. */
  listHistory(cluster: string, ds: string): Promise<NodeHistory[]>;
  /**
   * Writes a node's history if nobody else did since version `prev` was read (false: lost the race);
   * it may be forgotten a while past `now` (guards/history.ts HISTORY_TTL_MS).
   */
  putHistory(
    cluster: string,
    ds: string,
    h: Omit<NodeHistory, 'version'>,
    prev: number,
    now: number,
  ): Promise<boolean>;
}
