import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Node } from 'constructs';
import { DEFAULTS } from '../shared/platform/config.js';

/**
 * The stack's deploy-time settings, read from CDK context (`cdk.json` or `-c key=value`).
 * The meaning of each is documented at the top of infra/app.ts; the defaults live here only
 * (cdk.json repeats them for discoverability and a test keeps the two equal).
 */
export interface StackConfig {
  stackName: string;
  busName: string;
  kubeconfigSecretPrefix: string;
  logRetentionDays: RetentionDays;
  schedulesEnabled: boolean;
  /** Undefined: no SNS topic, alarms have no actions. */
  alarmEmail: string | undefined;
  /** 0: no archive. */
  eventArchiveDays: number;
  logLevel: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  xrayTracing: boolean;
  /** Role names (IAM wildcards allowed) the cluster-access functions may assume, in any account. */
  assumeRolePattern: string;
  /** Narrows the AssumeRole grant to roles of this AWS Organization (aws:ResourceOrgID). */
  organizationId: string | undefined;
  /** Registered clusters to size the workers' reserved concurrency for (shared/fleet/concurrency.ts). */
  fleetSize: number;
}

export const CONTEXT_DEFAULTS = {
  stackName: 'Fleetscope',
  busName: DEFAULTS.bus,
  kubeconfigSecretPrefix: DEFAULTS.secretPrefix,
  logRetentionDays: 30,
  schedulesEnabled: true,
  alarmEmail: '',
  eventArchiveDays: 7,
  logLevel: 'INFO',
  xrayTracing: false,
  assumeRolePattern: 'fleetscope-*',
  organizationId: '',
  fleetSize: 100,
} as const;

export type ContextKey = keyof typeof CONTEXT_DEFAULTS;

const LOG_LEVELS = ['DEBUG', 'INFO', 'WARN', 'ERROR'] as const;
const RETENTIONS = new Set<number>(
  Object.values(RetentionDays).filter(
    (v): v is number => typeof v === 'number' && v !== RetentionDays.INFINITE,
  ),
);

/** A CloudFormation stack name. */
const STACK_NAME = /^[A-Za-z][A-Za-z0-9-]{0,127}$/;
/** A custom event bus name: no '/', not "default" (that is the account's bus). */
const BUS_NAME = /^[A-Za-z0-9._-]{1,256}$/;
/** Characters Secrets Manager allows in a secret name; '*' and '?' would widen the IAM resource. */
const SECRET_PREFIX = /^[A-Za-z0-9/_+=.@-]{1,400}$/;
const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;
/** A role name (or path/name) with IAM wildcards; at least three literal characters before any '*'. */
const ROLE_PATTERN = /^[\w+=,.@/-]{3,}[\w+=,.@/*?-]{0,509}$/;
const ORGANIZATION_ID = /^o-[a-z0-9]{10,32}$/;

class ContextError extends Error {
  constructor(key: ContextKey, value: unknown, rule: string) {
    super(`context "${key}" = ${JSON.stringify(value)}: ${rule}`);
  }
}

/** Reads and validates every fleetscope context value (CLI `-c` values arrive as strings). */
export function readStackConfig(node: Node): StackConfig {
  const raw = (key: ContextKey): unknown => {
    const v = node.tryGetContext(key);
    return v === undefined || v === null ? CONTEXT_DEFAULTS[key] : v;
  };
  const str = (key: ContextKey): string => String(raw(key)).trim();
  const bool = (key: ContextKey): boolean => {
    const v = raw(key);
    if (typeof v === 'boolean') return v;
    if (v === 'true') return true;
    if (v === 'false') return false;
    throw new ContextError(key, v, 'must be true or false');
  };
  const int = (key: ContextKey): number => {
    const v = raw(key);
    const n = typeof v === 'number' ? v : Number(String(v).trim());
    if (!Number.isInteger(n) || n < 0) throw new ContextError(key, v, 'must be a whole number >= 0');
    return n;
  };

  const stackName = str('stackName');
  if (!STACK_NAME.test(stackName))
    throw new ContextError('stackName', stackName, 'letters, digits and "-", starting with a letter');

  const busName = str('busName');
  if (!BUS_NAME.test(busName) || busName === 'default')
    throw new ContextError(
      'busName',
      busName,
      'a custom bus name: letters, digits, ".", "_", "-"; not "default"',
    );

  const kubeconfigSecretPrefix = str('kubeconfigSecretPrefix');
  if (!SECRET_PREFIX.test(kubeconfigSecretPrefix))
    throw new ContextError(
      'kubeconfigSecretPrefix',
      kubeconfigSecretPrefix,
      'non-empty, only the characters a secret name may contain (letters, digits, /_+=.@-)',
    );

  const logRetentionDays = int('logRetentionDays');
  if (!RETENTIONS.has(logRetentionDays))
    throw new ContextError(
      'logRetentionDays',
      logRetentionDays,
      `one of CloudWatch Logs' retention values: ${[...RETENTIONS].sort((a, b) => a - b).join(', ')}`,
    );

  const alarmEmail = str('alarmEmail');
  if (alarmEmail !== '' && !EMAIL.test(alarmEmail))
    throw new ContextError(
      'alarmEmail',
      alarmEmail,
      'an e-mail address, or empty for no alarm notifications',
    );

  const eventArchiveDays = int('eventArchiveDays');

  const logLevel = str('logLevel').toUpperCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel))
    throw new ContextError('logLevel', logLevel, `one of ${LOG_LEVELS.join(', ')}`);

  const assumeRolePattern = str('assumeRolePattern');
  if (!ROLE_PATTERN.test(assumeRolePattern))
    throw new ContextError(
      'assumeRolePattern',
      assumeRolePattern,
      'a role name pattern such as "fleetscope-*": role-name characters, at least three before any wildcard',
    );
  const organizationId = str('organizationId');
  if (organizationId !== '' && !ORGANIZATION_ID.test(organizationId))
    throw new ContextError(
      'organizationId',
      organizationId,
      'an AWS Organizations ID ("o-" and 10-32 letters or digits), or empty',
    );
  const fleetSize = int('fleetSize');
  if (fleetSize < 1) throw new ContextError('fleetSize', fleetSize, 'must be at least 1');

  return {
    stackName,
    assumeRolePattern,
    organizationId: organizationId === '' ? undefined : organizationId,
    fleetSize,
    busName,
    kubeconfigSecretPrefix,
    logRetentionDays: logRetentionDays as RetentionDays,
    schedulesEnabled: bool('schedulesEnabled'),
    alarmEmail: alarmEmail === '' ? undefined : alarmEmail,
    eventArchiveDays,
    logLevel: logLevel as StackConfig['logLevel'],
    xrayTracing: bool('xrayTracing'),
  };
}
