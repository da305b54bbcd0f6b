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
  /** Tables and buckets outlive the stack (DeletionPolicy Retain); false: deleted with it. */
  retainData: boolean;
  /** Undefined (context `vpc` empty): the functions run outside any VPC, as for public endpoints. */
  vpc: VpcSettings | undefined;
}

/** The functions in a VPC (context `vpc` and its companions; see infra/app.ts). */
export interface VpcSettings {
  /** An existing VPC's id, or undefined: the stack creates one (`vpc=create`). */
  vpcId: string | undefined;
  /** The existing VPC's subnets the functions run in (private ones, in two AZs or more). */
  subnetIds: string[];
  /** Their route tables, for the gateway endpoints (one, or one per subnet in the same order). */
  routeTableIds: string[];
  /** How the AWS APIs are reached: VPC endpoints the stack creates, or a NAT. */
  egress: 'endpoints' | 'nat';
  /** The CIDR of the VPC the stack creates. */
  cidr: string;
  /** Where the clusters' API endpoints are: the security group's HTTPS egress. */
  egressCidrs: string[];
  /**
   * The region's managed prefix lists of DynamoDB and S3 (pl-...): the gateway endpoints' addresses,
   * given only when egressCidrs is narrowed from 0.0.0.0/0, which would otherwise leave them out.
   */
  prefixListIds: string[];
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
  retainData: true,
  vpc: '',
  vpcSubnetIds: '',
  vpcRouteTableIds: '',
  vpcEgress: 'endpoints',
  vpcCidr: '10.72.0.0/16',
  clusterEndpointCidrs: '0.0.0.0/0',
  vpcPrefixListIds: '',
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
/** An IPv4 CIDR block. */
const CIDR = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;
const isCidr = (v: string): boolean => {
  const m = CIDR.exec(v);
  return !!m && m.slice(1, 5).every((o) => Number(o) <= 255) && Number(m[5]) <= 32;
};
/** A comma-separated list whose every item passes `item` (empty when `empty` allows it). */
const listOf =
  (item: (v: string) => boolean, empty: boolean) =>
  (v: string): boolean =>
    v === '' ? empty : v.split(',').every((x) => item(x.trim()));

class ContextError extends Error {
  constructor(key: ContextKey, value: unknown, rule: string) {
    super(`context "${key}" = ${JSON.stringify(value)}: ${rule}`);
  }
}

/** What a context value must be, and what the error says when it is not. */
interface Rule<T> {
  test(value: T): boolean;
  says: string;
}

const matches = (pattern: RegExp) => (value: string) => pattern.test(value);

/** The rules of the string values (after trimming); logLevel's is kept where it is upper-cased. */
const STRING_RULES: Partial<Record<ContextKey, Rule<string>>> = {
  stackName: { test: matches(STACK_NAME), says: 'letters, digits and "-", starting with a letter' },
  busName: {
    test: (v) => BUS_NAME.test(v) && v !== 'default',
    says: 'a custom bus name: letters, digits, ".", "_", "-"; not "default"',
  },
  kubeconfigSecretPrefix: {
    test: matches(SECRET_PREFIX),
    says: 'non-empty, only the characters a secret name may contain (letters, digits, /_+=.@-)',
  },
  alarmEmail: {
    test: (v) => v === '' || EMAIL.test(v),
    says: 'an e-mail address, or empty for no alarm notifications',
  },
  assumeRolePattern: {
    test: matches(ROLE_PATTERN),
    says: 'a role name pattern such as "fleetscope-*": role-name characters, at least three before any wildcard',
  },
  organizationId: {
    test: (v) => v === '' || ORGANIZATION_ID.test(v),
    says: 'an AWS Organizations ID ("o-" and 10-32 letters or digits), or empty',
  },
  vpc: {
    test: (v) => v === '' || v === 'create' || /^vpc-[0-9a-f]{8,17}$/.test(v),
    says: 'empty (no VPC), "create" (the stack creates one) or an existing VPC id (vpc-...)',
  },
  vpcSubnetIds: {
    test: listOf((x) => /^subnet-[0-9a-f]{8,17}$/.test(x), true),
    says: 'subnet ids (subnet-...), comma-separated',
  },
  vpcRouteTableIds: {
    test: listOf((x) => /^rtb-[0-9a-f]{8,17}$/.test(x), true),
    says: 'route table ids (rtb-...), comma-separated',
  },
  vpcEgress: { test: (v) => v === 'endpoints' || v === 'nat', says: '"endpoints" or "nat"' },
  vpcCidr: {
    test: (v) => isCidr(v) && Number(v.split('/')[1]) <= 20,
    says: "an IPv4 CIDR of /20 or larger (two /22 subnets and room for the NAT's public ones)",
  },
  clusterEndpointCidrs: {
    test: listOf(isCidr, false),
    says: 'IPv4 CIDRs of the cluster API endpoints, comma-separated (0.0.0.0/0 for anywhere)',
  },
  vpcPrefixListIds: {
    test: listOf((x) => /^pl-[0-9a-f]{8,17}$/.test(x), true),
    says: 'managed prefix list ids (pl-...), comma-separated',
  },
};

/** The rules of the whole numbers, beyond being whole and >= 0. */
const NUMBER_RULES: Partial<Record<ContextKey, Rule<number>>> = {
  logRetentionDays: {
    test: (v) => RETENTIONS.has(v),
    says: `one of CloudWatch Logs' retention values: ${[...RETENTIONS].sort((a, b) => a - b).join(', ')}`,
  },
  fleetSize: { test: (n) => n >= 1, says: 'must be at least 1' },
};

/** Context values as the types the stack takes (CLI `-c` values arrive as strings), each kept to its rule. */
interface ContextReader {
  str(key: ContextKey): string;
  int(key: ContextKey): number;
  bool(key: ContextKey): boolean;
}

function contextReader(node: Node): ContextReader {
  const raw = (key: ContextKey): unknown => {
    const v = node.tryGetContext(key);
    return v === undefined || v === null ? CONTEXT_DEFAULTS[key] : v;
  };
  const kept = <T>(key: ContextKey, value: T, rule: Rule<T> | undefined): T => {
    if (rule && !rule.test(value)) throw new ContextError(key, value, rule.says);
    return value;
  };
  return {
    str: (key) => kept(key, String(raw(key)).trim(), STRING_RULES[key]),
    int: (key) => {
      const v = raw(key);
      const n = typeof v === 'number' ? v : Number(String(v).trim());
      if (!Number.isInteger(n) || n < 0) throw new ContextError(key, v, 'must be a whole number >= 0');
      return kept(key, n, NUMBER_RULES[key]);
    },
    bool: (key) => {
      const v = raw(key);
      if (typeof v === 'boolean') return v;
      if (v === 'true') return true;
      if (v === 'false') return false;
      throw new ContextError(key, v, 'must be true or false');
    },
  };
}

/** Optional strings default to '': that means none. */
const orNone = (value: string): string | undefined => (value === '' ? undefined : value);

/** Any case on the command line; the error shows the value upper-cased, as it is checked. */
function readLogLevel(context: ContextReader): StackConfig['logLevel'] {
  const logLevel = context.str('logLevel').toUpperCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel))
    throw new ContextError('logLevel', logLevel, `one of ${LOG_LEVELS.join(', ')}`);
  return logLevel as StackConfig['logLevel'];
}

