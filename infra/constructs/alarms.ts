import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { pascal } from '../paths.js';
import type { FleetFunction } from './functions.js';
import type { DeadLetterQueue } from './queues.js';

const PERIOD = Duration.minutes(5);

export interface AlarmsProps {
  functions: FleetFunction[];
  queues: DeadLetterQueue[];
  /** Set: an encrypted SNS topic with this e-mail subscribed receives every alarm. */
  alarmEmail: string | undefined;
}

/**
 * Per function: Errors > 0 and sustained Throttles; per dead-letter queue: any visible message.
 *
 * Throttles alarm only when they last three periods (15 minutes, one inventory cycle): reserved
 * concurrency throttles a fan-out on purpose (Lambda retries throttled asynchronous events), so a brief
 * burst is the design working; throttling for a whole cycle means the fleet outgrew the concurrency.
 */
export class Alarms extends Construct {
  readonly alarms: cloudwatch.Alarm[] = [];
  readonly topic: sns.Topic | undefined;
  readonly topicKey: kms.Key | undefined;

  constructor(scope: Construct, id: string, props: AlarmsProps) {
    super(scope, id);

    if (props.alarmEmail) {
      // CloudWatch can only publish to an encrypted topic whose key lets cloudwatch.amazonaws.com use
      // it, which the AWS-managed aws/sns key does not: hence a customer-managed key, rotated yearly.
      this.topicKey = new kms.Key(this, 'TopicKey', {
        description: 'fleetscope alarm topic encryption',
        enableKeyRotation: true,
        removalPolicy: RemovalPolicy.DESTROY,
        pendingWindow: Duration.days(7),
      });
      this.topicKey.addToResourcePolicy(
        new iam.PolicyStatement({
          sid: 'CloudWatchAlarmsPublish',
          principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
          actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
          resources: ['*'],
        }),
      );
      this.topic = new sns.Topic(this, 'Topic', {
        displayName: 'fleetscope alarms',
        masterKey: this.topicKey,
        enforceSSL: true,
      });
      this.topic.addSubscription(new EmailSubscription(props.alarmEmail));
    }

    for (const f of props.functions) {
      const name = pascal(f.spec.id);
      this.add(
        `${name}Errors`,
        f.fn.metricErrors({ period: PERIOD, statistic: cloudwatch.Stats.SUM }),
        `fleetscope function ${f.spec.id} reported errors`,
        1,
      );
      this.add(
        `${name}Throttles`,
        f.fn.metricThrottles({ period: PERIOD, statistic: cloudwatch.Stats.SUM }),
        `fleetscope function ${f.spec.id} throttled for 15 minutes: reserved concurrency too low for the fleet`,
        3,
      );
    }
    for (const q of props.queues) {
      this.add(
        `${pascal(q.name)}Messages`,
        q.queue.metricApproximateNumberOfMessagesVisible({
          period: PERIOD,
          statistic: cloudwatch.Stats.MAXIMUM,
        }),
        `fleetscope dead-letter queue not empty: ${q.catches}`,
        1,
      );
    }
  }

  private add(id: string, metric: cloudwatch.IMetric, description: string, periods: number): void {
    const alarm = new cloudwatch.Alarm(this, id, {
      metric,
      alarmDescription: description,
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: periods,
      datapointsToAlarm: periods,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    if (this.topic) alarm.addAlarmAction(new SnsAction(this.topic));
    this.alarms.push(alarm);
  }
}
