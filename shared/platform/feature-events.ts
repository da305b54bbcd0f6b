/**
 * The bus events of feature transitions and rollouts (shared/features/), with an example of each; spread
 * into the event catalogue (events.ts) like every capability's events, so `npm run events:gen` writes
 * their schemas and samples too. Plain zod: the platform imports no capability.
 */
import { z } from 'zod';

const clusterRef = z.string().min(1).max(63);
const timestamp = z.iso.datetime({ offset: true });
const feature = {
  cluster: clusterRef,
  namespace: z.string().min(1).max(63),
  feature: z.string().min(1).max(63),
};
const state = z.enum(['On', 'Off', 'TurningOn', 'TurningOff']);
const onOff = z.enum(['on', 'off']);

export const featureDetailSchemas = {
  FeatureDesiredChanged: z
    .object({
      ...feature,
      /** default: the operator's value was removed; the feature follows its default again. */
      desired: z.enum(['on', 'off', 'default']),
      /** Who set it: an operator, or a rollout ("rollout/<id>"). */
      by: z.string().min(1).max(256),
      keepState: z.boolean().optional(),
      at: timestamp,
    })
    .strict(),
  FeatureUseReported: z
    .object({
      ...feature,
      component: z.string().min(1).max(128),
      /** The value the component saw; reported only when it differs from its last report. */
      value: onOff,
      at: timestamp,
    })
    .strict(),
  FeatureTransitionChanged: z
    .object({
      ...feature,
      /**
       * started, reversed (the desired value flipped mid-transition), completed; stuck (a task past its
       * deadline: the reason says which and why); abandoned (an operator gave it up, the opposite began).
       */
      phase: z.enum(['started', 'reversed', 'completed', 'stuck', 'abandoned']),
      state,
      to: z.enum(['On', 'Off']),
      reason: z.string().max(512),
      /** Tasks in the transition's list (started, reversed) or performed (completed). */
      tasks: z.number().int().nonnegative(),
      at: timestamp,
    })
    .strict(),
  FeatureTaskChanged: z
    .object({
      ...feature,
      state,
      task: z.string().min(1).max(512),
      kind: z.string().min(1).max(64),
      outcome: z.enum(['done', 'waiting', 'failed']),
      attempts: z.number().int().nonnegative(),
      /** Writes (cluster and DynamoDB) this task's attempts made so far. */
      writes: z.number().int().nonnegative(),
      waitingFor: z.string().max(1024).optional(),
      error: z.string().max(1024).optional(),
      /** Not before: the back-off of a failure, or the next look of a wait. */
      retryAt: timestamp.optional(),
      at: timestamp,
    })
    .strict(),
  FeatureRolloutChanged: z
    .object({
      rollout: z.string().min(1).max(128),
      namespace: z.string().min(1).max(63),
      feature: z.string().min(1).max(63),
      to: onOff,
      phase: z.enum([
        'started',
        'wave-started',
        'wave-reached',
        'approved',
        'halted',
        'resumed',
        'rolling-back',
        'rolled-back',
        'completed',
      ]),
      /** The wave concerned (1-based) and how many there are. */
      wave: z.number().int().nonnegative(),
      waves: z.number().int().positive(),
      clusters: z.array(clusterRef).max(100),
      reason: z.string().max(1024).optional(),
      at: timestamp,
    })
    .strict(),
} as const;

type Details = { [K in keyof typeof featureDetailSchemas]: z.infer<(typeof featureDetailSchemas)[K]> };

export const featureDetailExamples: Details = {
  FeatureDesiredChanged: {
    cluster: 'prod-eu-1',
    namespace: 'fleetscope-system',
    feature: 'balloons',
    desired: 'off',
    by: 'operator',
    at: '2026-11-21T10:00:00Z',
  },
  FeatureUseReported: {
    cluster: 'prod-eu-1',
    namespace: 'fleetscope-system',
    feature: 'balloons',
    component: 'cycle/balloons',
    value: 'off',
    at: '2026-11-21T10:00:00Z',
  },
  FeatureTransitionChanged: {
    cluster: 'prod-eu-1',
    namespace: 'fleetscope-system',
    feature: 'balloons',
    phase: 'started',
    state: 'TurningOff',
    to: 'Off',
    reason: 'desired off (set by operator)',
    tasks: 7,
    at: '2026-11-21T10:00:00Z',
  },
  FeatureTaskChanged: {
    cluster: 'prod-eu-1',
    namespace: 'fleetscope-system',
    feature: 'balloons',
    state: 'TurningOff',
    task: 'wait for no pods in kube-system (fleetscope.io/balloon=true)',
    kind: 'wait-for-no-objects',
    outcome: 'waiting',
    attempts: 0,
    writes: 0,
    waitingFor:
      '2 pods in kube-system (fleetscope.io/balloon=true) left: kube-system/fleetscope-balloon-x7k2p, ...',
    retryAt: '2026-11-21T10:01:00Z',
    at: '2026-11-21T10:00:00Z',
  },
  FeatureRolloutChanged: {
    rollout: 'balloons-off-m3x7k2',
    namespace: 'fleetscope-system',
    feature: 'balloons',
    to: 'off',
    phase: 'halted',
    wave: 2,
    waves: 4,
    clusters: ['prod-eu-2'],
    reason: 'cluster prod-eu-2: task "delete DaemonSet kube-system/fleetscope-balloon" failed 3 times: 503',
    at: '2026-11-21T10:00:00Z',
  },
};
