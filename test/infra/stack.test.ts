import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type CfnElement, Token, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildFleetscope } from '../../infra/build.js';
import { CONTEXT_DEFAULTS } from '../../infra/config.js';
import { ASYNC_INVOKE } from '../../infra/constructs/functions.js';
import { RULE_DELIVERY } from '../../infra/constructs/rules.js';
import { SCHEDULE_DELIVERY } from '../../infra/constructs/schedules.js';
import { REPO_ROOT } from '../../infra/paths.js';
import type { FleetscopeStack } from '../../infra/stack.js';
import { allFunctions, allRules, allSchedules } from '../../shared/capabilities.js';
import { DEFAULTS, ENV } from '../../shared/platform/config.js';
import { IDEMPOTENCY_TABLE, TABLE } from '../../shared/platform/table.js';

import {
  asArray,
  cdkJson,
  type Json,
  newApp,
  ofType,
  roleStatements,
  type Statement,
  synth,
  tempDir,
} from './synth.js';

// One test at the end runs the real CLI.

const logicalId = (stack: FleetscopeStack, c: { node: { defaultChild?: unknown } }) =>
  stack.getLogicalId(c.node.defaultChild as CfnElement);
const allIdentityStatements = (resources: Record<string, Json>): Statement[] => [
  ...ofType(resources, 'AWS::IAM::Role').flatMap(([id]) => roleStatements(resources, id)),
  ...ofType(resources, 'AWS::IAM::ManagedPolicy').flatMap(([, p]) => p.Properties.PolicyDocument.Statement),
];
const actionsOf = (s: Statement) => asArray(s.Action);

const secretArn = (prefix: string) => ({
  'Fn::Join': [
    '',
    [
      'arn:',
      { Ref: 'AWS::Partition' },
      ':secretsmanager:',
      { Ref: 'AWS::Region' },
      ':',
      { Ref: 'AWS::AccountId' },
      `:secret:${prefix}*`,
    ],
  ],
});

/**
 * The cycle and its follow share the hour out (the follow skips the cycle's ticks, so that the two never
 * run at once on two Lambda instances): the cycle at every fifth minute, the follow at the others.
 */
const expectedExpression: Record<string, string> = {
  cycle: 'cron(0,5,10,15,20,25,30,35,40,45,50,55 * * * ? *)',
  'cycle-follow': 'cron(1-4,6-9,11-14,16-19,21-24,26-29,31-34,36-39,41-44,46-49,51-54,56-59 * * * ? *)',
};

/** As CDK writes a rate: in the largest whole unit (60 minutes is "rate(1 hour)"). */
const rate = (minutes: number) => {
  const [n, unit] =
    minutes % 1440 === 0
      ? [minutes / 1440, 'day']
      : minutes % 60 === 0
        ? [minutes / 60, 'hour']
        : [minutes, 'minute'];
  return `rate(${n} ${n === 1 ? unit : `${unit}s`})`;
};
const asyncTargets = new Set([...allSchedules().map((s) => s.target), ...allRules().map((r) => r.target)]);

