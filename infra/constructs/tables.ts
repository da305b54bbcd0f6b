import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { IDEMPOTENCY_TABLE, TABLE } from '../../shared/platform/table.js';

const ATTRIBUTE_TYPES = {
  S: dynamodb.AttributeType.STRING,
  N: dynamodb.AttributeType.NUMBER,
  B: dynamodb.AttributeType.BINARY,
} as const;

const attribute = (a: { name: string; type: keyof typeof ATTRIBUTE_TYPES }): dynamodb.Attribute => ({
  name: a.name,
  type: ATTRIBUTE_TYPES[a.type],
});

/**
 * The fleetscope table and the Powertools idempotency table, both built from shared/platform/table.ts.
 *
 * Encryption: the AWS-managed key (aws/dynamodb). cdk-nag's AwsSolutions pack has no DynamoDB CMK rule,
 * the data is control-plane metadata (cluster names, versions, labels; no credentials, which stay in
 * Secrets Manager), and a customer-managed key would add a key policy to maintain, KMS grants on every
 * function role and a monthly key charge for no finding it fixes. Unlike the default AWS-owned key, the
 * AWS-managed key shows each use in CloudTrail.
 *
 * Names are left to CloudFormation (the functions and the CLI read them from env vars / stack outputs),
 * so two stacks can live in one account and a replacement never collides with the retained table.
 */
export class Tables extends Construct {
  readonly table: dynamodb.TableV2;
  readonly idempotency: dynamodb.TableV2;

  /** `retain`: both tables outlive the stack (context retainData, default true). */
  constructor(scope: Construct, id: string, props: { retain: boolean }) {
    super(scope, id);
    const removalPolicy = props.retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;

    this.table = new dynamodb.TableV2(this, 'Table', {
      partitionKey: attribute(TABLE.partitionKey),
      sortKey: attribute(TABLE.sortKey),
      globalSecondaryIndexes: [
        {
          indexName: TABLE.gsi1.indexName,
          partitionKey: attribute(TABLE.gsi1.partitionKey),
          sortKey: attribute(TABLE.gsi1.sortKey),
          projectionType: dynamodb.ProjectionType.ALL,
        },
      ],
      timeToLiveAttribute: TABLE.ttlAttribute,
      billing: dynamodb.Billing.onDemand(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: dynamodb.TableEncryptionV2.awsManagedKey(),
      // Deleting the stack with retainData=false must be able to delete it.
      deletionProtection: props.retain,
      removalPolicy,
    });

    // Idempotency records live for minutes to hours: losing them costs at most one duplicate handling
    // of an in-flight event, so this table is not deletion-protected; it is retained like the other so
    // that a stack deleted and deployed again (a rollback by redeploy) does not run those events twice.
    // PITR stays on (AwsSolutions-DDB3); for a table this small it costs next to nothing.
    this.idempotency = new dynamodb.TableV2(this, 'IdempotencyTable', {
      partitionKey: attribute(IDEMPOTENCY_TABLE.partitionKey),
      timeToLiveAttribute: IDEMPOTENCY_TABLE.ttlAttribute,
      billing: dynamodb.Billing.onDemand(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: dynamodb.TableEncryptionV2.awsManagedKey(),
      removalPolicy,
    });
  }
}
