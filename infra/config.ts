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

/** Context values as the types the stack takes: CLI `-c` values arrive as strings. */
interface ContextReader {
  str(key: ContextKey): string;
  bool(key: ContextKey): boolean;
  int(key: ContextKey): number;
}

function contextReader(node: Node): ContextReader {
  const raw = (key: ContextKey): unknown => {
    const v = node.tryGetContext(key);
    return v === undefined || v === null ? CONTEXT_DEFAULTS[key] : v;
  };
  return {
    str: (key) => String(raw(key)).trim(),
    bool: (key) => {
      const v = raw(key);
      if (typeof v === 'boolean') return v;
      if (v === 'true') return true;
      if (v === 'false') return false;
      throw new ContextError(key, v, 'must be true or false');
    },
    int: (key) => {
      const v = raw(key);
      const n = typeof v === 'number' ? v : Number(String(v).trim());
      if (!Number.isInteger(n) || n < 0) throw new ContextError(key, v, 'must be a whole number >= 0');
      return n;
    },
  };
}

/** `value` if it keeps its rule, else the ContextError that states the rule. */
function checked<T>(key: ContextKey, value: T, ok: boolean, rule: string): T {
  if (!ok) throw new ContextError(key, value, rule);
  return value;
}

/** Optional strings default to '': that means none. */
const orNone = (value: string): string | undefined => (value === '' ? undefined : value);

/** The names the stack's resources take. */
function readNames(
  context: ContextReader,
): Pick<StackConfig, 'stackName' | 'busName' | 'kubeconfigSecretPrefix'> {
  const stackName = context.str('stackName');
  const busName = context.str('busName');
  const kubeconfigSecretPrefix = context.str('kubeconfigSecretPrefix');
  return {
    stackName: checked(
      'stackName',
      stackName,
      STACK_NAME.test(stackName),
      'letters, digits and "-", starting with a letter',
    ),
    busName: checked(
      'busName',
      busName,
      BUS_NAME.test(busName) && busName !== 'default',
      'a custom bus name: letters, digits, ".", "_", "-"; not "default"',
    ),
    kubeconfigSecretPrefix: checked(
      'kubeconfigSecretPrefix',
      kubeconfigSecretPrefix,
      SECRET_PREFIX.test(kubeconfigSecretPrefix),
      'non-empty, only the characters a secret name may contain (letters, digits, /_+=.@-)',
    ),
  };
}

/** How the stack logs, archives, alarms and runs its schedules. */
function readOperations(
  context: ContextReader,
): Pick<StackConfig, 'logRetentionDays' | 'alarmEmail' | 'eventArchiveDays' | 'logLevel'> {
  const logRetentionDays = context.int('logRetentionDays');
  const alarmEmail = context.str('alarmEmail');
  const eventArchiveDays = context.int('eventArchiveDays');
  const logLevel = context.str('logLevel').toUpperCase();
  return {
    logRetentionDays: checked(
      'logRetentionDays',
      logRetentionDays,
      RETENTIONS.has(logRetentionDays),
      `one of CloudWatch Logs' retention values: ${[...RETENTIONS].sort((a, b) => a - b).join(', ')}`,
    ) as RetentionDays,
    alarmEmail: orNone(
      checked(
        'alarmEmail',
        alarmEmail,
        alarmEmail === '' || EMAIL.test(alarmEmail),
        'an e-mail address, or empty for no alarm notifications',
      ),
    ),
    eventArchiveDays,
    logLevel: checked(
      'logLevel',
      logLevel,
      (LOG_LEVELS as readonly string[]).includes(logLevel),
      `one of ${LOG_LEVELS.join(', ')}`,
    ) as StackConfig['logLevel'],
  };
}

/** Which clusters' roles the stack's functions may assume, and how many clusters to size for. */
function readClusterAccess(
  context: ContextReader,
): Pick<StackConfig, 'assumeRolePattern' | 'organizationId' | 'fleetSize'> {
  const assumeRolePattern = context.str('assumeRolePattern');
  const organizationId = context.str('organizationId');
  const fleetSize = context.int('fleetSize');
  return {
    assumeRolePattern: checked(
      'assumeRolePattern',
      assumeRolePattern,
      ROLE_PATTERN.test(assumeRolePattern),
      'a role name pattern such as "fleetscope-*": role-name characters, at least three before any wildcard',
    ),
    organizationId: orNone(
      checked(
        'organizationId',
        organizationId,
        organizationId === '' || ORGANIZATION_ID.test(organizationId),
        'an AWS Organizations ID ("o-" and 10-32 letters or digits), or empty',
      ),
    ),
    fleetSize: checked('fleetSize', fleetSize, fleetSize >= 1, 'must be at least 1'),
  };
}

/** Reads and validates every fleetscope context value, in the order the errors report them. */
export function readStackConfig(node: Node): StackConfig {
  const context = contextReader(node);
  return {
    ...readNames(context),
    ...readOperations(context),
    ...readClusterAccess(context),
    schedulesEnabled: context.bool('schedulesEnabled'),
    xrayTracing: context.bool('xrayTracing'),
  };
}