describe('fleetscope stack (default context)', () => {
  let s: ReturnType<typeof synth>;
  beforeAll(() => {
    s = synth();
  });

  it('synthesises with cdk-nag AwsSolutions and no unacknowledged finding, environment-agnostic', () => {
    expect(s.stack.stackName).toBe(CONTEXT_DEFAULTS.stackName);
    expect(Token.isUnresolved(s.stack.account)).toBe(true);
    expect(Token.isUnresolved(s.stack.region)).toBe(true);
    // vitest sets AWS_REGION=us-east-1: an environment-agnostic template must not pick it up.
    expect(JSON.stringify(s.template.toJSON())).not.toContain('us-east-1');
    expect(ofType(s.resources, 'AWS::Lambda::Function').length).toBeGreaterThan(0);
  });

  it('builds the fleetscope table from shared/platform/table.ts', () => {
    const [[, table], ...rest] = ofType(s.resources, 'AWS::DynamoDB::GlobalTable').filter(([id]) =>
      id.startsWith('TablesTable'),
    ) as [[string, Json]];
    expect(rest).toEqual([]);
    const p = table.Properties;
    expect(p.KeySchema).toEqual([
      { AttributeName: TABLE.partitionKey.name, KeyType: 'HASH' },
      { AttributeName: TABLE.sortKey.name, KeyType: 'RANGE' },
    ]);
    expect(p.AttributeDefinitions).toEqual(
      expect.arrayContaining(
        [TABLE.partitionKey, TABLE.sortKey, TABLE.gsi1.partitionKey, TABLE.gsi1.sortKey].map((a) => ({
          AttributeName: a.name,
          AttributeType: a.type,
        })),
      ),
    );
    expect(p.AttributeDefinitions).toHaveLength(4);
    expect(p.GlobalSecondaryIndexes).toEqual([
      {
        IndexName: TABLE.gsi1.indexName,
        KeySchema: [
          { AttributeName: TABLE.gsi1.partitionKey.name, KeyType: 'HASH' },
          { AttributeName: TABLE.gsi1.sortKey.name, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      },
    ]);
    expect(p.TimeToLiveSpecification).toEqual({ AttributeName: TABLE.ttlAttribute, Enabled: true });
    expect(p.BillingMode).toBe('PAY_PER_REQUEST');
    expect(p.SSESpecification).toEqual({ SSEEnabled: true, SSEType: 'KMS' });
    expect(p.Replicas).toHaveLength(1);
    expect(p.Replicas[0].PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
    expect(p.Replicas[0].DeletionProtectionEnabled).toBe(true);
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.UpdateReplacePolicy).toBe('Retain');
  });

  it('builds the idempotency table from IDEMPOTENCY_TABLE', () => {
    const id = logicalId(s.stack, s.stack.tables.idempotency);
    const p = s.resources[id]!.Properties;
    expect(p.KeySchema).toEqual([{ AttributeName: IDEMPOTENCY_TABLE.partitionKey.name, KeyType: 'HASH' }]);
    expect(p.AttributeDefinitions).toEqual([
      {
        AttributeName: IDEMPOTENCY_TABLE.partitionKey.name,
        AttributeType: IDEMPOTENCY_TABLE.partitionKey.type,
      },
    ]);
    expect(p.TimeToLiveSpecification).toEqual({
      AttributeName: IDEMPOTENCY_TABLE.ttlAttribute,
      Enabled: true,
    });
    expect(p.BillingMode).toBe('PAY_PER_REQUEST');
    expect(p.SSESpecification).toEqual({ SSEEnabled: true, SSEType: 'KMS' });
    expect(p.Replicas[0].PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
  });

  it('creates the custom bus named DEFAULTS.bus with an archive of fleetscope events', () => {
    s.template.resourcePropertiesCountIs('AWS::Events::EventBus', { Name: DEFAULTS.bus }, 1);
    s.template.resourceCountIs('AWS::Events::EventBus', 1);
    s.template.hasResourceProperties('AWS::Events::Archive', {
      EventPattern: { source: ['fleetscope'] },
      RetentionDays: CONTEXT_DEFAULTS.eventArchiveDays,
      SourceArn: { 'Fn::GetAtt': [logicalId(s.stack, s.stack.bus.bus), 'Arn'] },
    });
    const [[, archive]] = ofType(s.resources, 'AWS::Events::Archive') as [[string, Json]];
    expect(archive.Properties).not.toHaveProperty('KmsKeyIdentifier');
  });

  it('has one nodejs24.x arm64 ESM Lambda per catalogue function, sized by its spec', () => {
    s.template.resourceCountIs('AWS::Lambda::Function', allFunctions().length);
    expect(s.stack.functions.all.map((f) => f.spec.id)).toEqual(allFunctions().map((f) => f.id));
    for (const f of s.stack.functions.all) {
      const p = s.resources[logicalId(s.stack, f.fn)]!.Properties;
      expect(p.Runtime).toBe('nodejs24.x');
      expect(p.Architectures).toEqual(['arm64']);
      expect(p.Handler).toBe('index.handler');
      expect(p.MemorySize).toBe(f.spec.memoryMb);
      expect(p.Timeout).toBe(f.spec.timeoutSeconds);
      expect(p.ReservedConcurrentExecutions).toBe(f.spec.reservedConcurrency);
      expect(p.Description).toBe(f.spec.description);
      expect(p.Role).toEqual({ 'Fn::GetAtt': [logicalId(s.stack, f.role), 'Arn'] });
      expect(p.LoggingConfig).toEqual({ LogGroup: { Ref: logicalId(s.stack, f.logGroup) } });
      expect(p).not.toHaveProperty('TracingConfig');
      const env = p.Environment.Variables;
      expect(env[ENV.table]).toEqual({ Ref: logicalId(s.stack, s.stack.tables.table) });
      expect(env[ENV.idempotencyTable]).toEqual({ Ref: logicalId(s.stack, s.stack.tables.idempotency) });
      expect(env[ENV.bus]).toEqual({ Ref: logicalId(s.stack, s.stack.bus.bus) });
      expect(env[ENV.secretPrefix]).toBe(DEFAULTS.secretPrefix);
      expect(env[ENV.logLevel]).toBe('INFO');
      expect(env.POWERTOOLS_SERVICE_NAME).toBe(DEFAULTS.serviceName);
      expect(env.POWERTOOLS_METRICS_NAMESPACE).toBe(DEFAULTS.metricsNamespace);
      expect(env.NODE_OPTIONS).toBe(['--enable-source-maps', ...(f.spec.v8Flags ?? [])].join(' '));
    }
    const cycle = s.stack.functions.all.find((f) => f.spec.id === 'cycle');
    expect(s.resources[logicalId(s.stack, cycle!.fn)]!.Properties.Environment.Variables.NODE_OPTIONS).toBe(
      '--enable-source-maps --max-semi-space-size=64',
    );
  });

  it('gives every function a log group with explicit retention', () => {
    s.template.resourceCountIs('AWS::Logs::LogGroup', allFunctions().length);
    s.template.allResourcesProperties('AWS::Logs::LogGroup', {
      RetentionInDays: CONTEXT_DEFAULTS.logRetentionDays,
    });
  });

  it('has one Scheduler schedule per catalogue schedule, with its rate, input, DLQ and retries', () => {
    s.template.resourceCountIs('AWS::Scheduler::Schedule', allSchedules().length);
    s.template.hasResourceProperties('AWS::Scheduler::ScheduleGroup', { Name: DEFAULTS.bus });
    for (const sched of s.stack.schedules.all) {
      const p = s.resources[logicalId(s.stack, sched.schedule)]!.Properties;
      const spec = allSchedules().find((x) => x.id === sched.spec.id)!;
      expect(p.ScheduleExpression).toBe(expectedExpression[spec.id] ?? rate(spec.everyMinutes));
      expect(p.State).toBe('ENABLED');
      expect(p.GroupName).toBe(DEFAULTS.bus);
      expect(JSON.parse(p.Target.Input)).toEqual(spec.input);
      expect(p.Target.Arn).toEqual({
        'Fn::GetAtt': [logicalId(s.stack, s.stack.functions.get(spec.target).fn), 'Arn'],
      });
      expect(p.Target.DeadLetterConfig).toEqual({
        Arn: { 'Fn::GetAtt': [logicalId(s.stack, sched.dlq.queue), 'Arn'] },
      });
      expect(p.Target.RetryPolicy.MaximumRetryAttempts).toBe(SCHEDULE_DELIVERY.retryAttempts);
    }
  });

  it('lets each Scheduler role invoke only its target function and send only to its DLQ', () => {
    for (const sched of s.stack.schedules.all) {
      const roleId = logicalId(s.stack, sched.role);
      const fnId = logicalId(s.stack, s.stack.functions.get(sched.spec.target).fn);
      const statements = roleStatements(s.resources, roleId);
      expect(statements.map((st) => [actionsOf(st), st.Resource])).toEqual([
        [['lambda:InvokeFunction'], { 'Fn::GetAtt': [fnId, 'Arn'] }],
        [['sqs:SendMessage'], { 'Fn::GetAtt': [logicalId(s.stack, sched.dlq.queue), 'Arn'] }],
      ]);
      const trust = s.resources[roleId]!.Properties.AssumeRolePolicyDocument.Statement;
      expect(trust).toEqual([
        expect.objectContaining({
          Principal: { Service: 'scheduler.amazonaws.com' },
          Condition: {
            StringEquals: {
              'aws:SourceAccount': { Ref: 'AWS::AccountId' },
              'aws:SourceArn': { 'Fn::GetAtt': [logicalId(s.stack, s.stack.schedules.group), 'Arn'] },
            },
          },
        }),
      ]);
    }
  });

  it('has one rule on the bus per catalogue rule, with exactly the catalogue pattern, a DLQ and retries', () => {
    s.template.resourceCountIs('AWS::Events::Rule', allRules().length);
    for (const r of s.stack.rules.all) {
      const spec = allRules().find((x) => x.id === r.spec.id)!;
      const p = s.resources[logicalId(s.stack, r.rule)]!.Properties;
      expect(p.EventPattern).toEqual(spec.pattern);
      expect(p.EventBusName).toEqual({ Ref: logicalId(s.stack, s.stack.bus.bus) });
      expect(p.Targets).toHaveLength(1);
      expect(p.Targets[0].Arn).toEqual({
        'Fn::GetAtt': [logicalId(s.stack, s.stack.functions.get(spec.target).fn), 'Arn'],
      });
      expect(p.Targets[0].DeadLetterConfig).toEqual({
        Arn: { 'Fn::GetAtt': [logicalId(s.stack, r.dlq.queue), 'Arn'] },
      });
      expect(p.Targets[0].RetryPolicy).toEqual({
        MaximumRetryAttempts: RULE_DELIVERY.retryAttempts,
        MaximumEventAgeInSeconds: RULE_DELIVERY.maxEventAge.toSeconds(),
      });
    }
  });

  it('creates every schedule after every rule and its invoke permission (a deploy that adds a route starts no work it would drop)', () => {
    // The follow's rule is new in the deploy that adds the follow; its schedule, new too, would otherwise
    // start follows while EventBridge cannot yet invoke the function (403: not retried, dead-lettered).
    const ruleIds = s.stack.rules.all.map((r) => logicalId(s.stack, r.rule));
    const permissions = ofType(s.resources, 'AWS::Lambda::Permission')
      .filter(([, p]) => ruleIds.includes(p.Properties.SourceArn?.['Fn::GetAtt']?.[0]))
      .map(([id]) => id);
    expect(permissions).toHaveLength(ruleIds.length);
    for (const sch of s.stack.schedules.all) {
      const dependsOn = asArray(s.resources[logicalId(s.stack, sch.schedule)]!.DependsOn ?? []);
      expect(dependsOn, sch.spec.id).toEqual(expect.arrayContaining([...ruleIds, ...permissions]));
    }
  });

  it('gives every asynchronously invoked function an on-failure SQS destination, retries and a max event age', () => {
    expect(asyncTargets.size).toBeGreaterThan(0);
    const configs = ofType(s.resources, 'AWS::Lambda::EventInvokeConfig').map(([, c]) => c.Properties);
    for (const target of asyncTargets) {
      const f = s.stack.functions.get(target);
      const config = configs.find((c) => c.FunctionName?.Ref === logicalId(s.stack, f.fn));
      expect(config, `async invoke config of ${target}`).toBeDefined();
      expect(config!.DestinationConfig.OnFailure.Destination).toEqual({
        'Fn::GetAtt': [logicalId(s.stack, f.onFailure.queue), 'Arn'],
      });
      expect(config!.MaximumRetryAttempts).toBe(ASYNC_INVOKE.retryAttempts);
      expect(config!.MaximumEventAgeInSeconds).toBe(ASYNC_INVOKE.maxEventAge.toSeconds());
    }
  });

  it('encrypts every queue and makes it refuse non-TLS requests', () => {
    const queues = ofType(s.resources, 'AWS::SQS::Queue');
    expect(queues).toHaveLength(s.stack.deadLetterQueues.length);
    for (const [id, q] of queues) {
      expect(q.Properties.SqsManagedSseEnabled ?? q.Properties.KmsMasterKeyId).toBeTruthy();
      const policy = ofType(s.resources, 'AWS::SQS::QueuePolicy').find(([, p]) =>
        p.Properties.Queues.some((r: Json) => r.Ref === id),
      );
      expect(policy, `queue policy of ${id}`).toBeDefined();
      expect(policy![1].Properties.PolicyDocument.Statement).toContainEqual(
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      );
    }
  });

  it('grants each function exactly what spec.access says, through its own role with no managed policy', () => {
    const tableArn = { 'Fn::GetAtt': [logicalId(s.stack, s.stack.tables.table), 'Arn'] };
    const idempotencyArn = { 'Fn::GetAtt': [logicalId(s.stack, s.stack.tables.idempotency), 'Arn'] };
    const busArn = { 'Fn::GetAtt': [logicalId(s.stack, s.stack.bus.bus), 'Arn'] };
    const roleIds = new Set<string>();
    for (const f of s.stack.functions.all) {
      const roleId = logicalId(s.stack, f.role);
      roleIds.add(roleId);
      expect(s.resources[roleId]!.Properties.ManagedPolicyArns).toBeUndefined();
      const statements = roleStatements(s.resources, roleId);
      const on = (resource: unknown) =>
        statements
          .filter((st) => JSON.stringify(st.Resource) === JSON.stringify(resource))
          .flatMap(actionsOf);

      expect(on(tableArn)).toContain('dynamodb:Query');
      expect(on(tableArn).includes('dynamodb:PutItem')).toBe(f.spec.access.table === 'readwrite');
      expect(on({ 'Fn::Join': ['', [tableArn, `/index/${TABLE.gsi1.indexName}`]] })).toEqual([
        'dynamodb:Query',
      ]);
      expect(on(idempotencyArn).length > 0).toBe(f.spec.access.idempotency);
      expect(on(busArn).includes('events:PutEvents')).toBe(f.spec.access.putEvents);
      expect(statements.flatMap(actionsOf).filter((a) => a.startsWith('events:'))).toEqual(
        f.spec.access.putEvents ? ['events:PutEvents'] : [],
      );
      expect(on({ 'Fn::GetAtt': [logicalId(s.stack, f.logGroup), 'Arn'] })).toEqual([
        'logs:CreateLogStream',
        'logs:PutLogEvents',
      ]);
      for (const st of statements) {
        expect(st.Effect).toBe('Allow');
        expect(actionsOf(st).some((a) => a === '*' || a.endsWith(':*'))).toBe(false);
      }
    }
    expect(roleIds.size).toBe(allFunctions().length);
  });

  it('keeps the fleet report in a private, encrypted, TLS-only, versioned bucket with access logs', () => {
    const bucketId = logicalId(s.stack, s.stack.reports.bucket);
    const logsId = logicalId(s.stack, s.stack.reports.accessLogs);
    const props = s.resources[bucketId]!.Properties;
    const privateBucket = {
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    };
    for (const id of [bucketId, logsId]) {
      const p = s.resources[id]!.Properties;
      expect(p.PublicAccessBlockConfiguration, id).toEqual(privateBucket);
      expect(p.BucketEncryption.ServerSideEncryptionConfiguration, id).toEqual([
        { ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } },
      ]);
      expect(p.OwnershipControls.Rules, id).toEqual([{ ObjectOwnership: 'BucketOwnerEnforced' }]);
      expect(s.resources[id]!.DeletionPolicy, id).toBe('Retain');
      const policy = ofType(s.resources, 'AWS::S3::BucketPolicy').find(
        ([, r]) => r.Properties.Bucket.Ref === id,
      );
      expect(policy, `bucket policy of ${id}`).toBeDefined();
      expect(policy![1].Properties.PolicyDocument.Statement).toContainEqual(
        expect.objectContaining({
          Effect: 'Deny',
          Action: 's3:*',
          Condition: { Bool: { 'aws:SecureTransport': 'false' } },
        }),
      );
    }
    expect(props.VersioningConfiguration).toEqual({ Status: 'Enabled' });
    expect(props.LifecycleConfiguration.Rules).toContainEqual(
      expect.objectContaining({
        Status: 'Enabled',
        NoncurrentVersionExpiration: { NoncurrentDays: 30 },
        AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
      }),
    );
    expect(props.LoggingConfiguration).toEqual({
      DestinationBucketName: { Ref: logsId },
      LogFilePrefix: 'report-bucket/',
    });
    expect(s.resources[logsId]!.Properties.LifecycleConfiguration.Rules).toContainEqual(
      expect.objectContaining({ Status: 'Enabled', ExpirationInDays: 90 }),
    );
    // The log bucket's own missing access logs are acknowledged, with a reason, and nothing else on it.
    expect(s.stack.nagAcknowledgements.filter((a) => a.path.includes('Reports'))).toEqual([
      expect.objectContaining({ id: 'AwsSolutions-S1', reason: expect.stringMatching(/server access logs/) }),
    ]);
    expect(s.template.toJSON().Outputs.ReportBucketName.Value).toEqual({ Ref: bucketId });
  });

  it('lets only the report function touch the bucket: PutObject on reports/latest.html, nothing else', () => {
    const bucketArn = { 'Fn::GetAtt': [logicalId(s.stack, s.stack.reports.bucket), 'Arn'] };
    const writers = s.stack.functions.all.filter((f) => f.spec.access.reportBucket);
    expect(writers.map((f) => f.spec.id)).toEqual(['report']);
    for (const f of s.stack.functions.all) {
      const s3Statements = roleStatements(s.resources, logicalId(s.stack, f.role)).filter((st) =>
        actionsOf(st).some((a) => a.startsWith('s3:')),
      );
      if (f.spec.access.reportBucket) {
        expect(s3Statements).toEqual([
          {
            Sid: 'ReportPut',
            Effect: 'Allow',
            Action: 's3:PutObject',
            Resource: { 'Fn::Join': ['', [bucketArn, '/reports/latest.html']] },
          },
        ]);
        const env = s.resources[logicalId(s.stack, f.fn)]!.Properties.Environment.Variables;
        expect(env[ENV.reportBucket]).toEqual({ Ref: logicalId(s.stack, s.stack.reports.bucket) });
      } else {
        expect(s3Statements, `${f.spec.id} must not touch S3`).toEqual([]);
      }
    }
    // The report reads the table only: no writes, no events, no secrets, no idempotency records.
    expect(writers[0]!.spec.access).toEqual({
      table: 'read',
      putEvents: false,
      kubeconfigSecrets: false,
      idempotency: false,
      reportBucket: true,
    });
    // It runs hourly on its own schedule.
    expect(allSchedules().find((x) => x.target === 'report')).toMatchObject({ everyMinutes: 60 });
  });

  it('lets only kubeconfigSecrets functions read secrets, and only GetSecretValue under the prefix', () => {
    for (const f of s.stack.functions.all) {
      const secretStatements = roleStatements(s.resources, logicalId(s.stack, f.role)).filter((st) =>
        actionsOf(st).some((a) => a.startsWith('secretsmanager:') || a === '*'),
      );
      if (f.spec.access.kubeconfigSecrets) {
        expect(secretStatements).toHaveLength(1);
        expect(actionsOf(secretStatements[0]!)).toEqual(['secretsmanager:GetSecretValue']);
        expect(secretStatements[0]!.Resource).toEqual(secretArn(DEFAULTS.secretPrefix));
      } else {
        expect(secretStatements, `${f.spec.id} must not read secrets`).toEqual([]);
      }
    }
    // Nowhere in the stack: secretsmanager:* / "*" actions, or a secrets action on Resource "*".
    for (const st of allIdentityStatements(s.resources)) {
      const actions = actionsOf(st);
      expect(actions).not.toContain('*');
      expect(actions).not.toContain('secretsmanager:*');
      if (actions.some((a) => a.startsWith('secretsmanager:'))) {
        expect(asArray(st.Resource)).not.toContain('*');
        expect(st.Resource).toEqual(secretArn(DEFAULTS.secretPrefix));
      }
    }
    expect(allFunctions().some((f) => f.access.kubeconfigSecrets)).toBe(true);
    expect(allFunctions().some((f) => !f.access.kubeconfigSecrets)).toBe(true);
  });

  it('alarms on errors and throttles per function and on every dead-letter queue', () => {
    const alarms = ofType(s.resources, 'AWS::CloudWatch::Alarm').map(([, a]) => a.Properties);
    for (const f of s.stack.functions.all) {
      const fnRef = { Ref: logicalId(s.stack, f.fn) };
      for (const metric of ['Errors', 'Throttles'])
        expect(
          alarms.filter(
            (a) =>
              a.MetricName === metric &&
              a.Namespace === 'AWS/Lambda' &&
              JSON.stringify(a.Dimensions) === JSON.stringify([{ Name: 'FunctionName', Value: fnRef }]) &&
              a.Threshold === 0 &&
              a.ComparisonOperator === 'GreaterThanThreshold',
          ),
          `${metric} alarm of ${f.spec.id}`,
        ).toHaveLength(1);
    }
    for (const q of s.stack.deadLetterQueues) {
      const queueName = { 'Fn::GetAtt': [logicalId(s.stack, q.queue), 'QueueName'] };
      expect(
        alarms.filter(
          (a) =>
            a.MetricName === 'ApproximateNumberOfMessagesVisible' &&
            JSON.stringify(a.Dimensions) === JSON.stringify([{ Name: 'QueueName', Value: queueName }]) &&
            a.Threshold === 0,
        ),
        `alarm of ${q.name}`,
      ).toHaveLength(1);
    }
    expect(alarms).toHaveLength(2 * allFunctions().length + s.stack.deadLetterQueues.length);
    // No alarmEmail: no topic and no actions.
    s.template.resourceCountIs('AWS::SNS::Topic', 0);
    for (const a of alarms) expect(a.AlarmActions).toBeUndefined();
  });

  it('outputs what the CLI --aws mode reads', () => {
    const outputs = s.template.toJSON().Outputs as Record<string, Json>;
    expect(Object.keys(outputs).sort()).toEqual(
      [
        'BusName',
        'ClusterAccessRoles',
        'ControlPlane',
        'IdempotencyTableName',
        'KubeconfigSecretPrefix',
        'ReportBucketName',
        'StackRegion',
        'TableName',
        'VerifyFunctionName',
      ].sort(),
    );
    expect(outputs.ControlPlane!.Value).toEqual({
      'Fn::Join': ['@', ['Fleetscope', { Ref: 'AWS::Region' }]],
    });
    expect(outputs.TableName!.Value).toEqual({ Ref: logicalId(s.stack, s.stack.tables.table) });
    expect(outputs.IdempotencyTableName!.Value).toEqual({
      Ref: logicalId(s.stack, s.stack.tables.idempotency),
    });
    expect(outputs.BusName!.Value).toEqual({ Ref: logicalId(s.stack, s.stack.bus.bus) });
    expect(outputs.KubeconfigSecretPrefix!.Value).toBe(DEFAULTS.secretPrefix);
    expect(outputs.StackRegion!.Value).toEqual({ Ref: 'AWS::Region' });
  });

  it('acknowledges cdk-nag findings one by one, each with a specific reason', () => {
    const recorded = s.app.node
      .findAll()
      .flatMap((c) =>
        c.node.metadata
          .filter((m) => m.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
          .flatMap((m) =>
            Object.entries(m.data as Record<string, string>).map(([id, reason]) => ({ id, reason })),
          ),
      );
    expect(recorded.length).toBe(s.stack.nagAcknowledgements.length);
    expect(recorded.length).toBeGreaterThan(0);
    for (const { id, reason } of recorded) {
      expect(id).toMatch(/AwsSolutions-/);
      expect(reason.trim().length, `reason of ${id}`).toBeGreaterThan(60);
    }
    // One acknowledgement per finding: no duplicates on one construct.
    const keys = s.stack.nagAcknowledgements.map((a) => `${a.path} ${a.id}`);
    expect(new Set(keys).size).toBe(keys.length);
  });
});

describe('fleetscope stack context', () => {
  it('cdk.json context defaults equal the code defaults', () => {
    const { context } = cdkJson;
    for (const [key, value] of Object.entries(CONTEXT_DEFAULTS)) expect(context[key], key).toEqual(value);
    expect(cdkJson.app).toBe('npx tsx infra/app.ts');
  });

  it('creates the schedules DISABLED when schedulesEnabled=false (the rollback switch)', () => {
    const { template } = synth({ schedulesEnabled: 'false' });
    template.resourceCountIs('AWS::Scheduler::Schedule', allSchedules().length);
    template.allResourcesProperties('AWS::Scheduler::Schedule', { State: 'DISABLED' });
    template.resourceCountIs('AWS::Events::Rule', allRules().length);
  });

  it('honours busName, kubeconfigSecretPrefix, logRetentionDays, eventArchiveDays=0, xrayTracing, alarmEmail', () => {
    const prefix = 'acme/kube/';
    const { stack, template, resources } = synth({
      stackName: 'FleetscopeStaging',
      busName: 'fleetscope-staging',
      kubeconfigSecretPrefix: prefix,
      logRetentionDays: '90',
      eventArchiveDays: 0,
      xrayTracing: 'true',
      alarmEmail: 'ops@example.com',
      logLevel: 'debug',
    });
    expect(stack.stackName).toBe('FleetscopeStaging');
    template.hasResourceProperties('AWS::Events::EventBus', { Name: 'fleetscope-staging' });
    template.hasResourceProperties('AWS::Scheduler::ScheduleGroup', { Name: 'fleetscope-staging' });
    template.resourceCountIs('AWS::Events::Archive', 0);
    template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 90 });
    template.allResourcesProperties('AWS::Lambda::Function', { TracingConfig: { Mode: 'Active' } });
    expect(template.toJSON().Outputs.KubeconfigSecretPrefix.Value).toBe(prefix);
    for (const f of stack.functions.all) {
      const p = resources[logicalId(stack, f.fn)]!.Properties;
      expect(p.Environment.Variables[ENV.secretPrefix]).toBe(prefix);
      expect(p.Environment.Variables[ENV.logLevel]).toBe('DEBUG');
      const secrets = roleStatements(resources, logicalId(stack, f.role)).filter((st) =>
        actionsOf(st).some((a) => a.startsWith('secretsmanager:')),
      );
      expect(secrets.map((st) => st.Resource)).toEqual(
        f.spec.access.kubeconfigSecrets ? [secretArn(prefix)] : [],
      );
    }
    // Alarm notifications: encrypted, TLS-only topic with the address subscribed; every alarm notifies it.
    const [[topicId, topic]] = ofType(resources, 'AWS::SNS::Topic') as [[string, Json]];
    expect(topic.Properties.KmsMasterKeyId).toBeDefined();
    template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'ops@example.com',
    });
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: [
          {
            Effect: 'Deny',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
            Resource: { Ref: topicId },
          },
        ],
      },
    });
    const alarms = ofType(resources, 'AWS::CloudWatch::Alarm');
    expect(alarms).toHaveLength(2 * allFunctions().length + stack.deadLetterQueues.length);
    for (const [, a] of alarms) expect(a.Properties.AlarmActions).toEqual([{ Ref: topicId }]);
  });

  it('rejects invalid context values with a message naming the key', () => {
    const bad: Record<string, unknown>[] = [
      { logRetentionDays: 31 },
      { busName: 'default' },
      { busName: 'a/b' },
      { kubeconfigSecretPrefix: 'fleetscope/*' },
      { kubeconfigSecretPrefix: '' },
      { schedulesEnabled: 'maybe' },
      { eventArchiveDays: -1 },
      { alarmEmail: 'not-an-address' },
      { logLevel: 'TRACE' },
      { stackName: '1fleet' },
      { assumeRolePattern: '*' },
      { assumeRolePattern: 'fl*' },
      { organizationId: 'acme' },
      { fleetSize: 0 },
    ];
    for (const context of bad) {
      const key = Object.keys(context)[0]!;
      expect(() => buildFleetscope(newApp(context)), key).toThrow(new RegExp(`context "${key}"`));
    }
  });

  it('fails synthesis on an unacknowledged cdk-nag finding (the AwsSolutions pack is wired in)', () => {
    const app = newApp();
    const stack = buildFleetscope(app);
    new sqs.Queue(stack, 'Unencrypted', { encryption: sqs.QueueEncryption.UNENCRYPTED });
    expect(() => Template.fromStack(stack)).toThrow(/AwsSolutions-SQS2/);
  });
});

