import { IdempotencyConfig } from '@aws-lambda-powertools/idempotency';
import { DynamoDBPersistenceLayer } from '@aws-lambda-powertools/idempotency/dynamodb';
import { makeHandlerIdempotent } from '@aws-lambda-powertools/idempotency/middleware';
import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { Metrics } from '@aws-lambda-powertools/metrics';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy, { type MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import type { z } from 'zod';
import type { Capability } from './catalogue.js';
import { CurrentDynamoClient, type Deps, deps } from './deps.js';
import type { BusEvent, DetailType } from './events.js';
import { eventsSchema } from './events.js';
import { makeLogger, makeMetrics } from './observability.js';
import { parseOrThrow } from './validation.js';

export interface HandlerTools {
  logger: Logger;
  metrics: Metrics;
  deps: Deps;
}

export type LambdaHandler<E = unknown, R = unknown> = (event: E, context: Context) => Promise<R>;

/** Validates the raw event and hands the parsed value on; a bad event fails with every bad field named. */
function validate<S extends z.ZodType>(schema: S, what: string, tools: HandlerTools): MiddlewareObj {
  return {
    before: (request) => {
      try {
        request.event = parseOrThrow(schema, request.event, what);
      } catch (err) {
        tools.metrics.addMetric('InvalidInput', MetricUnit.Count, 1);
        throw err;
      }
    },
  };
}

/** Tags every log line (and the EMF record) with the cluster the invocation concerns. */
function clusterContext(clusterOf: (event: never) => string | undefined, tools: HandlerTools): MiddlewareObj {
  return {
    before: (request) => {
      const cluster = clusterOf(request.event as never);
      if (cluster) {
        tools.logger.appendKeys({ cluster });
        tools.metrics.addMetadata('cluster', cluster);
      }
    },
    after: () => tools.logger.removeKeys(['cluster']),
    onError: (request) => {
      tools.logger.error('invocation failed', { error: request.error });
      tools.logger.removeKeys(['cluster']);
    },
  };
}

/** The invocation context every capability adds (see Capability.invocationContext). */
function capabilityContexts(
  capabilities: readonly Capability[],
  t: HandlerTools,
  clusterOf: (event: never) => string | undefined,
): MiddlewareObj[] {
  return capabilities.flatMap((c) =>
    c.invocationContext
      ? [c.invocationContext({ logger: t.logger, metrics: t.metrics, deps }, clusterOf)]
      : [],
  );
}

function tools(capabilities: readonly Capability[], functionId: string): HandlerTools {
  // Fail at import time if the catalogue does not know this function.
  if (!capabilities.some((c) => c.functions.some((f) => f.id === functionId)))
    throw new Error(`no function "${functionId}" in the catalogue`);
  const logger = makeLogger(functionId);
  return {
    logger,
    metrics: makeMetrics(functionId, logger),
    get deps() {
      return deps();
    },
  };
}

/**
 * A scheduled handler: EventBridge Scheduler invokes it with the schedule's `input` payload.
 * Parse -> domain -> adapters, wrapped in the Powertools logger and metrics middlewares.
 */
function scheduledHandler<S extends z.ZodType, R>(
  capabilities: readonly Capability[],
  spec: {
    functionId: string;
    input: S;
    run: (input: z.infer<S>, tools: HandlerTools) => Promise<R>;
  },
): LambdaHandler<unknown, R> {
  const t = tools(capabilities, spec.functionId);
  return middy<unknown, R>()
    .use(injectLambdaContext(t.logger, { resetKeys: true }))
    .use(logMetrics(t.metrics, { captureColdStartMetric: true }))
    .use(validate(spec.input, 'scheduled input', t))
    .use(clusterContext(() => undefined, t))
    .handler(async (input) => spec.run(input as z.infer<S>, t)) as unknown as LambdaHandler<unknown, R>;
}

// One persistence layer per function: Powertools configures a layer with its function's key prefix,
// and in the local runtime several functions share one process.
const persistence = new Map<string, DynamoDBPersistenceLayer>();
function idempotencyStore(functionId: string): DynamoDBPersistenceLayer {
  let layer = persistence.get(functionId);
  if (!layer) {
    layer = new DynamoDBPersistenceLayer({
      tableName: deps().config.idempotencyTable,
      awsSdkV3Client: new CurrentDynamoClient(),
    });
    persistence.set(functionId, layer);
  }
  return layer;
}

/**
 * An event-triggered handler for the detail-types its rules route to it. EventBridge delivers at least once, so the
 * invocation is idempotent on the event id: a redelivered event returns the first result and does no
 * work twice (Powertools idempotency on the idempotency table).
 */
function eventHandler<T extends DetailType, R>(
  capabilities: readonly Capability[],
  spec: {
    functionId: string;
    detailTypes: readonly T[];
    run: (event: BusEvent<T>, tools: HandlerTools) => Promise<R>;
    clusterOf?: (event: BusEvent<T>) => string | undefined;
  },
): LambdaHandler<unknown, R> {
  const t = tools(capabilities, spec.functionId);
  const clusterOf =
    spec.clusterOf ?? ((e: BusEvent<T>) => (e.detail as { cluster?: string } | undefined)?.cluster);
  return middy<unknown, R>()
    .use(injectLambdaContext(t.logger, { resetKeys: true }))
    .use(logMetrics(t.metrics, { captureColdStartMetric: true }))
    .use(validate(eventsSchema(spec.detailTypes), `${spec.detailTypes.join(' or ')} event`, t))
    .use(clusterContext(clusterOf as (e: never) => string | undefined, t))
    .use(capabilityContexts(capabilities, t, clusterOf as (e: never) => string | undefined))
    .use(
      makeHandlerIdempotent({
        persistenceStore: idempotencyStore(spec.functionId),
        // Keyed by function, not by the Lambda's deployed name: several functions receive the same
        // event (same id) and each must run it once.
        keyPrefix: spec.functionId,
        config: new IdempotencyConfig({ eventKeyJmesPath: 'id', expiresAfterSeconds: 24 * 3600 }),
      }),
    )
    .handler(async (event) => spec.run(event as BusEvent<T>, t)) as unknown as LambdaHandler<unknown, R>;
}

/**
 * The handler kit bound to a catalogue: the platform knows what a capability is, not which ones exist;
 * shared/handlers.ts binds it to the list above it.
 */
export function handlerKit(capabilities: readonly Capability[]) {
  return {
    scheduledHandler: <S extends z.ZodType, R>(spec: Parameters<typeof scheduledHandler<S, R>>[1]) =>
      scheduledHandler(capabilities, spec),
    eventHandler: <T extends DetailType, R>(spec: Parameters<typeof eventHandler<T, R>>[1]) =>
      eventHandler(capabilities, spec),
  };
}
