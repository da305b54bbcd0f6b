import { Aws, CfnOutput, Fn, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { allFunctions, allRules, allSchedules, schedulesInOrder } from '../shared/capabilities.js';
import { reservedConcurrency } from '../shared/fleet/concurrency.js';
import type { StackConfig } from './config.js';
import { Alarms } from './constructs/alarms.js';
import { Bus } from './constructs/bus.js';
import { Functions } from './constructs/functions.js';
import { Network } from './constructs/network.js';
import type { DeadLetterQueue } from './constructs/queues.js';
import { ReportBucket } from './constructs/reports.js';
import { Rules } from './constructs/rules.js';
import { Schedules } from './constructs/schedules.js';
import { Tables } from './constructs/tables.js';
import { acknowledgeNagFindings, type NagAcknowledgement } from './nag.js';

export interface FleetscopeStackProps extends StackProps {
  config: StackConfig;
}

/**
 * fleetscope on AWS, generated from the catalogue in shared/platform: every capability's functions,
 * schedules and rules become Lambdas, Scheduler schedules and bus rules. Environment-agnostic: no
 * lookups, so `cdk synth` needs neither credentials nor a region.
 */
export class FleetscopeStack extends Stack {
  readonly config: StackConfig;
  readonly tables: Tables;
  readonly bus: Bus;
  readonly functions: Functions;
  readonly schedules: Schedules;
  readonly rules: Rules;
  readonly alarms: Alarms;
  readonly reports: ReportBucket;
  /** Where the functions run, when context `vpc` is set. */
  readonly network: Network | undefined;
  /** The cdk-nag findings this stack accepts, with reasons (infra/nag.ts). */
  readonly nagAcknowledgements: NagAcknowledgement[];

  constructor(scope: Construct, id: string, props: FleetscopeStackProps) {
    super(scope, id, {
      description: 'fleetscope: serverless control plane for fleets of Kubernetes clusters',
      ...props,
    });
    const { config } = props;
    this.config = config;

    this.tables = new Tables(this, 'Tables', { retain: config.retainData });
    this.bus = new Bus(this, 'Events', { busName: config.busName, archiveDays: config.eventArchiveDays });
    this.reports = new ReportBucket(this, 'Reports', { retain: config.retainData });
    const specs = allFunctions();
    this.network = config.vpc
      ? new Network(this, 'Network', {
          settings: config.vpc,
          specs,
          logRetentionDays: config.logRetentionDays,
        })
      : undefined;
    this.functions = new Functions(this, 'Functions', {
      // Workers are sized for the fleet: its clusters x the time one takes, within half a period.
      specs: specs.map((spec) => ({
        ...spec,
        reservedConcurrency: reservedConcurrency(spec, config.fleetSize, allSchedules(), allRules()),
      })),
      network: this.network,
      controlPlane: Fn.join('@', [config.stackName, Aws.REGION]),
      config,
      table: this.tables.table,
      idempotencyTable: this.tables.idempotency,
      bus: this.bus.bus,
      reports: { bucket: this.reports.bucket, key: this.reports.key },
    });
    this.schedules = new Schedules(this, 'Schedules', {
      specs: schedulesInOrder(),
      functions: this.functions,
      // Named after the bus: the default is "fleetscope", and a second stack in the account (which needs
      // its own busName anyway) gets its own group instead of colliding.
      groupName: config.busName,
      enabled: config.schedulesEnabled,
    });
    this.rules = new Rules(this, 'Rules', {
      specs: allRules(),
      bus: this.bus.bus,
      functions: this.functions,
    });
    // Routes before the work that uses them: a deploy that adds a rule (the cycle's follow) and the
    // schedule that starts its work creates the schedule last, once EventBridge may invoke the target
    // (a 403 in between is not retried, and would dead-letter the first events).
    for (const s of this.schedules.all) s.schedule.node.addDependency(...this.rules.all.map((r) => r.rule));
    this.alarms = new Alarms(this, 'Alarms', {
      functions: this.functions.all,
      queues: this.deadLetterQueues,
      alarmEmail: config.alarmEmail,
    });

    // Read by the CLI's --aws mode: keep these ids stable.
    new CfnOutput(this, 'TableName', { value: this.tables.table.tableName });
    new CfnOutput(this, 'IdempotencyTableName', { value: this.tables.idempotency.tableName });
    new CfnOutput(this, 'BusName', { value: this.bus.bus.eventBusName });
    new CfnOutput(this, 'KubeconfigSecretPrefix', { value: config.kubeconfigSecretPrefix });
    new CfnOutput(this, 'StackRegion', { value: Aws.REGION });
    new CfnOutput(this, 'VerifyFunctionName', { value: this.functions.get('verify').fn.functionName });
    // `fleetscope report --aws` fetches (or presigns) the latest report from it.
    new CfnOutput(this, 'ReportBucketName', { value: this.reports.bucket.bucketName });
    new CfnOutput(this, 'ControlPlane', { value: Fn.join('@', [config.stackName, Aws.REGION]) });
    // What a member account's role trusts (infra/member): the cluster-access functions' roles.
    new CfnOutput(this, 'ClusterAccessRoles', {
      value: `arn:${Aws.PARTITION}:iam::${Aws.ACCOUNT_ID}:role${Functions.clusterAccessRolePath(config.stackName)}*`,
    });

    this.nagAcknowledgements = acknowledgeNagFindings(this);
  }

  /** Every dead-letter queue in the stack (Lambda on-failure, rule delivery, schedule delivery). */
  get deadLetterQueues(): DeadLetterQueue[] {
    return [
      ...this.functions.all.map((f) => f.onFailure),
      ...this.rules.all.map((r) => r.dlq),
      ...this.schedules.all.map((s) => s.dlq),
    ];
  }
}
