import { Duration, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import { LambdaInvoke } from 'aws-cdk-lib/aws-scheduler-targets';
import { Construct } from 'constructs';
import { type ScheduleSpec, scheduleMinutes } from '../../shared/platform/catalogue.js';
import { pascal } from '../paths.js';
import type { Functions } from './functions.js';
import { type DeadLetterQueue, deadLetterQueue } from './queues.js';

/** Scheduler's retries of a failed invocation request (before Lambda has accepted the event). */
export const SCHEDULE_DELIVERY = { retryAttempts: 8 } as const;

export interface FleetSchedule {
  spec: ScheduleSpec;
  schedule: scheduler.Schedule;
  dlq: DeadLetterQueue;
  role: iam.Role;
}

export interface SchedulesProps {
  specs: ScheduleSpec[];
  functions: Functions;
  groupName: string;
  /** false: every schedule is created DISABLED (the rollback switch: context schedulesEnabled=false). */
  enabled: boolean;
}

/** A rate, or the minutes of the hour where ticks are shared out (a follow between cycles). */
export function expression(spec: ScheduleSpec, all: ScheduleSpec[]): scheduler.ScheduleExpression {
  const minutes = scheduleMinutes(spec, all);
  if (!minutes) return scheduler.ScheduleExpression.rate(Duration.minutes(spec.everyMinutes));
  return scheduler.ScheduleExpression.cron({ minute: minuteRanges(minutes) });
}

/** 1,2,3,4,6,7 as 1-4,6-7 (a cron field stays short). */
function minuteRanges(minutes: number[]): string {
  const out: string[] = [];
  for (let i = 0; i < minutes.length; ) {
    let j = i;
    while (j + 1 < minutes.length && (minutes[j + 1] as number) === (minutes[j] as number) + 1) j++;
    out.push(j > i ? `${minutes[i]}-${minutes[j]}` : String(minutes[i]));
    i = j + 1;
  }
  return out.join(',');
}

/** One EventBridge Scheduler schedule per catalogue ScheduleSpec, in the fleetscope schedule group. */
export class Schedules extends Construct {
  readonly group: scheduler.ScheduleGroup;
  readonly all: FleetSchedule[] = [];

  constructor(scope: Construct, id: string, props: SchedulesProps) {
    super(scope, id);
    this.group = new scheduler.ScheduleGroup(this, 'Group', { scheduleGroupName: props.groupName });
    for (const spec of props.specs) {
      const scheduleScope = new Construct(this, pascal(spec.id));
      const dlq = deadLetterQueue(
        scheduleScope,
        'DeliveryDlq',
        `schedule-${spec.id}`,
        `schedule ${spec.id}: invocations Scheduler could not deliver`,
      );
      const fn = props.functions.get(spec.target).fn;
      const role = this.targetRole(scheduleScope, fn.functionArn, dlq.queue.queueArn);
      const schedule = new scheduler.Schedule(scheduleScope, 'Schedule', {
        scheduleGroup: this.group,
        description: spec.description,
        schedule: expression(spec, props.specs),
        enabled: props.enabled,
        target: new LambdaInvoke(fn, {
          // Immutable: LambdaInvoke would otherwise also grant "<fn>:*" (every version and alias).
          role: role.withoutPolicyUpdates(),
          input: scheduler.ScheduleTargetInput.fromObject(spec.input),
          deadLetterQueue: dlq.queue,
          retryAttempts: SCHEDULE_DELIVERY.retryAttempts,
          // A run older than one period is superseded by the next one.
          maxEventAge: Duration.minutes(Math.max(1, spec.everyMinutes)),
        }),
      });
      this.all.push({ spec, schedule, dlq, role });
    }
  }

  /**
   * The role Scheduler assumes for one schedule: invoke exactly the target function (unqualified ARN,
   * which is what the schedule calls) and send to exactly its dead-letter queue. Only schedules of this
   * account's fleetscope group may assume it (confused-deputy conditions).
   */
  private targetRole(scope: Construct, functionArn: string, dlqArn: string): iam.Role {
    const stack = Stack.of(this);
    return new iam.Role(scope, 'TargetRole', {
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', {
        conditions: {
          StringEquals: { 'aws:SourceAccount': stack.account, 'aws:SourceArn': this.group.scheduleGroupArn },
        },
      }),
      inlinePolicies: {
        Target: new iam.PolicyDocument({
          statements: [
            new iam.PolicyStatement({
              sid: 'Invoke',
              actions: ['lambda:InvokeFunction'],
              resources: [functionArn],
            }),
            new iam.PolicyStatement({ sid: 'DeadLetter', actions: ['sqs:SendMessage'], resources: [dlqArn] }),
          ],
        }),
      },
    });
  }
}
