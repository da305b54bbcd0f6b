import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import { Construct } from 'constructs';
import { EVENT_SOURCE } from '../../shared/platform/events.js';

export interface BusProps {
  busName: string;
  /** Days the archive keeps fleetscope events for replay; 0: no archive. */
  archiveDays: number;
}

/**
 * The custom bus every fleetscope event goes through, and an archive of the events fleetscope itself
 * puts on it (source = EVENT_SOURCE), so a bad deploy of a consumer can be fixed and its events replayed.
 * No resource policy: only principals of this account with events:PutEvents on the bus may put events.
 */
export class Bus extends Construct {
  readonly bus: events.EventBus;
  readonly archive: events.Archive | undefined;

  constructor(scope: Construct, id: string, props: BusProps) {
    super(scope, id);
    this.bus = new events.EventBus(this, 'Bus', {
      eventBusName: props.busName,
      description: 'fleetscope control-plane events',
    });
    this.archive =
      props.archiveDays > 0
        ? this.bus.archive('Archive', {
            description: `fleetscope events (source "${EVENT_SOURCE}"), kept ${props.archiveDays} days for replay`,
            eventPattern: { source: [EVENT_SOURCE] },
            retention: Duration.days(props.archiveDays),
          })
        : undefined;
    // The L2 renders KmsKeyIdentifier: "" when no key is given; leave the property out instead, which
    // means the same (AWS-owned key) to CloudFormation and does not trip emulators that validate it.
    (this.archive?.node.defaultChild as events.CfnArchive | undefined)?.addPropertyDeletionOverride(
      'KmsKeyIdentifier',
    );
  }
}
