/**
 * nodescope's settings. The defaults are what the cost arithmetic in bench/ and docs/nodescope.md assume.
 */
import { envNumber } from '../kernel/env.js';
import type { BackoffPolicy } from '../resize/index.js';
import { DEFAULT_UPDATER, type UpdaterSettings } from './apply.js';
import { DEFAULT_HOLD, type HoldSettings } from './revert.js';

export interface NodeScopeSettings {
  /** Minutes between cycles (the capability's schedule): one sample per container per cycle. */
  periodMinutes: number;
  /** A new base (all states rewritten) at most this often per DaemonSet; cycles in between append logs. */
  foldEveryMs: number;
  /**
   * DaemonSets that may rewrite their base in one cycle (a first base does not count), at least; more
   * when there are more DaemonSets than cycles in a fold period. Folds are spread over the period anyway;
   * this bounds a cycle after an outage, when every DaemonSet is due at once.
   */
  maxFoldsPerCycle: number;
  /** `limit` of list pages. */
  pageSize: number;
  /** Cluster writes per cycle (resizes, pod annotations, VPA status patches), across all DaemonSets. */
  writeBudget: number;
  /** A pod's annotation is rewritten when a target moved by more than this fraction. */
  annotationTolerance: number;
  /** Uncompressed bytes per base chunk (compressed, well under DynamoDB's 400 KB item limit). */
  chunkRawBytes: number;
  updater: UpdaterSettings;
  backoff: Partial<BackoffPolicy>;
  /** After a server showed it has no pods/resize, ask again after this long. */
  resizeUnsupportedRecheckMs: number;
  /** How long a revert on harm holds the DaemonSet's downsizes (doubling per revert in a row; revert.ts). */
  revertHold: HoldSettings;
}

export const DEFAULT_SETTINGS: Readonly<NodeScopeSettings> = Object.freeze({
  periodMinutes: 5,
  foldEveryMs: 60 * 60_000,
  maxFoldsPerCycle: 1,
  pageSize: 1000,
  writeBudget: 60,
  annotationTolerance: 0.1,
  chunkRawBytes: 300_000,
  updater: DEFAULT_UPDATER,
  backoff: {},
  resizeUnsupportedRecheckMs: 24 * 3_600_000,
  revertHold: DEFAULT_HOLD,
});

/** Settings from the environment (FLEETSCOPE_NODESCOPE_*), over the defaults. */
export function settingsFromEnv(env: NodeJS.ProcessEnv = process.env): Partial<NodeScopeSettings> {
  const out: Partial<NodeScopeSettings> = {};
  const num = (name: string) => envNumber(env, name);
  const budget = num('FLEETSCOPE_NODESCOPE_WRITE_BUDGET');
  if (budget !== undefined) out.writeBudget = Math.floor(budget);
  const fold = num('FLEETSCOPE_NODESCOPE_FOLD_MINUTES');
  if (fold !== undefined) out.foldEveryMs = fold * 60_000;
  const page = num('FLEETSCOPE_NODESCOPE_PAGE_SIZE');
  if (page !== undefined && page >= 1) out.pageSize = Math.floor(page);
  return out;
}
