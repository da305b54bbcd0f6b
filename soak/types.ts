/**
 * What the soak's invariant checks read, and how a capability joins the soak: it registers its
 * invariants (soak/capabilities.ts); the loop itself runs whatever schedules the catalogue lists.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DeadLetter } from '../local/invoker.js';
import type { Simulator } from '../local/sim/index.js';
import type {
  Adopted,
  AgentOutcome,
  BalloonSample,
  CycleLedger,
  FlipDone,
  IdCommand,
  IdSeen,
  ObjectDelete,
  OomFault,
  PausedOutcome,
  PodRemoval,
  Preemption,
  Rebuilt,
  Reregistered,
  ResizeRequest,
  StuckShown,
  Text,
  Touch,
} from './records.js';

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
  /** The cluster adopted away and back (../identity.ts), and the soak's own control plane's identity. */
  adopted?: Adopted;
  controlPlane: string;
  /** The OOM kills injected after downsizes (./oom-faults.ts), and the cycles a hold blocked a downsize. */
  oomFaults?: { faults: OomFault[]; heldOnBackoff: number; forgotten: { cluster: string; at: number }[] };
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