/**
 * Reads and validates every fleetscope context value (each key's rule in STRING_RULES or NUMBER_RULES);
 * the first value that breaks its rule, in this order, is the error.
 */
export function readStackConfig(node: Node): StackConfig {
  const context = contextReader(node);
  return {
    stackName: context.str('stackName'),
    busName: context.str('busName'),
    kubeconfigSecretPrefix: context.str('kubeconfigSecretPrefix'),
    logRetentionDays: context.int('logRetentionDays') as RetentionDays,
    alarmEmail: orNone(context.str('alarmEmail')),
    eventArchiveDays: context.int('eventArchiveDays'),
    logLevel: readLogLevel(context),
    assumeRolePattern: context.str('assumeRolePattern'),
    organizationId: orNone(context.str('organizationId')),
    fleetSize: context.int('fleetSize'),
    schedulesEnabled: context.bool('schedulesEnabled'),
    xrayTracing: context.bool('xrayTracing'),
    retainData: context.bool('retainData'),
    vpc: readVpc(context),
  };
}

const items = (v: string): string[] => (v === '' ? [] : [...new Set(v.split(',').map((x) => x.trim()))]);

/** The VPC settings, or undefined without `vpc`; companions that contradict `vpc` are errors. */
function readVpc(context: ContextReader): VpcSettings | undefined {
  const vpc = context.str('vpc');
  const subnetIds = items(context.str('vpcSubnetIds'));
  const routeTableIds = items(context.str('vpcRouteTableIds'));
  const egress = context.str('vpcEgress') as VpcSettings['egress'];
  const settings: VpcSettings = {
    vpcId: vpc.startsWith('vpc-') ? vpc : undefined,
    subnetIds,
    routeTableIds,
    egress,
    cidr: context.str('vpcCidr'),
    egressCidrs: items(context.str('clusterEndpointCidrs')),
    prefixListIds: items(context.str('vpcPrefixListIds')),
  };
  if (vpc === '') {
    if (subnetIds.length || routeTableIds.length || settings.prefixListIds.length)
      throw new ContextError('vpc', vpc, 'vpcSubnetIds and vpcRouteTableIds need vpc set to a VPC id');
    return undefined;
  }
  if (!settings.vpcId) {
    if (subnetIds.length || routeTableIds.length)
      throw new ContextError('vpcSubnetIds', subnetIds.join(','), 'only with an existing VPC (vpc=vpc-...)');
    return checkAwsApisReachable(settings);
  }
  if (subnetIds.length < 2)
    throw new ContextError('vpcSubnetIds', subnetIds.join(','), 'at least two subnets (two AZs) of the VPC');
  if (egress === 'endpoints' && routeTableIds.length !== 1 && routeTableIds.length !== subnetIds.length)
    throw new ContextError(
      'vpcRouteTableIds',
      routeTableIds.join(','),
      "the subnets' route tables (one, or one per subnet in order): the DynamoDB and S3 gateway endpoints go on them",
    );
  return checkAwsApisReachable(settings);
}

