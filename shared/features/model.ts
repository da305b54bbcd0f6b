/**
 * The Feature object of KEP-3920 as fleetscope keeps it, per (cluster, feature), in DynamoDB (the source
 * of truth) and mirrors it into the cluster as a `Feature` custom resource. Pure types and a few pure
 * helpers: no AWS, no Kubernetes.
 */
import type { TaskSpec } from './task-kinds.js';

/** The KEP's four states: two stable, two transitional (a task list is being performed). */
export type FeatureState = 'On' | 'Off' | 'TurningOn' | 'TurningOff';
export const FEATURE_STATES: readonly FeatureState[] = ['On', 'Off', 'TurningOn', 'TurningOff'];

/** A feature's value as the operator sets it and as a component sees it. */
export type Value = 'on' | 'off';

/** The stable state a transition ends in. */
export type Final = 'On' | 'Off';

/** Where a feature lives: fleetscope's own in `fleetscope-system`, a third party's in its own namespace. */
export interface FeatureRef {
  namespace: string;
  name: string;
}

export const FLEETSCOPE_NAMESPACE = 'fleetscope-system';

export const refKey = (r: FeatureRef): string => `${r.namespace}/${r.name}`;

export function parseRef(text: string): FeatureRef {
  const slash = text.indexOf('/');
  return slash < 0
    ? { namespace: FLEETSCOPE_NAMESPACE, name: text }
    : { namespace: text.slice(0, slash), name: text.slice(slash + 1) };
}

/** One task of the transition in progress, as stored: its spec, and how performing it has gone so far. */
export interface TaskRecord {
  spec: TaskSpec;
  /** One line for people: "delete DaemonSet kube-system/fleetscope-balloon". */
  title: string;
  /** Attempts that failed (a wait is not a failure). */
  attempts: number;
  lastError?: string;
  failedAt?: number;
  /** What the task is waiting for, in words (a wait task, or a task polled again later). */
  waitingFor?: string;
  /** Not before this time (epoch ms): back-off after a failure, or the next poll of a wait. */
  notBefore?: number;
  /** What the task keeps between attempts (wait for uses: when the uses were cleared). */
  progress?: Record<string, number | string>;
  /**
   * The reconciler performing it right now, and until when that claim holds (renewed while the task
   * runs; a crash lets it lapse). `token` names this one claim: every cluster write of the task is
   * fenced to it, so a holder whose claim lapsed (and was taken over) cannot write.
   */
  claim?: { by: string; until: number; token: string };
  /**
   * Writes (to the cluster or to DynamoDB) the task's attempts made, counted in the record as each is
   * made (a killed attempt's writes are kept): the evidence that no step ran twice.
   */
  writes: number;
  startedAt?: number;
  /** When it became the transition's first task (or an operator retried it): its deadline runs from here. */
  since?: number;
  /** Past its deadline and not done: the transition is stuck here, and why (until done or acted on). */
  stuck?: { at: number; reason: string };
}

/** An operator's verb on a stuck transition, as history keeps it: who, when, why. */
export interface OperatorAction {
  verb: 'retry' | 'skip' | 'abandon';
  task: string;
  /** The caller's identity (an AWS principal's ARN, or local:<user>). */
  by: string;
  at: number;
  reason: string;
}

/** A task of a finished (or reversed) transition, as history keeps it. */
export interface TaskSummary {
  title: string;
  task: TaskSpec['task'];
  attempts: number;
  writes: number;
  doneAt: number;
  /** Not performed: an operator skipped it (the action says who and why). */
  skipped?: boolean;
}

export interface Transition {
  to: Final;
  startedAt: number;
  endedAt?: number;
  /**
   * completed: reached `to`; reversed: the desired value flipped and the opposite transition began;
   * abandoned: an operator gave it up (the opposite transition began).
   */
  outcome?: 'completed' | 'reversed' | 'abandoned';
  /** Why it started: "desired on (set by ...)", "default on", "announced", "reverses TurningOff". */
  reason: string;
  done: TaskSummary[];
  /** What operators did to it (retry, skip, abandon). */
  actions?: OperatorAction[];
}

/** Options the operator gave with the desired value (kept with it: a transition reads them). */
export interface DesiredOptions {
  /** Keep stored state for its history window instead of deleting it (clear-state tasks that allow it). */
  keepState?: boolean;
}

export interface FeatureRecord extends FeatureRef {
  cluster: string;
  /** Set by the operator; absent: the default. */
  desired?: Value;
  desiredBy?: string;
  desiredAt?: number;
  options?: DesiredOptions;
  default: Value;
  state: FeatureState;
  /** The ordered tasks left in the transition in progress (empty when stable). */
  tasks: TaskRecord[];
  /** The transition in progress. */
  transition?: Transition;
  /** Finished and reversed transitions, newest last (at most HISTORY_LIMIT). */
  history: Transition[];
  /**
   * The epoch of the last clearing of uses: a use counts in a wait for uses only if it echoes it (a
   * component's own clock never decides). Published to in-cluster components in the Feature status.
   */
  usesEpoch?: number;
  /** Optimistic lock: every change is a conditional write on it. */
  version: number;
  updatedAt: number;
}

export const HISTORY_LIMIT = 20;

/** A component's report of the value it saw (the KEP's "uses"). */
export interface Use {
  component: string;
  value: Value;
  at: number;
  /** The uses epoch the component read with the value (absent: it echoed none). */
  epoch?: number;
  /** fleetscope: a fleetscope worker; cluster: an in-cluster component, via the Feature object's status. */
  source: 'fleetscope' | 'cluster';
}

/** The value the feature should have: the operator's, else the default. */
export const targetOf = (r: Pick<FeatureRecord, 'desired' | 'default'>): Value => r.desired ?? r.default;

export const finalOf = (v: Value): Final => (v === 'on' ? 'On' : 'Off');
export const valueOfFinal = (s: Final): Value => (s === 'On' ? 'on' : 'off');
export const turningTo = (f: Final): FeatureState => (f === 'On' ? 'TurningOn' : 'TurningOff');

export const inTransition = (s: FeatureState): boolean => s === 'TurningOn' || s === 'TurningOff';

/** The value a transition moves away from (what "wait for uses" waits to stop seeing). */
export const oldValueOf = (to: Final): Value => (to === 'On' ? 'off' : 'on');
