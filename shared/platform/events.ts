import { z } from 'zod';

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
