import { Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import type { StackConfig } from './config.js';
import type { Functions } from './constructs/functions.js';
import type { Network } from './constructs/network.js';
import type { DeadLetterQueue } from './constructs/queues.js';
import type { ReportBucket } from './constructs/reports.js';

/**
 * Every cdk-nag (AwsSolutions) finding this stack accepts, with why, in one place. Everything else the
 * pack checks is fixed in the constructs (custom roles with inline least-privilege policies instead of
 * AWSLambdaBasicExecutionRole, nodejs24.x, PITR, encrypted TLS-only queues and topic, a rotated key, and
 * Scheduler roles scoped to the unqualified function ARN instead of LambdaInvoke's `<fn>:*`).
 *
 * One acknowledgement per finding, on the construct that has it (cdk-nag 3: `Validations.acknowledge`,
 * no prefix matching). Acknowledgements are recorded on the construct's metadata
 * (`Validations.ACKNOWLEDGED_RULES_METADATA_KEY`); test/infra checks each has a reason.
 */
export interface NagAcknowledgement {
  path: string;
  id: string;
  reason: string;
}

/** What the acknowledgements look at: the stack's parts, not the stack (which calls this). */
export interface NagSubject {
  readonly config: StackConfig;
  readonly functions: Functions;
  readonly reports: ReportBucket;
  readonly deadLetterQueues: DeadLetterQueue[];
  /** Where the functions run, when context `vpc` is set. */
  readonly network: Network | undefined;
}

export function acknowledgeNagFindings(stack: NagSubject): NagAcknowledgement[] {
  const acknowledged: NagAcknowledgement[] = [];
  const ack = (construct: IConstruct, id: string, reason: string) => {
    if (reason.trim() === '')
      throw new Error(`cdk-nag acknowledgement ${id} on ${construct.node.path} has no reason`);
    Validations.of(construct).acknowledge({ id, reason });
    acknowledged.push({ path: construct.node.path, id, reason });
  };

  // AwsSolutions-SQS3 wants every queue to have a DLQ or be one, but it only recognises queues named in
  // another queue's RedrivePolicy or a function's DeadLetterConfig, not Lambda on-failure destinations or
  // EventBridge / Scheduler target dead-letter configs, which is what these are.
  for (const q of stack.deadLetterQueues)
    ack(
      q.queue,
      'AwsSolutions-SQS3',
      `This queue is itself a terminal dead-letter queue (${q.catches}); nothing consumes it ` +
        'automatically, an operator inspects and redrives it, and its alarm fires on the first message. ' +
        'A DLQ behind it would only ever receive what is already parked here.',
    );

  // Kubeconfig secrets are created per cluster at registration, so their names are not known at deploy
  // time, and Secrets Manager appends "-" plus 6 random characters to every secret ARN: a name-prefix
  // wildcard is the narrowest resource that works. Only GetSecretValue is allowed, only for functions
  // whose catalogue spec sets access.kubeconfigSecrets.
  for (const f of stack.functions.all)
    if (f.spec.access.kubeconfigSecrets)
      ack(
        f.role,
        `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:${stack.config.kubeconfigSecretPrefix}*]`,
        `Function ${f.spec.id} reads kubeconfigs of clusters registered at run time; their secret names are ` +
          `only known to share the prefix "${stack.config.kubeconfigSecretPrefix}" and Secrets Manager adds a ` +
          'random 6-character suffix to each ARN, so a prefix wildcard on secretsmanager:GetSecretValue alone ' +
          'is the narrowest grant possible.',
      );

  // Member accounts' roles are created by each account's own deploy (infra/member), after this stack,
  // in accounts it cannot list: a role-name pattern in any account (narrowed to the organization by
  // aws:ResourceOrgID when organizationId is set) is the narrowest AssumeRole grant that works. The
  // member roles' trust policies admit only these functions' roles, by path.
  for (const f of stack.functions.all)
    if (f.spec.access.kubeconfigSecrets)
      ack(
        f.role,
        `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:iam::*:role/${stack.config.assumeRolePattern}]`,
        `Function ${f.spec.id} reaches clusters in other accounts through a role in each; those roles are ` +
          `created per member account at onboarding, so only their name pattern "${stack.config.assumeRolePattern}" ` +
          'is known here. Only sts:AssumeRole is granted, and each member role trusts only the functions ' +
          `under IAM path ${'/fleetscope/<stack>/'} (with an external ID when set).`,
      );

  // The access-log bucket receives the report bucket's server access logs; logging it too would need a
  // third bucket, and so on. It is private, encrypted, TLS-only and expires its objects.
  ack(
    stack.reports.accessLogs,
    'AwsSolutions-S1',
    'This bucket is the destination of the report bucket server access logs; S3 server access logs ' +
      'of a log bucket would need yet another bucket. It blocks public access, enforces TLS, is ' +
      'encrypted and expires its objects.',
  );

  // X-Ray (context xrayTracing=true) and a VPC (context vpc): X-Ray's PutTraceSegments/PutTelemetryRecords
  // and EC2's DescribeNetworkInterfaces/DescribeSubnets have no resource types, and Lambda creates the
  // function's ENIs itself, so their ids are unknown here: AWS requires Resource "*" for them.
  const star = [
    ...(stack.config.xrayTracing
      ? [
          'X-Ray tracing is on: xray:PutTraceSegments and xray:PutTelemetryRecords have no resource-level permissions',
        ]
      : []),
    ...(stack.network
      ? [
          'it runs in a VPC: Lambda attaches it through ENIs it creates and deletes with the role ' +
            "(AWSLambdaVPCAccessExecutionRole's actions, inline), whose ids are unknown before, and the " +
            'EC2 Describe actions have no resource-level permissions',
        ]
      : []),
  ];
  if (star.length)
    for (const f of stack.functions.all)
      ack(
        f.role,
        'AwsSolutions-IAM5[Resource::*]',
        `Function ${f.spec.id}: ${star.join('; ')}. AWS requires Resource "*" for these actions.`,
      );

  return acknowledged;
}