/**
 * The security group's egress must still reach the AWS APIs when clusterEndpointCidrs is narrowed:
 * through a NAT they are public addresses (so only 0.0.0.0/0 reaches them); through gateway endpoints
 * they are the services' prefix lists, which CloudFormation cannot look up, so the operator names them.
 */
function checkAwsApisReachable(settings: VpcSettings): VpcSettings {
  const narrowed = !settings.egressCidrs.includes('0.0.0.0/0');
  const lists = settings.prefixListIds.join(',');
  if (narrowed && settings.egress === 'nat')
    throw new ContextError(
      'clusterEndpointCidrs',
      settings.egressCidrs.join(','),
      'with vpcEgress=nat the AWS APIs (DynamoDB, STS, Secrets Manager, EventBridge, S3) are reached through the NAT at public addresses: keep 0.0.0.0/0, or use vpcEgress=endpoints with vpcPrefixListIds',
    );
  if (narrowed && settings.egress === 'endpoints' && settings.prefixListIds.length === 0)
    throw new ContextError(
      'vpcPrefixListIds',
      lists,
      "needed when clusterEndpointCidrs is narrowed: the region's managed prefix lists of dynamodb and s3, which the gateway endpoints are reached at (aws ec2 describe-managed-prefix-lists --filters Name=prefix-list-name,Values=com.amazonaws.REGION.dynamodb,com.amazonaws.REGION.s3)",
    );
  if (!narrowed && settings.prefixListIds.length)
    throw new ContextError(
      'vpcPrefixListIds',
      lists,
      'only when clusterEndpointCidrs is narrowed from 0.0.0.0/0',
    );
  return settings;
}
