/**
 * fleetscope CDK app (`npx cdk synth|diff|deploy`; cdk.json runs this file with tsx).
 *
 * One environment-agnostic stack: no lookups, no account or region baked in, so `cdk synth` runs offline
 * with no AWS credentials, and Lambda code is bundled by the local esbuild (no Docker). The stack is
 * generated from the catalogue in shared/platform (every capability's functions, schedules and rules).
 *
 * Context values (`cdk.json` holds the defaults; override with `-c key=value`):
 *
 *   stackName               CloudFormation stack name. Default "Fleetscope". Deploying a second copy into
 *                           one account also needs a different busName.
 *   busName                 Name of the custom EventBridge bus, and of the EventBridge Scheduler schedule
 *                           group. Default "fleetscope" (DEFAULTS.bus). Not "default".
 *   kubeconfigSecretPrefix  Secrets Manager name prefix of cluster kubeconfig secrets. Functions whose
 *                           catalogue entry has access.kubeconfigSecrets may call GetSecretValue on
 *                           `arn:<partition>:secretsmanager:<region>:<account>:secret:<prefix>*` and
 *                           nothing else. Default "fleetscope/clusters/" (DEFAULTS.secretPrefix).
 *   logRetentionDays        Retention of every function's log group, in days; one of CloudWatch Logs'
 *                           values (1, 3, 5, 7, 14, 30, 60, 90, ... 3653). Default 30.
 *   schedulesEnabled        false creates every EventBridge Scheduler schedule DISABLED: the rollback
 *                           switch that stops all scheduled fleet work without deleting anything
 *                           (`cdk deploy -c schedulesEnabled=false`). Event rules stay on, so a
 *                           registration is still inventoried. Default true.
 *   alarmEmail              When set, alarms notify an SNS topic (KMS-encrypted, TLS-only) with this
 *                           address subscribed (confirm the e-mail AWS sends). Default "" (alarms only
 *                           change state, no notifications).
 *   eventArchiveDays        Days the bus archive keeps fleetscope events for replay; 0: no archive.
 *                           Default 7.
 *   logLevel                FLEETSCOPE_LOG_LEVEL of every function: DEBUG, INFO, WARN or ERROR.
 *                           Default INFO.
 *   xrayTracing             true turns on X-Ray active tracing for every function. Default false.
 *   assumeRolePattern       Role names (IAM wildcards allowed) that functions reaching clusters may
 *                           sts:AssumeRole, in any account: clusters in other accounts are reached
 *                           through such a role (infra/member). Default "fleetscope-*".
 *   organizationId          When set ("o-..."), that grant holds only for the organization's roles
 *                           (aws:ResourceOrgID). Default "" (any account).
 *   fleetSize               Registered clusters the workers' reserved concurrency is sized for
 *                           (shared/fleet/concurrency.ts). Default 100.
 *   retainData              true (default): the tables and the report buckets outlive the stack
 *                           (DeletionPolicy Retain; the registry table is deletion-protected too).
 *                           false: `cdk destroy` deletes them (buckets must be empty).
 *   vpc                     Where the functions run: "" (default) outside any VPC, for public cluster
 *                           endpoints; "create": a small VPC the stack creates (two AZs, private
 *                           subnets, flow logs); "vpc-...": an existing VPC, with vpcSubnetIds.
 *   vpcSubnetIds            The existing VPC's private subnets (two AZs or more), comma-separated.
 *   vpcRouteTableIds        Their route tables (one, or one per subnet), for the DynamoDB and S3
 *                           gateway endpoints; not needed with vpcEgress=nat.
 *   vpcEgress               How the functions reach the AWS APIs from the VPC: "endpoints" (default;
 *                           gateway endpoints for DynamoDB and S3, interface endpoints for EventBridge,
 *                           Secrets Manager and STS, infra/constructs/network.ts) or "nat" (a NAT gateway
 *                           the created VPC gets; an existing VPC's subnets must route to one already).
 *   vpcCidr                 The created VPC's CIDR. Default 10.72.0.0/16.
 *   clusterEndpointCidrs    The functions' security group's HTTPS egress: where the clusters' API
 *                           endpoints are, comma-separated. Default 0.0.0.0/0. Narrowed, it needs
 *                           vpcEgress=endpoints and vpcPrefixListIds.
 *   vpcPrefixListIds        The region's managed prefix lists of DynamoDB and S3 (pl-...), which the
 *                           gateway endpoints are reached at once clusterEndpointCidrs is narrowed.
 *
 * Stack outputs (read by the CLI's --aws mode): TableName, IdempotencyTableName, BusName,
 * KubeconfigSecretPrefix, StackRegion, ControlPlane (the registry owner name), VerifyFunctionName, and
 * ClusterAccessRoles (what member accounts' roles trust).
 *
 * The member-account side is a separate app: infra/member/app.ts.
 */
import { App } from 'aws-cdk-lib';
import { buildFleetscope } from './build.js';

const app = new App();
try {
  buildFleetscope(app);
  app.synth();
} catch (err) {
  // A bad context value or a cdk-nag finding: the message says what; a stack trace adds nothing.
  console.error(`fleetscope: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
