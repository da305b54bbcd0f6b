import { z } from 'zod';
import { featureDetailExamples, featureDetailSchemas } from './feature-events.js';

/**
 * Every event fleetscope puts on its bus, by detail-type, with the schema of its detail and an example.
 * `events/` holds the JSON Schemas and sample events generated from this catalogue
 * (`npm run events:gen`; a test fails when they are stale), so consumers outside TypeScript have them too.
 */
export const EVENT_SOURCE = 'fleetscope';

const clusterRef = z.string().min(1).max(63);
const timestamp = z.iso.datetime({ offset: true });
/**
 * A claim value in an event: values up to 256 bytes are carried whole; longer ones (claims hold up to
 * 128 KiB, an event at most 256 KB) are cut, with their size and SHA-256 to tell them apart.
 */
const claimValue = z
  .object({
    value: z.string(),
    bytes: z.number().int().nonnegative(),
    truncated: z.boolean(),
    sha256: z.string().length(64).optional(),
  })
  .strict();

const quantities = z.object({ cpu: z.string().optional(), memory: z.string().optional() }).strict();
/** A container's cpu/memory before and after a resize (Kubernetes quantities). */
const resizeContainer = z
  .object({
    name: z.string(),
    before: z.object({ requests: quantities.optional(), limits: quantities.optional() }).strict(),
    after: z.object({ requests: quantities.optional(), limits: quantities.optional() }).strict(),
  })
  .strict();
/** The pod a resize event is about, and who resized it. */
const resizedPod = {
  cluster: clusterRef,
  /** The capability that resized (nodescope; balloons later). */
  source: z.string().min(1),
  namespace: z.string().min(1),
  pod: z.string().min(1),
  podUid: z.string(),
  node: z.string().optional(),
  owner: z.object({ kind: z.string(), name: z.string() }).strict().optional(),
};

/** CPU and memory as numbers with their unit in the field name, plus Kubernetes quantities. */
const capacity = z
  .object({
    cpuMillicores: z.number().int().nonnegative(),
    memoryBytes: z.number().int().nonnegative(),
    cpu: z.string(),
    memory: z.string(),
  })
  .strict();
const nodeRef = z.string().min(1).max(253);

