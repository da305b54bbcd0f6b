/**
 * The parts of nodes and pods a cycle reads, as they come off the wire (raw JSON: quantities are
 * strings, times RFC 3339 strings). Everything is optional: nothing here trusts a server.
 */

export type Quantities = { [resource: string]: string | undefined };

export interface OwnerReference {
  kind?: string;
  name?: string;
  uid?: string;
  controller?: boolean;
}

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  ownerReferences?: OwnerReference[];
}

export interface Taint {
  key: string;
  value?: string;
  effect: string;
}

export interface NodeObject {
  metadata?: ObjectMeta;
  spec?: { taints?: Taint[]; unschedulable?: boolean };
  status?: {
    allocatable?: Quantities;
    capacity?: Quantities;
    conditions?: { type?: string; status?: string }[];
  };
}

export interface ContainerSpec {
  name: string;
  resources?: { requests?: Quantities; limits?: Quantities };
}

export interface ContainerStatusLike {
  name: string;
  restartCount?: number;
  lastState?: { terminated?: { reason?: string; startedAt?: string; finishedAt?: string } };
  state?: { terminated?: { reason?: string; startedAt?: string; finishedAt?: string } };
  /** What the runtime enacted (actual); present once the node reports resources. */
  resources?: { requests?: Quantities; limits?: Quantities };
  /** What the kubelet admitted (allocated). */
  allocatedResources?: Quantities;
}

export interface PodObject {
  metadata?: ObjectMeta;
  spec?: {
    nodeName?: string;
    priority?: number;
    nodeSelector?: Record<string, string>;
    containers?: ContainerSpec[];
  };
  status?: {
    phase?: string;
    startTime?: string;
    qosClass?: string;
    resize?: string;
    conditions?: {
      type: string;
      status: string;
      reason?: string;
      message?: string;
      observedGeneration?: number;
    }[];
    containerStatuses?: ContainerStatusLike[];
  };
}
