import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';

/** What a dead-letter queue catches, for its alarm and for the operator reading the queue. */
export interface DeadLetterQueue {
  /** Unique in the stack, e.g. "function-inventory": names its alarm. */
  name: string;
  queue: sqs.Queue;
  /** e.g. "function inventory (on-failure destination)". */
  catches: string;
}

/**
 * A terminal dead-letter queue: encrypted with SQS-managed keys (no key policy needed for Lambda,
 * EventBridge or Scheduler to send to it), TLS-only, and keeping messages the maximum 14 days so an
 * operator can inspect and redrive them. It has no DLQ of its own: it is the end of the line.
 */
export function deadLetterQueue(
  scope: Construct,
  id: string,
  name: string,
  catches: string,
): DeadLetterQueue {
  const queue = new sqs.Queue(scope, id, {
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
    removalPolicy: RemovalPolicy.DESTROY,
  });
  return { name, queue, catches };
}