export const detailSchemas = {
  ClusterRegistered: z
    .object({
      cluster: clusterRef,
      labels: z.record(z.string(), z.string()),
      registeredAt: timestamp,
    })
    .strict(),
  ClusterDeregistered: z.object({ cluster: clusterRef, deregisteredAt: timestamp }).strict(),
  ClusterWorkRequested: z
    .object({
      cluster: clusterRef,
      capability: z.string().min(1),
      cycleId: z.string().min(1),
      requestedAt: timestamp,
    })
    .strict(),
  /**
   * A follow between a capability's cycles (the cycle's: its kept lists taken up), not a cycle. Its own
   * detail-type, so that no rule or worker for ClusterWorkRequested can ever take it for a cycle.
   */
  ClusterFollowRequested: z
    .object({
      cluster: clusterRef,
      capability: z.string().min(1),
      requestedAt: timestamp,
    })
    .strict(),
  ClusterInventoried: z
    .object({
      cluster: clusterRef,
      reachable: z.boolean(),
      serverVersion: z.string().optional(),
      kubeSystemUid: z.string().optional(),
      nodeCount: z.number().int().nonnegative().optional(),
      metricsApi: z.enum(['available', 'absent', 'unavailable', 'unknown']),
      error: z.string().optional(),
      observedAt: timestamp,
    })
    .strict(),
  ClusterClaimsChanged: z
    .object({
      cluster: clusterRef,
      /** The cluster's id.k8s.io after the change (absent only when it was removed). */
      clusterId: z.string().min(1).max(63).optional(),
      /** The cluster's ClusterSet after the change, when it is a member. */
      clusterSet: z.string().min(1).max(63).optional(),
      /** registry: the source of truth (DynamoDB) changed; cluster: an in-cluster claim was repaired. */
      origin: z.enum(['registry', 'cluster']),
      reason: z.enum([
        'registration',
        'set',
        'delete',
        'join',
        'leave',
        'move',
        'reconcile',
        'drift',
        'deregistration',
      ]),
      changes: z
        .array(
          z
            .object({
              claim: z.string().min(1).max(253),
              /** For origin cluster: the kind of object repaired (ClusterProperty, or OCM's ClusterClaim). */
              object: z.enum(['ClusterProperty', 'ClusterClaim']).optional(),
              /** null: the claim did not exist before (new) or does not exist after (old). */
              old: claimValue.nullable(),
              new: claimValue.nullable(),
            })
            .strict(),
        )
        .min(1)
        .max(16),
      changedAt: timestamp,
    })
    .strict(),
  ClusterSetMembershipChanged: z
    .object({
      cluster: clusterRef,
      clusterId: z.string().min(1).max(63),
      change: z.enum(['join', 'leave', 'move']),
      /** The ClusterSet left (leave, move). */
      from: z.string().min(1).max(63).optional(),
      /** The ClusterSet joined (join, move). */
      to: z.string().min(1).max(63).optional(),
      /** operator: a command; reconcile: the reconciler finished an interrupted change; deregistration. */
      reason: z.enum(['operator', 'reconcile', 'deregistration']),
      changedAt: timestamp,
    })
    .strict(),
  PodResized: z
    .object({
      ...resizedPod,
      /** Requested: pods/resize accepted the change; Completed: the kubelet now runs it. */
      outcome: z.enum(['Requested', 'Completed']),
      containers: z.array(resizeContainer),
      at: timestamp,
    })
    .strict(),
  PodResizeRefused: z
    .object({
      ...resizedPod,
      /** Deferred/Infeasible/ActuationError: the kubelet; Invalid/Forbidden/Conflict: the apiserver. */
      refusal: z.enum([
        'Deferred',
        'Infeasible',
        'ActuationError',
        'Invalid',
        'Forbidden',
        'Unsupported',
        'Conflict',
        'Gone',
        'Error',
      ]),
      message: z.string().max(1024),
      containers: z.array(resizeContainer),
      /** The earliest time a different resize of this pod will be requested. */
      retryAfter: timestamp.optional(),
      at: timestamp,
    })
    .strict(),
  NodeScopeTargetRejected: z
    .object({
      cluster: clusterRef,
      namespace: z.string().min(1),
      /** The VerticalPodAutoscaler that asked for node scope. */
      vpa: z.string().min(1),
      targetRef: z.object({ apiVersion: z.string().optional(), kind: z.string(), name: z.string() }).strict(),
      reason: z.string().min(1).max(1024),
      at: timestamp,
    })
    .strict(),
  NodeScopeCycleCompleted: z
    .object({
      cluster: clusterRef,
      cycleId: z.string().min(1),
      /** absent: no VerticalPodAutoscaler CRD; stock: the upstream CRD (annotation opt-in); scoped: with spec.scope. */
      vpaCrd: z.enum(['absent', 'stock', 'scoped']),
      metricsApi: z.enum(['available', 'absent', 'unavailable', 'unknown']),
      /** Node-scoped DaemonSets handled, and VPAs asking for node scope that were refused. */
      daemonSets: z.number().int().nonnegative(),
      rejectedTargets: z.number().int().nonnegative(),
      nodes: z.number().int().nonnegative(),
      /** Nodes not Ready among those read (absent: the cycle had no target, so read no node). */
      notReadyNodes: z.number().int().nonnegative().optional(),
      /** (container, node) states kept. */
      scopes: z.number().int().nonnegative(),
      /** Nodes given the DaemonSet-wide recommendation for lack of history of their own. */
      fallbackNodes: z.number().int().nonnegative(),
      samples: z.number().int().nonnegative(),
      ooms: z.number().int().nonnegative(),
      resizes: z
        .object({
          requested: z.number().int().nonnegative(),
          completed: z.number().int().nonnegative(),
          refused: z.number().int().nonnegative(),
        })
        .strict(),
      /** Kubernetes API requests of the cycle (reads and writes). */
      apiRequests: z.number().int().nonnegative(),
      errors: z.array(z.string().max(1024)).max(20),
      /** Upstream VPA's components found running, when the cycle looked (a VPA asked fleetscope for something). */
      upstreamVpa: z
        .object({
          state: z.enum(['read', 'unknown']),
          components: z.array(z.enum(['recommender', 'updater', 'admission-controller'])).max(3),
        })
        .strict()
        .optional(),
      /** Scoped VPAs left to another recommender, and warnings on VPAs fleetscope sizes (upstream's components would act on them). */
      skippedVpas: z.number().int().nonnegative().optional(),
      upstreamWarnings: z.number().int().nonnegative().optional(),
      at: timestamp,
    })
    .strict(),
  NodeResizeRequested: z
    .object({
      cluster: clusterRef,
      node: nodeRef,
      /** What the node should offer its pods from now on (Kubernetes quantities, e.g. "6", "24Gi"). */
      cpu: z.string().min(1).max(64),
      memory: z.string().min(1).max(64),
      /** Who asked (a cloud provider's hook, an operator); free text for the audit trail. */
      requestedBy: z.string().max(256).optional(),
      requestedAt: timestamp,
    })
    .strict(),
  BalloonCycleCompleted: z
    .object({
      cluster: clusterRef,
      cycleId: z.string().min(1),
      /** Nodes with a balloon or a size to offer. */
      nodes: z.number().int().nonnegative(),
      allocatable: capacity,
      /** Capacity that doesn't exist: held by balloons. */
      balloon: capacity,
      workloads: capacity,
      used: capacity.optional(),
      free: capacity,
      blockedNodes: z.number().int().nonnegative(),
      resizes: z
        .object({
          requested: z.number().int().nonnegative(),
          completed: z.number().int().nonnegative(),
          refused: z.number().int().nonnegative(),
          reverted: z.number().int().nonnegative(),
        })
        .strict(),
      apiRequests: z.number().int().nonnegative(),
      errors: z.array(z.string().max(1024)).max(20),
      at: timestamp,
    })
    .strict(),
  BalloonReclaimBlocked: z
    .object({
      cluster: clusterRef,
      node: nodeRef,
      /** What the balloon could not take back, because pods hold it. */
      missing: capacity,
      podsInTheWay: z
        .array(
          z.object({ namespace: z.string(), name: z.string(), cpu: z.string(), memory: z.string() }).strict(),
        )
        .max(5),
      at: timestamp,
    })
    .strict(),
  BalloonResizeReverted: z
    .object({
      cluster: clusterRef,
      node: nodeRef,
      pod: z.string().min(1),
      podUid: z.string(),
      from: capacity,
      to: capacity,
      /** The kubelet's reason for deferring the inflate. */
      message: z.string().max(1024),
      at: timestamp,
    })
    .strict(),
  NodeCapacityChanged: z
    .object({
      cluster: clusterRef,
      node: nodeRef,
      from: capacity,
      to: capacity,
      at: timestamp,
    })
    .strict(),
  ...featureDetailSchemas,
} as const;

