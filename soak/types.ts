/**
 * What the soak's invariant checks read, and how a capability joins the soak: it registers its
 * invariants (soak/capabilities.ts); the loop itself runs whatever schedules the catalogue lists.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DeadLetter } from '../local/invoker.js';
import type { Simulator } from '../local/sim/index.js';
import type { AgentOutcome } from './agent.js';
import type { FlipDone } from './features.js';
import type { IdSeen, Rebuilt, Reregistered } from './identity.js';
import type { BalloonSample } from './invariants/balloons.js';
import type { StuckShown } from './invariants/features.js';
import type { IdCommand } from './invariants/identity.js';
import type { PausedOutcome } from './paused.js';
import type { Touch } from './touches.js';

/** One resize request that reached a simulated apiserver's handler (faults answer before it). */
export interface ResizeRequest {
  cluster: string;
  namespace: string;
  pod: string;
  podUid: string;
  status: number;
  /** The pod's container resources before and after the request (JSON). */
  before: string;
  after: string;
  /** A balloon pod's resize, and whether it inflated or deflated the balloon (accepted ones). */
  balloon?: boolean;
  direction?: 'grow' | 'shrink';
}

/** A DELETE of an object a feature's task names (the balloon DaemonSet, its PriorityClass). */
export interface ObjectDelete {
  cluster: string;
  resource: string;
  name: string;
  status: number;
}

/** A pod the scheduler preempted (marked DisruptionTarget PreemptionByScheduler, then deleted). */
export interface Preemption {
  cluster: string;
  pod: string;
  balloon: boolean;
  message: string;
}

/** A request to delete or evict a pod that reached an apiserver's handler. */
export interface PodRemoval {
  cluster: string;
  pod: string;
  how: 'delete' | 'eviction';
  status: number;
  balloon: boolean;
}

/** Per cluster and capability: the cycles sent to a runtime, and those a runtime reported complete and clean. */
export interface CycleLedger {
  attempted(capability: string, cluster: string): number;
  clean(capability: string, cluster: string): number;
}

/** A piece of text the soak produced (a log line, an event, an item, CLI output), for the secret scan. */
export interface Text {
  source: string;
  text: string;
}

export interface SoakState {
  db: DynamoDBDocumentClient;
  table: string;
  idempotencyTable: string;
  sim?: Simulator;
  resizes: ResizeRequest[];
  removals: PodRemoval[];
  ledger: CycleLedger;
  deadLetters: DeadLetter[];
  /** The malformed events the soak delivered (their soakPoison ids); each must be a dead letter. */
  poisoned: string[];
  /** Texts gathered during the run; DynamoDB items are added by the secret check itself. */
  texts: () => AsyncIterable<Text>;
  /** Strings that must never appear anywhere (the canary kubeconfig's tokens). */
  canaries: string[];
  /** Every balloon after every cycle (./invariants/balloons.ts). */
  balloonSamples: BalloonSample[];
  preemptions: Preemption[];
  /** Distinct running non-balloon pods seen on nodes with a balloon, over the run. */
  podsOnBalloonNodes: number;
  /** The feature flips the soak's operator made, and the clusters with balloons. */
  flips: FlipDone[];
  balloonClusters: string[];
  objectDeletes: ObjectDelete[];
  /** The reconciler the soak paused past its claim (./paused.ts), if a flip started it. */
  paused?: PausedOutcome;
  /** The agent with a skewed clock (./agent.ts) and what it saw after each cycle. */
  agent?: AgentOutcome;
  /** Where stuck transitions were shown (bus events, `features list` at the end). */
  stuckShown?: StuckShown;
  /** Features whose task cannot succeed (./declared.ts): flipped on, they must end stuck. */
  cannotEnd?: string[];
  /** Clean minutes at the end (no faults, kills or race) before the checks. */
  settleMinutes: number;
  /** Writes to objects fleetscope did not create (./touches.ts). */
  touches: Touch[];
  /** Every value each cluster's id.k8s.io took, the operators' commands on it, and what the run did to identities. */
  ids: IdSeen[];
  idCommands: IdCommand[];
  rebuilt?: Rebuilt;
  reregistered?: Reregistered;
}

export interface Outcome {
  /** How many things were checked (scopes, guards, requests, lines, ...), and what they were. */
  checked: number;
  unit: string;
  violations: string[];
}

export interface Invariant {
  name: string;
  check(state: SoakState): Promise<Outcome>;
}

export interface SoakCapability {
  /** The catalogue capability this belongs to ('platform' for fleet-wide invariants). */
  id: string;
  invariants: Invariant[];
}
