/**
 * The soak's records: what its observers, operators and faults write down during a run and its
 * invariants read after it. A leaf module (it imports nothing of the soak's), so that every part of
 * the soak can name a record without importing the part that makes it, and soak/ has no import circle.
 */

/** A value an operator sets a feature to ('default': back to the feature's default). */
export type Desired = 'on' | 'off' | 'default';

/** One resize request that reached a simulated apiserver's handler (faults answer before it). */
export interface ResizeRequest {
  cluster: string;
  namespace: string;
  pod: string;
  podUid: string;
  /** The pod's node, and the clusters' (simulated) clock when the request arrived. */
  node?: string;
  at?: number;
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

export interface CliResult {
  args: string[];
  code: number;
  output: string;
}

/** A write to an object fleetscope did not create, and what it did to it. */
export interface Touch {
  cluster: string;
  method: string;
  /** collection/key as the simulator stores it ("pods/kube-system/x"), and the subresource, if any. */
  object: string;
  subresource?: string;
  status: number;
  /** "deleted", or "label k added", "annotation k changed", "spec.k changed" ([] when nothing changed). */
  changes: string[];
}

export interface FlipDone {
  cycle: number;
  cluster: string;
  feature: string;
  desired: Desired;
  changed: boolean;
}

export interface AgentOutcome {
  /** Reports made (each with the agent's clock an hour off), and reports a fault refused. */
  reports: number;
  failed: number;
  /** Reports of on, echoing the epoch it read, after it read off: uses the wait for uses must hold for. */
  heldOn: number;
  /** What it read, by value. */
  read: { on: number; off: number };
  /** The feature judged after each cycle (stable after a completed transition), and what broke. */
  checked: number;
  violations: string[];
}

export interface PausedOutcome {
  cluster: string;
  feature: string;
  /** It froze at a write of a task that is not a wait (the fault was hit), and which task. */
  froze: boolean;
  task?: string;
  /** The kind of the task it froze at (apply-manifests, delete-objects, hook, ...). */
  frozeAt?: string;
  /** Fences it met (each a cluster write about to be sent), by task kind, over all its passes. */
  fences: Record<string, number>;
  /** Passes it ran over the flipped features (those that met only waits ended without freezing). */
  passes: number;
  /** Writes whose fence held after it resumed (each would have reached the cluster a second time). */
  fencedAfter: number;
  claimsLost: number;
  error?: string;
}

/** One balloon right after a cycle: what it asks for, what the rest of its node takes, what the node has. */
export interface BalloonSample {
  cycle: number;
  cluster: string;
  node: string;
  pod: string;
  /** Millicores and bytes. */
  balloon: { cpu: number; memory: number };
  others: { cpu: number; memory: number };
  allocatable: { cpu: number; memory: number };
  /** The balloon's resize waits (PodResizePending: Deferred or Infeasible). */
  pending?: string;
}

/** Where a stuck transition was shown: FeatureTransitionChanged stuck events and `features list` rows. */
export interface StuckShown {
  events: Set<string>;
  listed: Set<string>;
}

/** One value a cluster's id.k8s.io took (undefined: the object was deleted), and in which cycle. */
export interface IdSeen {
  cluster: string;
  cycle: number;
  value?: string;
}

/** What the run did to one cluster's identity, for the invariant (./invariants/identity.ts). */
export interface Rebuilt {
  cluster: string;
  cycle: number;
  oldUid: string;
  newUid: string;
  /** The second registration (under another name) of the rebuilt cluster. */
  again: CliResult;
  againName: string;
}

export interface Reregistered {
  cluster: string;
  /** The cycle the deregistration was killed in, and the one it was finished and registered again in. */
  killedAt: number;
  cycle: number;
  killed: boolean;
  finish: CliResult;
  register: CliResult;
}

/** An operator's command on a cluster's id.k8s.io during the run (the soak's CLI commands). */
export interface IdCommand {
  cluster: string;
  cycle: number;
  /** The value set; undefined for --default. */
  value?: string;
  ok: boolean;
}

/** One `cluster adopt --force` of the soak: killed with SIGKILL at a chosen write, then run again to its end. */
export interface AdoptionRun {
  /** The control plane that adopted (its owner identity: `local:STATE_DIR`). */
  by: string;
  killed: boolean;
  kill: CliResult;
  finish: CliResult;
}

/**
 * A cluster adopted by a second control plane mid-run (killed mid-way, then finished), and taken back
 * by the soak's the cycle after (killed and finished again).
 */
export interface Adopted {
  cluster: string;
  /** The cycle the second control plane adopted it in; the soak's took it back the cycle after. */
  cycle: number;
  /** The cluster's id.k8s.io before the adoption. */
  idBefore?: string;
  away: AdoptionRun;
  /** Who the soak's own registration named as the owner after its cycle with the cluster away. */
  yieldedTo?: string;
  back?: AdoptionRun;
}

/** An OOM kill the soak injected after a downsize (./oom-faults.ts), and the revert that followed. */
export interface OomFault {
  cluster: string;
  node: string;
  /** NAMESPACE/NAME and uid of the pod downsized, and the container killed. */
  pod: string;
  podUid: string;
  container: string;
  /** The cycle the kill was injected in, when it happened and when the downsize was requested (sim clock). */
  cycle: number;
  killedAt: number;
  downsizedAt: number;
  /** The pod's container resources before and after the downsize (a ResizeRequest's JSON). */
  before: string;
  after: string;
  /** The revert: the cycle and time of the accepted resize back to `before`. */
  revertCycle?: number;
  revertedAt?: number;
}
