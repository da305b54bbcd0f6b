/** Public types of the Kubernetes API simulator (re-exported by local/sim/index.ts). */
import type { Json } from './json.js';
import type { SimLags } from './lags.js';
import type { LoadProfile } from './workload.js';

export type { SimLags } from './lags.js';
export type { LoadProfile } from './workload.js';

export interface SimClusterSpec {
  name: string;
  /** Simulated worker nodes (0 for an empty cluster, as a freshly started apiserver). */
  nodes: number;
  seed?: number;
  /** Default '1.35.0'. '1.32.x' reproduces the recorded apiserver (status.resize instead of conditions). */
  kubernetesVersion?: string;
  metricsApi?: 'available' | 'absent' | 'unavailable';
  /** Whether pods/resize is registered (the InPlacePodVerticalScaling gate). Default true. */
  resizeSubresource?: boolean;
  /**
   * 1.37+: the alpha gate InPlacePodVerticalScalingSchedulerPreemption (KEP-5836). Default true here, so
   * that a 1.37 cluster shows the behaviour; false is a real 1.37's default: the node field is still in
   * the OpenAPI (generated from the types), but dropped from writes, and no resize preempts.
   */
  resizePreemptionGate?: boolean;
  daemonSets?: SimDaemonSetSpec[];
  /** Install the stock VerticalPodAutoscaler CRDs (verticalpodautoscalers, ...checkpoints) at start. */
  vpaCrd?: boolean;
  /**
   * Default true. false models an apiserver with no kube-controller-manager and no kubelets, as in the
   * recorded exchanges: no default ServiceAccounts, no DaemonSet pods, pods stay Pending.
   */
  controllers?: boolean;
  /** Bearer token; default derived from the cluster name and seed. Its user is in system:masters. */
  token?: string;
  /**
   * Enforce RBAC as kube-apiserver does (default false: every authenticated request is allowed). The
   * admin token stays a system:masters member either way.
   */
  rbac?: boolean;
  /** Static users (a token file, or what an EKS access entry maps an IAM role to). */
  users?: SimUserSpec[];
  /**
   * Components that answer late, timed on the simulated clock (each off by default): the kubelet's
   * admission of a bound pod, its answer to a resize, the DaemonSet controller's creation of a pod.
   */
  lags?: SimLags;
}

export interface SimUserSpec {
  name: string;
  groups?: string[];
  token: string;
}

export interface SimDaemonSetSpec {
  name: string;
  namespace?: string;
  containers: {
    name: string;
    image?: string;
    requests?: { cpu?: string; memory?: string };
    limits?: { cpu?: string; memory?: string };
  }[];
  // biome-ignore lint/suspicious/noExplicitAny: Toleration objects as written in a manifest
  tolerations?: any[];
  nodeSelector?: Record<string, string>;
  labels?: Record<string, string>;
  priorityClassName?: string;
  load?: LoadProfile;
}

/** A node added at run time (SimCluster.addNode, POST /_sim/nodes): Ready unless `ready: false`. */
export interface SimNodeSpec {
  name: string;
  /** Capacity, e.g. '4' and '16Gi'. */
  cpu: string;
  memory: string;
  /** Pod capacity; default 110. */
  pods?: number;
  /** Kept back from allocatable (kube-reserved + system-reserved); default none. */
  reserved?: { cpu?: string; memory?: string };
  labels?: Record<string, string>;
  taints?: { key: string; value?: string; effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute' }[];
  unschedulable?: boolean;
  ready?: boolean;
}

/** A node's new capacity (SimCluster.setNodeCapacity, POST /_sim/nodes/{name}/capacity). */
export interface SimNodeCapacity {
  cpu?: string;
  memory?: string;
  pods?: number;
}

export interface RequestStats {
  total: number;
  byMethod: Record<string, number>;
  byKind: Record<string, number>;
  /** "GET pods", "PATCH resize", ... */
  byMethodAndKind: Record<string, number>;
}

export type RequestKind =
  | 'discovery'
  | 'nodes'
  | 'pods'
  | 'daemonsets'
  | 'namespaces'
  | 'metrics'
  | 'resize'
  | 'customresources'
  | 'crds'
  | 'other';

export type Fault =
  | { type: 'latency'; ms: number }
  | { type: 'status'; code: number; retryAfterSeconds?: number }
  | { type: 'reset' }
  | { type: 'hang' };

export interface FaultRule {
  cluster?: string;
  match?: {
    method?: string;
    pathIncludes?: string;
    kind?: Exclude<RequestKind, 'other'> | 'any';
  };
  fault: Fault;
  /** How many matching requests to affect; default unlimited. */
  times?: number;
  /** The chance (0 to 1) that a matching request is affected; default 1 (every one). */
  probability?: number;
}

export interface FaultInjector {
  inject(f: FaultRule): string;
  clear(id?: string): void;
}

/** A store reference: a plural for built-ins ('pods', 'nodes', 'daemonsets') or 'plural.group'. */
export type ResourceRef = string;

export interface SimStore {
  get(resource: ResourceRef, name: string, namespace?: string): Json | undefined;
  list(resource: ResourceRef, namespace?: string): Json[];
  /**
   * Creates or replaces an object without admission or validation (uid, creationTimestamp and a new
   * resourceVersion are filled in); controllers react as to an API write.
   */
  put(resource: ResourceRef, obj: Json): Json;
  delete(resource: ResourceRef, name: string, namespace?: string): boolean;
}

export interface SimCluster {
  name: string;
  server: string;
  caData: string;
  token: string;
  kubeSystemUid: string;
  kubernetesVersion: string;
  stats(): RequestStats;
  resetStats(): void;
  /**
   * The server's TCP connections: open now (in use, or kept alive idle by a client), and accepted since
   * it started (a client that reuses its connections opens few), as `ss` would show them at a real one.
   */
  connections(): { open: number; accepted: number };
  store: SimStore;
  /**
   * A kubeconfig for this cluster alone with other credentials: a bearer token (a user's or a
   * ServiceAccount's), or a client certificate for `user` in `groups` signed by the cluster CA.
   */
  kubeconfigFor(credentials: { token: string } | { user: string; groups?: string[] }): Promise<string>;
  /** Adds a node (as a kubelet registers one); pending pods get a scheduling pass. Returns the stored Node. */
  addNode(spec: SimNodeSpec): Json;
  /** Deletes a node; the pods bound to it are deleted (pod GC), DaemonSet pods with it. False if absent. */
  removeNode(name: string): boolean;
  /**
   * Changes a node's capacity at run time (hotplug, VM resize): status.capacity and, keeping the
   * node's reservation, status.allocatable. The kubelet retries Deferred resizes and the scheduler
   * pending pods; nothing is evicted when allocatable drops below what is allocated.
   */
  setNodeCapacity(name: string, capacity: SimNodeCapacity): Json;
}

export interface SimClock {
  now(): number;
  advance(ms: number): void;
  set(ms: number): void;
}

export interface Simulator {
  clusters: SimCluster[];
  cluster(name: string): SimCluster;
  kubeconfig(): string;
  writeKubeconfig(path: string): Promise<void>;
  clock: SimClock;
  faults: FaultInjector;
  addCluster(spec: SimClusterSpec): Promise<SimCluster>;
  stop(): Promise<void>;
}

export interface StartOptions {
  clusters: SimClusterSpec[];
  host?: string;
  /** Simulated clock start (ms since the epoch); default the wall clock at start. */
  now?: number;
  /** First port to try, one per cluster (cluster i on basePort + i); default ephemeral ports. */
  basePort?: number;
}
