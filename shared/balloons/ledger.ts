/**
 * What one balloon cycle is given (its context) and gathers as it goes (the ledger), and what it returns:
 * shared by the cycle (./cycle.ts) and its steps, which import this rather than the cycle.
 */
import type { ResizeApi, ResizeRecord, ResizeReport, Resizer } from '../resize/index.js';
import type { Amounts } from './amounts.js';
import type { ClusterRead, FreshPods } from './cluster-read.js';
import type { NodeDecision } from './decide.js';
import type { BalloonObjects } from './incluster.js';
import type { BalloonSettings } from './settings.js';
import type { BalloonItems, BalloonStore, FieldDetection, Impostor } from './store.js';
import type { BalloonSummary } from './summary-model.js';

export interface BalloonCycleContext {
  cluster: string;
  cycleId: string;
  store: BalloonStore;
  objects: BalloonObjects;
  resizer: Resizer;
  /** The resizer's calls, for reading inflated balloons back. */
  api: ResizeApi;
  read: ClusterRead;
  /** Each inflated node's pods read afresh after the inflate (the bind race, ./recheck.ts). */
  fresh: FreshPods;
  settings?: Partial<BalloonSettings>;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** Size this node only (an explicit request being served at once); the others keep their state. */
  onlyNode?: string;
  /**
   * Deflate every balloon to the floor whatever asks for a size (the first task of turning balloons
   * off): the nodes get their whole capacity back before the DaemonSet goes.
   */
  drain?: boolean;
  /** The cluster's balloon items, when the caller read them already (to choose the snapshot's reads). */
  items?: BalloonItems;
}

export interface Revert {
  node: string;
  pod: string;
  podUid: string;
  from: Amounts;
  to: Amounts;
  message: string;
  /** Pods bound or nominated to the node between the cycle's read and its inflate (./recheck.ts). */
  boundSinceRead?: string[];
}

export interface BalloonCycleResult {
  cluster: string;
  at: number;
  managed: boolean;
  summary: BalloonSummary;
  decisions: NodeDecision[];
  reports: ResizeReport[];
  reverts: Revert[];
  /** Explicit sizes dropped this cycle, each saying why (their node is gone, or is another node). */
  dropped: string[];
  errors: string[];
  /**
   * Of the errors, the balloon pods that are not what a balloon must be: held at the floor, never
   * inflated, reported each cycle; nothing a retry mends (the pod must be recreated), and no failure to
   * deflate (turning balloons off ends with them at the floor, then deletes them with the DaemonSet).
   */
  unsound: string[];
  /** Labelled pods that are not fleetscope's balloons, counted as workloads. */
  impostors: Impostor[];
  /** Drift of fleetscope's objects found and repaired this cycle (the PriorityClass). */
  repairs: string[];
}

/** What one cycle gathers as it goes: every report, revert, error and resize record. */
export class CycleLedger {
  readonly reports: ResizeReport[] = [];
  readonly reverts: Revert[] = [];
  readonly errors: string[] = [];
  readonly unsound: string[] = [];
  readonly records = new Map<string, ResizeRecord | undefined>();
  /** Nodes whose inflate was reverted this cycle: they wait for the next cycle's fresh read. */
  readonly reverted = new Set<string>();
  readonly repairs: string[] = [];
  /** Why no balloon may grow this cycle (the PriorityClass is not sound); deflates still go. */
  inflatesHeld: string | undefined;
  /** Until when no KEP-5836 key is added: the server dropped the field (its gate is off). */
  resizePreemptionOffUntil: number | undefined;
  /** What core/v1's OpenAPI says of the KEP-5836 field, kept so that it is read again only when it changes. */
  resizePreemptionField: FieldDetection | undefined;
  constructor(
    readonly ctx: BalloonCycleContext,
    readonly settings: BalloonSettings,
    readonly now: number,
  ) {}
}
