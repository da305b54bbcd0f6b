import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import { Construct } from 'constructs';
import type { EventPattern, RuleSpec } from '../../shared/platform/catalogue.js';
import { pascal } from '../paths.js';
import type { Functions } from './functions.js';
import { type DeadLetterQueue, deadLetterQueue } from './queues.js';

/** EventBridge's retries of a failed delivery to the target (before Lambda has accepted the event). */
export const RULE_DELIVERY = { retryAttempts: 8, maxEventAge: Duration.hours(1) } as const;

/** The catalogue's pattern in the CDK's spelling; it renders back to exactly the catalogue's JSON. */
export const toCdkPattern = (p: EventPattern): events.EventPattern => ({
  source: p.source,
  detailType: p['detail-type'],
  ...(p.detail ? { detail: p.detail } : {}),
});

export interface FleetRule {
  spec: RuleSpec;
  rule: events.Rule;
  dlq: DeadLetterQueue;
}

/** One rule on the fleetscope bus per catalogue RuleSpec, targeting its function. */
export class Rules extends Construct {
  readonly all: FleetRule[] = [];

  constructor(
    scope: Construct,
    id: string,
    props: { specs: RuleSpec[]; bus: events.IEventBus; functions: Functions },
  ) {
    super(scope, id);
    for (const spec of props.specs) {
      const ruleScope = new Construct(this, pascal(spec.id));
      const dlq = deadLetterQueue(
        ruleScope,
        'DeliveryDlq',
        `rule-${spec.id}`,
        `rule ${spec.id}: events EventBridge could not deliver`,
      );
      const rule = new events.Rule(ruleScope, 'Rule', {
        eventBus: props.bus,
        description: spec.description,
        eventPattern: toCdkPattern(spec.pattern),
        targets: [
          new targets.LambdaFunction(props.functions.get(spec.target).fn, {
            deadLetterQueue: dlq.queue,
            retryAttempts: RULE_DELIVERY.retryAttempts,
            maxEventAge: RULE_DELIVERY.maxEventAge,
          }),
        ],
      });
      this.all.push({ spec, rule, dlq });
    }
  }
}
