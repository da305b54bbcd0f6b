import type { Logger } from '@aws-lambda-powertools/logger';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import type { MiddlewareObj } from '@middy/core';
import type { Deps } from './deps.js';
import type { DetailType } from './events.js';
import { EVENT_SOURCE } from './events.js';
import type { KubePermission } from './kube-permissions.js';

/**
 * What fleetscope runs, defined once. The CDK stack (infra/) turns each entry into AWS resources and the
 * local runtime (local/) wires the very same handlers to its stand-ins, so schedules, rules and functions
 * cannot drift between the cloud and a laptop.
 *
 * Each capability is a separable unit with its own functions, schedules and rules, so it can be enabled,
 * disabled and cleaned up on its own.
 */
export type FunctionId = string;

export interface FunctionSpec {
  id: FunctionId;
  /** Source file, relative to the repository root; it exports `handler`. */
  entry: string;
  description: string;
  memoryMb: number;
  timeoutSeconds: number;
  /** What it may touch: drives per-function least-privilege IAM. */
  access: {
    table: 'read' | 'readwrite';
    putEvents: boolean;
    /** Reads kubeconfig secrets under the configured name prefix. */
    kubeconfigSecrets: boolean;
    /** Event-triggered handlers record idempotency keys (EventBridge delivers at least once). */
    idempotency: boolean;
    /** Writes the fleet report: s3:PutObject under the report prefix of the report bucket, nothing else. */
    reportBucket?: boolean;
  };
  /** Files of installed packages (paths from the repository root) the Lambda bundle carries beside the handler. */
  bundleFiles?: string[];
  /** Lambda reserved concurrency: bounds the load on clusters and on Secrets Manager. */
  reservedConcurrency?: number;
  /** V8 flags the function runs with (NODE_OPTIONS, beside source maps); the bench's cycles use the same. */
  v8Flags?: string[];
}

export interface ScheduleSpec {
  id: string;
  description: string;
  /** Minutes between runs (EventBridge Scheduler rate expression). */
  everyMinutes: number;
  target: FunctionId;
  /** The scheduled invocation's payload. */
  input: Record<string, unknown>;
  /** Schedules that must run before this one in a `--once` cycle (dependency order). */
  after?: string[];
  /**
   * A schedule whose ticks this one leaves to it: it does not run when that one does (the cycle's
   * follow, which runs every minute between cycles: a follow and a cycle at once would go to two Lambda
   * instances, and the cycle would find none of the lists the other keeps). Both then run on the
   * minutes of the hour (both periods must divide 60), and a pass that runs that one (`--once`,
   * `fleetscope run`) does not run this one.
   */
  skips?: string;
}

/** The minutes of the hour a schedule runs at when ticks are shared out (`skips`), else undefined (a rate). */
export function scheduleMinutes(spec: ScheduleSpec, all: ScheduleSpec[]): number[] | undefined {
  const skipped = spec.skips ? all.find((s) => s.id === spec.skips) : undefined;
  if (spec.skips && !skipped) throw new Error(`schedule "${spec.id}" skips unknown schedule "${spec.skips}"`);
  const skippedBy = all.some((s) => s.skips === spec.id);
  if (!skipped && !skippedBy) return undefined;
  for (const s of [spec, ...(skipped ? [skipped] : [])])
    if (60 % s.everyMinutes !== 0)
      throw new Error(`schedule "${s.id}": ${s.everyMinutes} min does not divide the hour`);
  const minutes = Array.from({ length: 60 }, (_, m) => m).filter((m) => m % spec.everyMinutes === 0);
  return skipped ? minutes.filter((m) => m % skipped.everyMinutes !== 0) : minutes;
}

/** The schedules of one pass that runs all of `schedules`: without those that leave their ticks to one of them. */
export function oneTickOf(schedules: ScheduleSpec[]): ScheduleSpec[] {
  const ids = new Set(schedules.map((s) => s.id));
  return schedules.filter((s) => !s.skips || !ids.has(s.skips));
}

/** EventBridge event pattern (the subset fleetscope uses: exact values and prefix matching). */
export type EventPattern = {
  source: string[];
  'detail-type': DetailType[];
  detail?: Record<string, unknown>;
};

export interface RuleSpec {
  id: string;
  description: string;
  pattern: EventPattern;
  target: FunctionId;
}

/**
 * A capability: its functions, schedules, rules and permissions. F is what it is as a feature of each
 * cluster: the platform only carries it (shared/capabilities.ts binds it to the feature lifecycle's spec).
 */
export interface Capability<F = unknown> {
  id: string;
  description: string;
  functions: FunctionSpec[];
  schedules: ScheduleSpec[];
  rules: RuleSpec[];
  /** What its functions (and CLI commands) do in each cluster: `fleetscope rbac` turns it into RBAC. */
  kubernetes: KubePermission[];
  /** Capabilities whose permissions it needs too, because its work runs in their invocation (or they in its). */
  requires?: string[];
  /**
   * The capability as a feature of each cluster (KEP-3920): its default, and the tasks that turn it on
   * and off (FeatureSpec, shared/features/). Absent only for the platform's core, which is not switched per cluster.
   */
  feature?: F;
  /**
   * Context this capability adds to every invocation of every function that concerns a cluster (for
   * example the cluster's ID and ClusterSet on each log line and metric). Must never fail the invocation.
   */
  invocationContext?: (
    tools: { logger: Logger; metrics: Metrics; deps: () => Deps },
    clusterOf: (event: never) => string | undefined,
  ) => MiddlewareObj;
}

export function pattern(detailTypes: DetailType[], detail?: Record<string, unknown>): EventPattern {
  return { source: [EVENT_SOURCE], 'detail-type': detailTypes, ...(detail ? { detail } : {}) };
}
