import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { DEFAULTS, ENV } from './config.js';

type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'SILENT' | 'CRITICAL' | 'TRACE';

/** One structured logger per function; every line carries the function and, once known, the cluster. */
export function makeLogger(functionId: string): Logger {
  const level = (process.env[ENV.logLevel] ?? 'INFO').toUpperCase() as LogLevel;
  return new Logger({
    serviceName: DEFAULTS.serviceName,
    logLevel: level,
    persistentKeys: { function: functionId },
  });
}

/**
 * EMF metrics under the fleetscope namespace, dimensioned by function. The cluster rides along as EMF
 * metadata (searchable in the log line, no per-cluster CloudWatch dimension and so no per-cluster cost).
 */
export function makeMetrics(functionId: string, logger: Logger): Metrics {
  return new Metrics({
    namespace: DEFAULTS.metricsNamespace,
    serviceName: DEFAULTS.serviceName,
    defaultDimensions: { function: functionId },
    // An invocation with nothing to count (a cluster with no work this cycle) is normal, so the
    // "no application metrics" notice goes to debug instead of warning on every such invocation.
    logger: {
      debug: (...a: unknown[]) => logger.debug(String(a[0])),
      info: (...a: unknown[]) => logger.info(String(a[0])),
      warn: (...a: unknown[]) => logger.debug(String(a[0])),
      error: (...a: unknown[]) => logger.error(String(a[0])),
    },
  });
}

/** A metric as the domain reports it: a count, or a plain amount (capacity in millicores or bytes). */
export type DomainMetric = [name: string, unit: 'Count' | 'None', value: number];

export function addMetrics(metrics: Metrics, list: readonly DomainMetric[]): void {
  for (const [name, unit, n] of list)
    metrics.addMetric(name, unit === 'Count' ? MetricUnit.Count : MetricUnit.NoUnit, n);
}