export type DetailType = keyof typeof detailSchemas;
export type Detail<T extends DetailType> = z.infer<(typeof detailSchemas)[T]>;

export const detailExamples: { [T in DetailType]: Detail<T> } = {
  ClusterRegistered: { cluster: 'prod-eu-1', labels: { env: 'prod' }, registeredAt: '2026-11-21T10:00:00Z' },
  ClusterDeregistered: { cluster: 'prod-eu-1', deregisteredAt: '2026-11-21T10:00:00Z' },
  ClusterWorkRequested: {
    cluster: 'prod-eu-1',
    capability: 'inventory',
    cycleId: 'inventory/2026-11-21T10:00:00Z',
    requestedAt: '2026-11-21T10:00:00Z',
  },
  ClusterFollowRequested: { cluster: 'prod-eu-1', capability: 'cycle', requestedAt: '2026-11-21T10:01:00Z' },
  ClusterInventoried: {
    cluster: 'prod-eu-1',
    reachable: true,
    serverVersion: 'v1.35.0',
    kubeSystemUid: '0f6e5a4c-3b2a-4d1e-9c8b-7a6f5e4d3c2b',
    nodeCount: 20,
    metricsApi: 'available',
    observedAt: '2026-11-21T10:00:00Z',
  },
  ClusterClaimsChanged: {
    cluster: 'prod-eu-1',
    clusterId: '0f6e5a4c-3b2a-4d1e-9c8b-7a6f5e4d3c2b',
    clusterSet: 'payments',
    origin: 'registry',
    reason: 'join',
    changes: [
      {
        claim: 'clusterset.k8s.io',
        old: null,
        new: { value: 'payments', bytes: 8, truncated: false },
      },
    ],
    changedAt: '2026-11-21T10:00:00Z',
  },
  ClusterSetMembershipChanged: {
    cluster: 'prod-eu-1',
    clusterId: '0f6e5a4c-3b2a-4d1e-9c8b-7a6f5e4d3c2b',
    change: 'move',
    from: 'payments',
    to: 'checkout',
    reason: 'operator',
    changedAt: '2026-11-21T10:00:00Z',
  },
  PodResized: {
    cluster: 'prod-eu-1',
    source: 'nodescope',
    namespace: 'monitoring',
    pod: 'node-exporter-7xk2p',
    podUid: '6b1d2c3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e',
    node: 'ip-10-0-1-2.ec2.internal',
    owner: { kind: 'DaemonSet', name: 'node-exporter' },
    outcome: 'Requested',
    containers: [
      {
        name: 'node-exporter',
        before: { requests: { cpu: '100m', memory: '128Mi' } },
        after: { requests: { cpu: '412m', memory: '301Mi' } },
      },
    ],
    at: '2026-11-21T10:00:00Z',
  },
  PodResizeRefused: {
    cluster: 'prod-eu-1',
    source: 'nodescope',
    namespace: 'monitoring',
    pod: 'node-exporter-7xk2p',
    podUid: '6b1d2c3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e',
    node: 'ip-10-0-1-2.ec2.internal',
    owner: { kind: 'DaemonSet', name: 'node-exporter' },
    refusal: 'Infeasible',
    message: "Node didn't have enough capacity: cpu, requested: 5000, capacity: 4000",
    containers: [],
    retryAfter: '2026-11-21T11:00:00Z',
    at: '2026-11-21T10:00:00Z',
  },
  NodeScopeTargetRejected: {
    cluster: 'prod-eu-1',
    namespace: 'shop',
    vpa: 'checkout',
    targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'checkout' },
    reason: 'node scope applies to DaemonSets only; the target is a Deployment',
    at: '2026-11-21T10:00:00Z',
  },
  NodeScopeCycleCompleted: {
    cluster: 'prod-eu-1',
    cycleId: 'nodescope/2026-11-21T10:00:00Z',
    vpaCrd: 'scoped',
    metricsApi: 'available',
    daemonSets: 2,
    rejectedTargets: 0,
    nodes: 20,
    scopes: 60,
    fallbackNodes: 1,
    samples: 57,
    ooms: 0,
    resizes: { requested: 3, completed: 2, refused: 0 },
    apiRequests: 11,
    errors: [],
    at: '2026-11-21T10:00:00Z',
  },
  NodeResizeRequested: {
    cluster: 'prod-eu-1',
    node: 'ip-10-0-1-2.ec2.internal',
    cpu: '6',
    memory: '24Gi',
    requestedBy: 'vm-resizer',
    requestedAt: '2026-11-21T10:00:00Z',
  },
  BalloonCycleCompleted: {
    cluster: 'prod-eu-1',
    cycleId: 'nodescope/2026-11-21T10:00:00Z',
    nodes: 4,
    allocatable: { cpuMillicores: 32000, memoryBytes: 137438953472, cpu: '32', memory: '128Gi' },
    balloon: { cpuMillicores: 12000, memoryBytes: 51539607552, cpu: '12', memory: '48Gi' },
    workloads: { cpuMillicores: 15500, memoryBytes: 64424509440, cpu: '15500m', memory: '60Gi' },
    free: { cpuMillicores: 4500, memoryBytes: 21474836480, cpu: '4500m', memory: '20Gi' },
    blockedNodes: 1,
    resizes: { requested: 2, completed: 1, refused: 0, reverted: 0 },
    apiRequests: 9,
    errors: [],
    at: '2026-11-21T10:00:00Z',
  },
  BalloonReclaimBlocked: {
    cluster: 'prod-eu-1',
    node: 'ip-10-0-1-2.ec2.internal',
    missing: { cpuMillicores: 1500, memoryBytes: 0, cpu: '1500m', memory: '0' },
    podsInTheWay: [{ namespace: 'shop', name: 'checkout-5d9f7-abcde', cpu: '2', memory: '4Gi' }],
    at: '2026-11-21T10:00:00Z',
  },
  BalloonResizeReverted: {
    cluster: 'prod-eu-1',
    node: 'ip-10-0-1-2.ec2.internal',
    pod: 'fleetscope-balloon-x7k2p',
    podUid: '6b1d2c3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e',
    from: { cpuMillicores: 4000, memoryBytes: 8589934592, cpu: '4', memory: '8Gi' },
    to: { cpuMillicores: 2000, memoryBytes: 8589934592, cpu: '2', memory: '8Gi' },
    message: "Node didn't have enough resource: cpu, requested: 4000, used: 6500, capacity: 8000",
    at: '2026-11-21T10:00:00Z',
  },
  NodeCapacityChanged: {
    cluster: 'prod-eu-1',
    node: 'ip-10-0-1-2.ec2.internal',
    from: { cpuMillicores: 7910, memoryBytes: 32212254720, cpu: '7910m', memory: '30Gi' },
    to: { cpuMillicores: 15910, memoryBytes: 64424509440, cpu: '15910m', memory: '60Gi' },
    at: '2026-11-21T10:00:00Z',
  },
  ...featureDetailExamples,
};

/** An EventBridge event as a Lambda receives it. */
export interface BusEvent<T extends DetailType = DetailType> {
  version: '0';
  id: string;
  'detail-type': T;
  source: string;
  account: string;
  time: string;
  region: string;
  resources: string[];
  detail: Detail<T>;
}

/** The EventBridge envelope around a detail schema: what an event-triggered handler validates. */
export function eventSchema<T extends DetailType>(detailType: T) {
  return z.object({
    version: z.string(),
    id: z.string(),
    'detail-type': z.literal(detailType),
    source: z.literal(EVENT_SOURCE),
    account: z.string(),
    time: z.string(),
    region: z.string(),
    resources: z.array(z.string()),
    detail: detailSchemas[detailType],
  });
}

/** Any of several detail-types, told apart by `detail-type` so a bad detail names its own fields. */
export function eventsSchema(detailTypes: readonly DetailType[]) {
  const [first, ...rest] = detailTypes.map((t) => eventSchema(t));
  if (!first) throw new Error('eventsSchema needs at least one detail-type');
  return rest.length === 0 ? first : z.discriminatedUnion('detail-type', [first, ...rest]);
}