describe('clusters in other accounts: the AssumeRole grant', () => {
  const assumeStatements = (resources: Record<string, Json>, roleId: string) =>
    roleStatements(resources, roleId).filter((st) => actionsOf(st).some((a) => a.startsWith('sts:')));
  const rolePattern = (pattern: string) => ({
    'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, `:iam::*:role/${pattern}`]],
  });

  it('lets only cluster-access functions assume roles named fleetscope-* in any account, from a path member roles trust', () => {
    const s = synth();
    for (const f of s.stack.functions.all) {
      const roleId = logicalId(s.stack, f.role);
      const sts = assumeStatements(s.resources, roleId);
      const role = s.resources[roleId]!.Properties;
      if (f.spec.access.kubeconfigSecrets) {
        expect(sts).toEqual([
          {
            Sid: 'AssumeClusterRoles',
            Effect: 'Allow',
            Action: 'sts:AssumeRole',
            Resource: rolePattern('fleetscope-*'),
          },
        ]);
        expect(role.Path).toBe('/fleetscope/Fleetscope/');
      } else {
        expect(sts, `${f.spec.id} must not assume roles`).toEqual([]);
        expect(role.Path).toBeUndefined();
      }
      expect(
        s.resources[logicalId(s.stack, f.fn)]!.Properties.Environment.Variables[ENV.controlPlane],
      ).toEqual({
        'Fn::Join': ['@', ['Fleetscope', { Ref: 'AWS::Region' }]],
      });
    }
    // Nowhere else in the stack: no sts action of any other kind, none on "*".
    for (const st of allIdentityStatements(s.resources))
      for (const a of actionsOf(st).filter((x) => x.startsWith('sts:'))) {
        expect(a).toBe('sts:AssumeRole');
        expect(st.Resource).toEqual(rolePattern('fleetscope-*'));
      }
  });

  it('narrows the grant to the organization and the configured pattern', () => {
    const s = synth({ assumeRolePattern: 'platform/fleetscope-reader-*', organizationId: 'o-a1b2c3d4e5' });
    const f = s.stack.functions.get('inventory');
    expect(assumeStatements(s.resources, logicalId(s.stack, f.role))).toEqual([
      expect.objectContaining({
        Action: 'sts:AssumeRole',
        Resource: rolePattern('platform/fleetscope-reader-*'),
        Condition: { StringEquals: { 'aws:ResourceOrgID': 'o-a1b2c3d4e5' } },
      }),
    ]);
  });

  it('sizes the workers reserved concurrency from fleetSize and the per-cluster cycle time', () => {
    const concurrency = (context: Record<string, unknown>) => {
      const s = synth(context);
      return Object.fromEntries(
        s.stack.functions.all.map((f) => [
          f.spec.id,
          s.resources[logicalId(s.stack, f.fn)]!.Properties.ReservedConcurrentExecutions,
        ]),
      );
    };
    // cycle: the most its schedules need, each within half its period: the cycle (5 minutes, 10 s a
    // cluster) ceil(N x 10 / 150), its follow (every minute, 3 s a cluster) ceil(N x 3 / 30).
    expect(concurrency({})).toMatchObject({ cycle: 10, inventory: 10, claims: 10, dispatch: 2 });
    expect(concurrency({ fleetSize: 300 })).toMatchObject({ cycle: 30 });
    expect(concurrency({ fleetSize: 1000 })).toMatchObject({
      cycle: 100,
      inventory: 10,
      claims: 10,
      dispatch: 2,
      balloons: 5,
    });
    expect(concurrency({ fleetSize: 5000 })).toMatchObject({ cycle: 100, inventory: 23, claims: 23 });
  });
});

