import { join } from 'node:path';
import { ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { type BundlingOptions, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import type { FunctionSpec } from '../../shared/platform/catalogue.js';
import { DEFAULTS, ENV } from '../../shared/platform/config.js';
import { TABLE } from '../../shared/platform/table.js';
import type { StackConfig } from '../config.js';
import { pascal, REPO_ROOT } from '../paths.js';
import { Network } from './network.js';
import { type DeadLetterQueue, deadLetterQueue } from './queues.js';

/** Lambda's own retries of an asynchronous invocation (Scheduler and EventBridge invoke asynchronously). */
export const ASYNC_INVOKE = {
  retryAttempts: 2,
  /**
   * A queued event older than this goes to the on-failure queue instead of running late. An hour lets
   * a fan-out of a few hundred clusters drain through reserved concurrency without piling up across
   * more than a few 15-minute cycles.
   */
  maxEventAge: Duration.hours(1),
} as const;

/** @kubernetes/client-node 2 is ESM-only and some of its CommonJS dependencies call require(). */
const ESM_REQUIRE_BANNER =
  "import { createRequire } from 'module'; const require = createRequire(import.meta.url);";

// Only what the code calls (test/infra/iam.sim.test.ts records it): no Scan, DescribeTable or
// ConditionCheckItem, which no handler uses.
const TABLE_READ = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query'];
const TABLE_WRITE = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
];
const INDEX_READ = ['dynamodb:Query'];
/** What Powertools' DynamoDBPersistenceLayer calls. */
const IDEMPOTENCY = ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem'];

export interface FleetFunction {
  spec: FunctionSpec;
  fn: NodejsFunction;
  role: iam.Role;
  logGroup: logs.LogGroup;
  /** Where Lambda puts an asynchronous invocation that failed all its retries or aged out. */
  onFailure: DeadLetterQueue;
}

export interface FunctionsProps {
  specs: FunctionSpec[];
  config: StackConfig;
  table: dynamodb.TableV2;
  idempotencyTable: dynamodb.TableV2;
  bus: events.EventBus;
  /** FLEETSCOPE_CONTROL_PLANE: this control plane's name as owner in the registry. */
  controlPlane: string;
  /** Where functions with access.reportBucket write the fleet report (that one object key only). */
  reports: { bucket: s3.IBucket; key: string };
  /** The VPC, subnets and security group every function runs in; none: outside any VPC. */
  network?: Network;
}

/** One Lambda per catalogue FunctionSpec, each with its own role derived from `spec.access`. */
export class Functions extends Construct {
  readonly byId = new Map<string, FleetFunction>();

  constructor(scope: Construct, id: string, props: FunctionsProps) {
    super(scope, id);
    for (const spec of props.specs) {
      if (this.byId.has(spec.id)) throw new Error(`function "${spec.id}" is defined twice in the catalogue`);
      this.byId.set(spec.id, this.create(spec, props));
    }
  }

  get all(): FleetFunction[] {
    return [...this.byId.values()];
  }

  get(id: string): FleetFunction {
    const f = this.byId.get(id);
    if (!f) throw new Error(`the catalogue targets function "${id}", which it does not define`);
    return f;
  }

  /**
   * The IAM path of the roles of functions that reach clusters: member accounts' roles trust exactly
   * the roles under it (infra/member), which no other role of the stack has.
   */
  static clusterAccessRolePath(stackName: string): string {
    return `/fleetscope/${stackName}/`;
  }

  /** `sts:AssumeRole` on roles named like the pattern in any account, or only the organization's. */
  static assumeRoleStatement(scope: Construct, config: StackConfig): iam.PolicyStatement {
    return new iam.PolicyStatement({
      sid: 'AssumeClusterRoles',
      actions: ['sts:AssumeRole'],
      resources: [`arn:${Stack.of(scope).partition}:iam::*:role/${config.assumeRolePattern}`],
      ...(config.organizationId
        ? { conditions: { StringEquals: { 'aws:ResourceOrgID': config.organizationId } } }
        : {}),
    });
  }

  /** The ARN pattern of kubeconfig secrets: Secrets Manager appends "-" and 6 random characters to names. */
  static kubeconfigSecretsArn(scope: Construct, prefix: string): string {
    return Stack.of(scope).formatArn({
      service: 'secretsmanager',
      resource: 'secret',
      resourceName: `${prefix}*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
  }

  private create(spec: FunctionSpec, props: FunctionsProps): FleetFunction {
    const scope = new Construct(this, pascal(spec.id));
    const logGroup = new logs.LogGroup(scope, 'Logs', { retention: props.config.logRetentionDays });
    const role = functionRole(scope, spec, props.config, leastPrivilege(scope, spec, props, logGroup));
    const onFailure = deadLetterQueue(
      scope,
      'OnFailure',
      `function-${spec.id}`,
      `function ${spec.id}: asynchronous invocations that failed every retry or aged out`,
    );
    const fn = new NodejsFunction(scope, 'Function', {
      entry: join(REPO_ROOT, spec.entry),
      handler: 'handler',
      projectRoot: REPO_ROOT,
      depsLockFilePath: join(REPO_ROOT, 'package-lock.json'),
      description: spec.description,
      runtime: lambda.Runtime.NODEJS_24_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: spec.memoryMb,
      timeout: Duration.seconds(spec.timeoutSeconds),
      reservedConcurrentExecutions: spec.reservedConcurrency,
      role,
      logGroup,
      tracing: props.config.xrayTracing ? lambda.Tracing.ACTIVE : undefined,
      environment: environmentOf(spec, props),
      onFailure: new SqsDestination(onFailure.queue),
      retryAttempts: ASYNC_INVOKE.retryAttempts,
      maxEventAge: ASYNC_INVOKE.maxEventAge,
      bundling: bundlingOf(spec),
      ...(props.network
        ? {
            vpc: props.network.vpc,
            vpcSubnets: { subnets: props.network.subnets },
            securityGroups: [props.network.securityGroup],
          }
        : {}),
    });
    return { spec, fn, role, logGroup, onFailure };
  }
}

/** The statements `spec.access` grants: its own log group and the table always, the rest as declared. */
function leastPrivilege(
  scope: Construct,
  spec: FunctionSpec,
  props: FunctionsProps,
  logGroup: logs.LogGroup,
): iam.PolicyStatement[] {
  const { config, table, idempotencyTable, bus, reports } = props;
  const grant = (sid: string, actions: string[], resource: string) =>
    new iam.PolicyStatement({ sid, actions, resources: [resource] });
  const { access } = spec;
  return [
    grant('Logs', ['logs:CreateLogStream', 'logs:PutLogEvents'], logGroup.logGroupArn),
    grant(
      'Table',
      access.table === 'readwrite' ? [...TABLE_READ, ...TABLE_WRITE] : TABLE_READ,
      table.tableArn,
    ),
    grant('TableIndex', INDEX_READ, `${table.tableArn}/index/${TABLE.gsi1.indexName}`),
    ...(access.idempotency ? [grant('Idempotency', IDEMPOTENCY, idempotencyTable.tableArn)] : []),
    ...(access.putEvents ? [grant('PutEvents', ['events:PutEvents'], bus.eventBusArn)] : []),
    ...(access.kubeconfigSecrets
      ? [
          grant(
            'KubeconfigSecrets',
            ['secretsmanager:GetSecretValue'],
            Functions.kubeconfigSecretsArn(scope, config.kubeconfigSecretPrefix),
          ),
        ]
      : []),
    // The report is written, never read back or listed, by the function: PutObject on its one key (no
    // wildcard; earlier reports are the object's versions, which only the bucket's owner reads).
    ...(access.reportBucket
      ? [grant('ReportPut', ['s3:PutObject'], reports.bucket.arnForObjects(reports.key))]
      : []),
    // EKS tokens are presigned sts:GetCallerIdentity URLs: presigning needs no IAM permission. Clusters
    // in other accounts are reached through a role there, which these functions assume.
    ...(access.kubeconfigSecrets ? [Functions.assumeRoleStatement(scope, config)] : []),
    ...(props.network ? [Network.eniStatement()] : []),
  ];
}

/** The function's own role; those that reach clusters sit under the path member accounts trust. */
function functionRole(
  scope: Construct,
  spec: FunctionSpec,
  config: StackConfig,
  statements: iam.PolicyStatement[],
): iam.Role {
  return new iam.Role(scope, 'Role', {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    ...(spec.access.kubeconfigSecrets ? { path: Functions.clusterAccessRolePath(config.stackName) } : {}),
    description: `fleetscope ${spec.id}: ${spec.description}`.slice(0, 1000),
    inlinePolicies: { LeastPrivilege: new iam.PolicyDocument({ statements }) },
  });
}

/** What shared/platform/config reads at cold start, and Powertools' names. */
function environmentOf(spec: FunctionSpec, props: FunctionsProps): Record<string, string> {
  const { config, table, idempotencyTable, bus, controlPlane, reports } = props;
  return {
    [ENV.table]: table.tableName,
    [ENV.idempotencyTable]: idempotencyTable.tableName,
    [ENV.bus]: bus.eventBusName,
    [ENV.secretPrefix]: config.kubeconfigSecretPrefix,
    [ENV.kubeconfigTtlSeconds]: String(DEFAULTS.kubeconfigTtlSeconds),
    [ENV.logLevel]: config.logLevel,
    [ENV.controlPlane]: controlPlane,
    ...(spec.access.reportBucket ? { [ENV.reportBucket]: reports.bucket.bucketName } : {}),
    POWERTOOLS_SERVICE_NAME: DEFAULTS.serviceName,
    POWERTOOLS_METRICS_NAMESPACE: DEFAULTS.metricsNamespace,
    NODE_OPTIONS: ['--enable-source-maps', ...(spec.v8Flags ?? [])].join(' '),
  };
}

/** One minified ESM file with source maps, plus the files the handler reads beside itself. */
function bundlingOf(spec: FunctionSpec): BundlingOptions {
  return {
    format: OutputFormat.ESM,
    target: 'node24',
    mainFields: ['module', 'main'],
    banner: ESM_REQUIRE_BANNER,
    minify: true,
    sourceMap: true,
    sourcesContent: false,
    // Ship the SDK versions package-lock.json pins (and the tests ran against), not whatever the
    // runtime carries; this also keeps @smithy/signature-v4 (EKS token presigning) in the bundle.
    bundleAwsSDK: true,
    // Files the handler reads beside itself (the report's inline Chart.js), from the installed packages.
    ...(spec.bundleFiles?.length
      ? {
          commandHooks: {
            beforeBundling: () => [],
            beforeInstall: () => [],
            afterBundling: (inputDir: string, outputDir: string) =>
              (spec.bundleFiles ?? []).map((f) => `cp "${inputDir}/${f}" "${outputDir}/"`),
          },
        }
      : {}),
  };
}
