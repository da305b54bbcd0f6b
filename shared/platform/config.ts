/**
 * Environment variables every fleetscope function reads. The CDK stack sets them on each Lambda; the
 * local runtime sets them for its stand-ins. One place for the names, so the two agree.
 */
export const ENV = {
  /** The fleetscope table (shared/platform/table.ts). */
  table: 'FLEETSCOPE_TABLE',
  /** Powertools idempotency records. */
  idempotencyTable: 'FLEETSCOPE_IDEMPOTENCY_TABLE',
  /** The custom EventBridge bus. */
  bus: 'FLEETSCOPE_BUS',
  /** Kubeconfig secrets must be named under this prefix (IAM allows nothing else). */
  secretPrefix: 'FLEETSCOPE_SECRET_PREFIX',
  /** Seconds a kubeconfig (and the client built from it) is cached in a warm Lambda. */
  kubeconfigTtlSeconds: 'FLEETSCOPE_KUBECONFIG_TTL_SECONDS',
  /** Log level for the Powertools logger. */
  logLevel: 'FLEETSCOPE_LOG_LEVEL',
  /**
   * This control plane's name in the registry (the stack sets `<stack>@<region>`): it registers clusters
   * as their owner and dispatches work only for the clusters it owns, so two control planes sharing a
   * registry never act on the same cluster.
   */
  controlPlane: 'FLEETSCOPE_CONTROL_PLANE',
  /** The private bucket the scheduled fleet report is written to (deployed stack). */
  reportBucket: 'FLEETSCOPE_REPORT_BUCKET',
  /** The directory the scheduled fleet report is written to instead (local runtime). */
  reportDir: 'FLEETSCOPE_REPORT_DIR',
} as const;

export const DEFAULTS = {
  table: 'fleetscope',
  idempotencyTable: 'fleetscope-idempotency',
  bus: 'fleetscope',
  secretPrefix: 'fleetscope/clusters/',
  kubeconfigTtlSeconds: 300,
  metricsNamespace: 'fleetscope',
  serviceName: 'fleetscope',
  controlPlane: 'fleetscope',
} as const;

export interface RuntimeConfig {
  table: string;
  idempotencyTable: string;
  bus: string;
  secretPrefix: string;
  kubeconfigTtlSeconds: number;
  controlPlane: string;
}

export function readConfig(env: NodeJS.ProcessEnv = process.env): RuntimeConfig {
  const ttl = Number(env[ENV.kubeconfigTtlSeconds] ?? DEFAULTS.kubeconfigTtlSeconds);
  if (!Number.isFinite(ttl) || ttl < 0)
    throw new Error(`${ENV.kubeconfigTtlSeconds} must be a number of seconds`);
  return {
    table: env[ENV.table] ?? DEFAULTS.table,
    idempotencyTable: env[ENV.idempotencyTable] ?? DEFAULTS.idempotencyTable,
    bus: env[ENV.bus] ?? DEFAULTS.bus,
    secretPrefix: env[ENV.secretPrefix] ?? DEFAULTS.secretPrefix,
    kubeconfigTtlSeconds: ttl,
    controlPlane: env[ENV.controlPlane] || DEFAULTS.controlPlane,
  };
}
