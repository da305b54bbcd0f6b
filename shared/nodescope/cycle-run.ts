/**
 * What the phases of one cluster's cycle share: the settings, the cluster snapshot (and its reader), the
 * cycle's clock, the write budget, the errors and resize reports gathered so far, and the CPU time per
 * phase. One CycleRun per invocation; nothing outlives it.
 */
import { ClusterSnapshot } from '../cycle/snapshot.js';
import type { ClusterClient } from '../k8s/client.js';
import { RawReader, type RawStats } from '../k8s/raw-reader.js';
import type { ResizeReport } from '../resize/index.js';
import type { MetricsState } from './collect.js';
import type { ContainerRec, NodeRec } from './model.js';
import type { RolloutOutcome } from './rollout.js';
import { DEFAULT_SETTINGS, type NodeScopeSettings } from './settings.js';
import type { NodeScopeStore } from './store.js';

export interface CycleLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
}

export interface CycleContext {
  cluster: string;
  cycleId: string;
  /** Sort key of this cycle's log entries: the schedule tick's time (ISO 8601), later for later cycles. */
  cycleKey: string;
  client: ClusterClient;
  store: NodeScopeStore;
  settings?: Partial<NodeScopeSettings>;
  /** The clock (default Date.now); the cycle's "now" is never earlier than what the cluster reports. */
  now?: () => number;
  /**
   * Keep every node's recommendation in the result (tests, tools). Off in the worker: a cluster's worth
   * of recommendation objects kept alive makes every later garbage collection of the cycle slower.
   */
  keepRecommendations?: boolean;
  logger?: CycleLogger;
  /**
   * The cycle's reads of nodes and pods, shared with other capabilities of the same invocation; built
   * here (pods per DaemonSet, not the whole cluster's) when absent.
   */
  snapshot?: ClusterSnapshot;
}

/** What one DaemonSet's part of a cycle did. */
export interface DsOutcome {
  namespace: string;
  name: string;
  vpa: string;
  updateMode: string;
  metrics: MetricsState;
  /** Nodes with a running pod, nodes the DaemonSet can run on, (container, node) states kept. */
  pods: number;
  eligible: number;
  scopes: number;
  fallbackNodes: number;
  samples: number;
  ooms: number;
  folded: boolean;
  logBytes: number;
  baseBytes: number;
  dsWide: Record<string, ContainerRec>;
  recs: Map<string, NodeRec>;
  resizes: {
    requested: number;
    completed: number;
    refused: number;
    skipped: number;
    /** Resizes whose memory was left as it runs: its limit would have gone below usage (memory-guard.ts). */
    memoryHeld?: number;
    /** Resizes due but not sent: outside the resize window, or held by a guard (guards/). */
    outsideWindow?: number;
    guarded?: number;
    /** Resizes sent shorter than due: the caps on one step (guards/caps.ts). */
    capped?: number;
  };
  /** Canary and revert (rollout-step.ts); absent where nothing is applied (mode Off, writes none). */
  rollout?: RolloutOutcome;
  annotated: number;
  statusPatched: boolean;
  /** DynamoDB request units this DaemonSet's part of the cycle used; log entries read since the base. */
  readUnits: number;
  writeUnits: number;
  pendingLogs: number;
  error?: string;
}

export interface OwnedReport {
  report: ResizeReport;
  owner: { kind: string; name: string };
  /** The resize put a harmed downsize back (rollout-step.ts): why, as the history says it. */
  revertOf?: string;
}

/** CPU time per phase of the cycle (ms), for the benchmark's breakdown. */
export class Phases {
  readonly ms: Record<string, number> = {};
  private last = process.cpuUsage();
  mark(name: string): void {
    const now = process.cpuUsage();
    this.ms[name] = (this.ms[name] ?? 0) + (now.user - this.last.user + now.system - this.last.system) / 1000;
    this.last = now;
  }
}

/** The cycle's cluster writes (resizes, annotations, VPA status), across all DaemonSets. */
export class Budget {
  used = 0;
  constructor(readonly limit: number) {}
  get left(): number {
    return Math.max(0, this.limit - this.used);
  }
  take(n = 1): boolean {
    if (this.used + n > this.limit) return false;
    this.used += n;
    return true;
  }
}

export function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export class CycleRun {
  readonly settings: NodeScopeSettings;
  readonly snapshot: ClusterSnapshot;
  readonly budget: Budget;
  readonly phases = new Phases();
  readonly errors: string[] = [];
  readonly reports: OwnedReport[] = [];
  /** The reader's counts when the cycle began: a snapshot shared with others may have read before. */
  private readonly statsAtStart: RawStats;
  private t = 0;

  constructor(readonly ctx: CycleContext) {
    this.settings = { ...DEFAULT_SETTINGS, ...ctx.settings };
    this.snapshot =
      ctx.snapshot ?? new ClusterSnapshot(new RawReader(ctx.client), { pageSize: this.settings.pageSize });
    this.budget = new Budget(this.settings.writeBudget);
    const s = this.snapshot.reader.stats;
    this.statsAtStart = { ...s, byOperation: { ...s.byOperation } };
  }

  get reader(): RawReader {
    return this.snapshot.reader;
  }
  get store(): NodeScopeStore {
    return this.ctx.store;
  }
  get cluster(): string {
    return this.ctx.cluster;
  }

  /** The cycle's time: the clock when it started, moved forward by what the cluster reports. */
  get now(): number {
    return this.t;
  }
  startClock(): void {
    this.t = (this.ctx.now ?? Date.now)();
  }
  observe(t: number): void {
    if (t > this.t) this.t = t;
  }

  /** The Kubernetes requests of this cycle (the reader's counts since the cycle began). */
  requestStats(): RawStats {
    const s = this.snapshot.reader.stats;
    const a = this.statsAtStart;
    const byOperation: Record<string, number> = {};
    for (const [op, n] of Object.entries(s.byOperation)) {
      const d = n - (a.byOperation[op] ?? 0);
      if (d > 0) byOperation[op] = d;
    }
    return {
      requests: s.requests - a.requests,
      writes: s.writes - a.writes,
      wireBytes: s.wireBytes - a.wireBytes,
      decodedBytes: s.decodedBytes - a.decodedBytes,
      byOperation,
      parseMs: s.parseMs - a.parseMs,
      pageMs: s.pageMs - a.pageMs,
      protobufFallbacks: s.protobufFallbacks - a.protobufFallbacks,
    };
  }
}
