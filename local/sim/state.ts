/**
 * The simulated cluster's shared state and the types its parts speak in: below every controller, the
 * scheduler, the kubelets, the REST layer and the request handler (which all import it), above only
 * the store, the clock and plain data. Nothing here imports a part.
 */
import type { ManualClock } from './clock.js';
import type { FieldError } from './errors.js';
import type { Json, JsonObject } from './json.js';
import type { ResourceDef } from './registry.js';
import type { Store } from './store.js';
import type { SimClusterSpec } from './types.js';
import type { ContainerLoad } from './workload.js';

export interface Features {
  /** pods/resize is registered (InPlacePodVerticalScaling). */
  resize: boolean;
  /** 1.33+: PodResizePending/PodResizeInProgress conditions and allocatedResources instead of status.resize. */
  resizeConditions: boolean;
  /** 1.34+: pods carry metadata.generation and status.observedGeneration (KEP-5067). */
  podGeneration: boolean;
  observedGeneration: boolean;
  defaultResizePolicy: boolean;
  resizeNodeAdmission: boolean;
  podTopologyLabels: boolean;
  /** 1.33 only: memory limit decreases need resizePolicy RestartContainer. */
  forbidMemoryLimitDecrease: boolean;
  /** 1.33+: resizePolicy may not change through /resize. */
  resizePolicyImmutable: boolean;
  /** 1.37+: KEP-5836, the scheduler preempts for Deferred resizes; nodes may opt out (resize-preemption.ts). */
  resizePreemption: boolean;
  /**
   * Up to 1.33 an unset creationTimestamp is written `null` (a pod template's, a review's); from 1.34
   * (apimachinery's `omitzero` on ObjectMeta) it is left out.
   */
  nullCreationTimestamp: boolean;
  /** 1.36+: a TokenRequest's answer carries the ServiceAccount's UID (absent on 1.33.13; 1.34, 1.35 untested). */
  tokenRequestUid: boolean;
  /** 1.37+: the node field is in the published OpenAPI, whether its feature gate is on or not. */
  resizePreemptionSchema: boolean;
}

export interface KubeVersion {
  major: number;
  minor: number;
  patch: number;
  semver: string;
}

/**
 * Where the simulated control plane's own writes go (controllers, kubelets, scheduler). In process they
 * are stored at once; against a real apiserver (local/sim/real/) the store is the informer-like cache
 * the same decision code reads, and each write is also sent to the server, which judges it.
 */
export interface ControllerWrites {
  put(collection: string, key: string, obj: JsonObject): Json;
  delete(collection: string, key: string): void;
}

export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export interface RequestInfo {
  path: string;
  query: URLSearchParams;
  method: string;
  /** 'version' | 'health' | 'discovery' | 'resource' | 'openapi' | 'unknown' */
  type: 'version' | 'health' | 'discovery' | 'resource' | 'openapi' | 'unknown';
  apiPrefix?: 'api' | 'apis';
  group?: string;
  version?: string;
  namespace?: string;
  resource?: string;
  name?: string;
  subresource?: string;
  verb?: string;
}

export interface Scope {
  cluster: SimState;
  def: ResourceDef;
  /** The version of the request (custom resources are served in several). */
  version: string;
  namespace?: string;
  subresource?: string;
  manager: string;
  dryRun: boolean;
  /** Warning headers to send (299). */
  warnings: string[];
  fieldValidation: 'Strict' | 'Warn' | 'Ignore';
  /** A write by a simulated controller: no admission checks that only apply to users. */
  internal?: boolean;
  /** Who asks (RBAC's escalation checks judge role and binding writes by it). */
  user?: UserInfo;
}

export interface Strategy {
  nameRule?: 'subdomain' | 'label' | 'none';
  /** Defaulting and mutating admission on create; may throw (e.g. 403 from an admission plugin). */
  prepareCreate?(obj: JsonObject, scope: Scope): void;
  validateCreate?(obj: JsonObject, scope: Scope): FieldError[];
  /** Update through the main resource: restore what it may not change (usually status). */
  prepareUpdate?(obj: JsonObject, old: Json, scope: Scope): void;
  validateUpdate?(obj: JsonObject, old: Json, scope: Scope): FieldError[];
  /** Update through /status: keep everything but status. */
  prepareStatusUpdate?(obj: JsonObject, old: Json, scope: Scope): void;
  /** Field order and canonical values of the stored object. */
  normalize?(obj: JsonObject): JsonObject;
  /** Custom resources: validate against the schema and prune unknown fields (returns the pruned object). */
  admit?(obj: JsonObject, scope: Scope, old?: Json): JsonObject;
  /** Decides what DELETE does; return the object to keep (with deletionTimestamp) or undefined to remove it. */
  onDelete?(obj: Json, scope: Scope): Json | undefined;
}

/**
 * One simulated cluster as its parts see it (the controllers, kubelets, scheduler, REST strategies and
 * authorizers): its store and clock, its version's features, the resource types it serves and the
 * writes of its control plane. local/sim/cluster.ts implements it and builds the parts on it; the parts
 * import this module, never the cluster nor the request handler, so each can be read and tested alone.
 */
export interface SimState {
  readonly name: string;
  readonly seed: number;
  readonly seedHash: number;
  readonly version: KubeVersion;
  readonly features: Features;
  /** The kube-controller-manager and kubelet parts run (the spec's `controllers` is not false). */
  readonly controllers: boolean;
  readonly store: Store;
  readonly spec: SimClusterSpec;
  readonly clock: ManualClock;
  /** Wall milliseconds per millisecond of a watch's own time (see ClusterState.watchWallScale). */
  watchWallScale: number;
  /** Where the control plane's own writes go (the store, or a real apiserver as well). */
  writes: ControllerWrites;
  caPem: string;
  readonly kubeSystemUid: string;
  /** The UID of a start-up object: stable across restarts for the same cluster name and seed. */
  uid(kind: string, key: string): string;
  /** The UID of an object created at run time (unique even if a name is reused). */
  newUid(collection: string, key: string): string;
  suffix(...parts: string[]): string;
  versionInfo(): JsonObject;
  strategy(def: ResourceDef): Strategy;
  hasGeneration(def: ResourceDef): boolean;
  registerCustomResource(def: ResourceDef): void;
  resources(): ResourceDef[];
  resolve(group: string, version: string, resource: string): ResourceDef | undefined;
  lookup(ref: string): ResourceDef;
  metricsState(): 'absent' | 'unavailable' | 'available';
  requireNamespace(ns: string | undefined): void;
  globalDefaultPriorityClass(): Json | undefined;
  /** A write of the control plane itself (no admission checks that only apply to users). */
  internalWrite(collection: string, key: string, obj: JsonObject): Json;
  internalDelete(collection: string, key: string): void;
  internalScope(def: ResourceDef, namespace?: string): Scope;
  nodeIndex(name: string): number;
  containerLoads(pod: Json): Map<string, ContainerLoad>;
}
