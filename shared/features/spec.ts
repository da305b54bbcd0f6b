/**
 * What a feature is, as its author declares it: for fleetscope's own capabilities next to the
 * capability (shared/<cap>/capability.ts, the `feature` field), for a third party in a file
 * (`fleetscope features register --file F`, ./declaration.ts). The server flow reads nothing else.
 */
import type { BalloonStore } from '../balloons/store.js';
import type { ClaimStore } from '../claims/store.js';
import type { ClusterClient } from '../k8s/client.js';
import type { Capability } from '../platform/catalogue.js';
import type { ClusterState } from './cluster-state.js';
import {
  type DesiredOptions,
  type FeatureRecord,
  type FeatureRef,
  type Final,
  refKey,
  type Use,
  type Value,
} from './model.js';
import type { ObjectsApi } from './objects.js';
import type { TaskKind, TaskSpec } from './task-kinds.js';

/** What a task sees when it is performed. */
export interface TaskContext {
  cluster: string;
  feature: FeatureRef;
  /** Where the transition goes, and the value it moves away from. */
  to: Final;
  old: Value;
  now: number;
  options: DesiredOptions;
  /** What earlier attempts of this task kept (absent on the first). */
  progress: Record<string, number | string> | undefined;
  /** The cluster, connected on first use (a task that needs no cluster never connects). */
  client(): Promise<ClusterClient>;
  /** Objects of any kind in the cluster; its writes are counted as the task's. */
  objects(): Promise<ObjectsApi>;
  /** Counts writes made other than to the cluster (the stores); every cluster write is counted by its fence. */
  wrote(n: number): void;
  /** The features' records (another feature's state, for a wait on it). */
  features: { get(cluster: string, ref: FeatureRef): Promise<FeatureRecord | undefined> };
  /** What capabilities keep about the cluster (clear-state); every write passes the task's fence. */
  state: ClusterState;
  /** The balloons' store, every write passing the task's fence (deflate-every-balloon stores its state). */
  balloons: BalloonStore;
  /** The cluster's claims identity, read only: turning claims off waits while it is in a ClusterSet. */
  claims: Pick<ClaimStore, 'getIdentity'>;
  uses: UsesPort;
  /** The feature's default wait of a "wait for uses" task. */
  usesWaitSeconds: number;
}

/** The uses of one feature in one cluster, as tasks read and clear them. */
export interface UsesPort {
  /** Every use reported (by fleetscope's workers and, via the Feature object, by in-cluster components). */
  list(): Promise<Use[]>;
  /**
   * Those uses, and where in-cluster components' were read: the Feature object's uid, or `missing` (why)
   * when the object fleetscope wrote into the cluster is gone (deleted with kubectl): then nothing says
   * what those components use, and a wait must not end on it.
   */
  observe(): Promise<{ uses: Use[]; objectUid?: string; missing?: string }>;
  /**
   * Issues a new uses epoch (fenced to the task's claim) and forgets the uses that do not echo it;
   * returns the epoch and the writes made other than to the cluster.
   */
  clear(): Promise<{ epoch: number; writes: number }>;
  /** Makes sure `epoch` is published where components read it (an attempt may have died before). */
  published(epoch: number): Promise<void>;
}

/** How a performed task ended (a thrown error is a failure, retried with back-off). */
export type TaskOutcome =
  | { done: true }
  | {
      done: false;
      /** What it waits for, in words: shown by `features get` and in the Feature object's status. */
      waitingFor: string;
      progress?: Record<string, number | string>;
      /** When to look again (default: the reconciler's next pass). */
      pollMs?: number;
    };

export interface Hook {
  run(ctx: TaskContext): Promise<TaskOutcome>;
}

/** The stores a task reaches besides its record and the cluster (the capabilities' ports). */
export type TaskStoresOf = Pick<TaskContext, 'state' | 'balloons' | 'claims'>;

/**
 * The stores a performed task writes besides its record and the cluster, each write first passing
 * `fence` (the task's claim: it throws when the claim was lost). Adapters: ./task-stores-dynamo.ts,
 * ./task-stores-memory.ts.
 */
export interface TaskStores {
  fenced(fence: (operation: string) => Promise<void>): TaskStoresOf;
}

/** Reads an Off feature's leftovers that the checks derived from its tasks cannot see. */
export interface LeftoverContext {
  cluster: string;
  client(): Promise<ClusterClient>;
  /** What capabilities keep about the cluster (the clear-state prefixes' items). */
  state: ClusterState;
}

export interface FeatureSpec extends FeatureRef {
  description: string;
  default: Value;
  /** TurningOn's tasks, in order; a wait for uses is added last when the author gave none. */
  enable: TaskSpec[];
  /** TurningOff's tasks, in order; a wait for uses is added first when the author gave none. */
  disable: TaskSpec[];
  /** The components that report uses (for people; any component may report). */
  components: string[];
  /** Default wait of "wait for uses": the components' period plus their longest run. */
  usesWaitSeconds: number;
  /** How long one task may take before the transition is shown stuck (default: 60). */
  taskDeadlineMinutes?: number;
  /** Kubernetes versions that can serve the feature, and why (check-upgrade). */
  kubernetes?: { min?: string; max?: string; why: string };
  /** The fleetscope version that introduced the feature (a fleetscope below it cannot serve it). */
  since: string;
  /** The code of its tasks of kind hook (built-in features only). */
  hooks?: Record<string, Hook>;
  /** What an Off feature may have left that the checks derived from its tasks cannot see. */
  leftovers?: (ctx: LeftoverContext) => Promise<string[]>;
  origin: { capability: string } | { file: string };
  /**
   * A declared feature's kinds the operator allowed at registration (admission, RBAC, cluster-scoped:
   * ./harmless.ts); absent: none.
   */
  allowKinds?: string[];
  /** Features that must be On before this one turns on (and stay On until it is Off). */
  requires?: FeatureRef[];
  /** The features that require this one (derived by the catalog from their `requires`). */
  requiredBy?: FeatureRef[];
}

export const DEFAULT_USES_WAIT_SECONDS = 600;

/**
 * The task list of a transition: the author's, with the wait for uses every transition needs, after a
 * wait for its requirements to be On (turning on) or for its dependants to be Off (turning off).
 */
export function tasksOf(
  spec: Pick<FeatureSpec, 'enable' | 'disable' | 'requires' | 'requiredBy'>,
  to: Final,
): TaskSpec[] {
  const list = to === 'On' ? spec.enable : spec.disable;
  const others = (to === 'On' ? spec.requires : spec.requiredBy) ?? [];
  const order: TaskSpec[] = others.length
    ? [{ task: 'wait-for-features', features: others.map(refKey), state: to }]
    : [];
  if (list.some((t) => t.task === 'wait-for-uses')) return [...order, ...list];
  const wait: TaskSpec = { task: 'wait-for-uses' };
  // Off: stop every use before removing what it relies on. On: every component uses it before "On".
  return to === 'On' ? [...order, ...list, wait] : [...order, wait, ...list];
}

export const kindsOf = (spec: FeatureSpec): Set<TaskKind> =>
  new Set([...spec.enable, ...spec.disable].map((t) => t.task));

/** A capability of the catalogue with its feature declared (every one but the platform's core). */
export type FeaturedCapability = Capability<FeatureSpec>;