describe('cdk synth (CLI, offline, no AWS credentials)', () => {
  it('exits 0 and bundles every function as an ESM bundle with the createRequire banner', () => {
    const outdir = tempDir('fleetscope-cdk-synth-');
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env))
      if (!k.startsWith('AWS_') && !k.startsWith('CDK_')) env[k] = v;
    Object.assign(env, {
      AWS_EC2_METADATA_DISABLED: 'true',
      AWS_SHARED_CREDENTIALS_FILE: join(outdir, 'no-credentials'),
      AWS_CONFIG_FILE: join(outdir, 'no-config'),
    });
    const run = spawnSync('npx', ['cdk', 'synth', '--quiet', '--no-notices', '-o', outdir], {
      cwd: REPO_ROOT,
      env,
      encoding: 'utf8',
      timeout: 170_000,
    });
    expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(existsSync(join(outdir, `${CONTEXT_DEFAULTS.stackName}.template.json`))).toBe(true);
    const bundles = readdirSync(outdir)
      .filter((d) => d.startsWith('asset.'))
      .map((d) => join(outdir, d, 'index.mjs'))
      .filter(existsSync);
    expect(bundles).toHaveLength(allFunctions().length);
    for (const b of bundles) expect(readFileSync(b, 'utf8')).toMatch(/^import\s*\{\s*createRequire\s*\}/);
    // The report function's bundle carries Chart.js beside the handler (the report inlines it).
    const withChartJs = bundles.filter((b) => existsSync(join(b, '..', 'chart.umd.min.js')));
    expect(withChartJs).toHaveLength(allFunctions().filter((f) => f.bundleFiles?.length).length);
    expect(withChartJs).toHaveLength(1);
  }, 180_000);
});
