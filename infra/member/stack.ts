import { Aws, CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import * as eks from 'aws-cdk-lib/aws-eks';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { Functions } from '../constructs/functions.js';
import { pascal } from '../paths.js';
import type { MemberConfig } from './config.js';

/**
 * One member account's side of a fleet: the role fleetscope assumes there, and an EKS access entry (with
 * its access policies) per named cluster, so onboarding an account (region) is one deploy.
 *
 * The role has no IAM permissions: the EKS token is a presigned sts:GetCallerIdentity, which needs none,
 * and what the role may do in each cluster is what its access entry grants. It trusts only the control
 * plane's cluster-access function roles (by their IAM path) and, when set, only with the external ID.
 */
export class FleetscopeMemberStack extends Stack {
  readonly config: MemberConfig;
  readonly role: iam.IRole;
  readonly accessEntries: eks.CfnAccessEntry[] = [];

  constructor(scope: Construct, id: string, props: StackProps & { config: MemberConfig }) {
    super(scope, id, {
      description: 'fleetscope member account: the role fleetscope assumes and its EKS access entries',
      ...props,
    });
    const { config } = props;
    this.config = config;
    const account = config.controlPlaneAccount ?? Aws.ACCOUNT_ID;
    const trusted = `arn:${Aws.PARTITION}:iam::${account}:role${Functions.clusterAccessRolePath(config.controlPlaneStack)}*`;

    this.role = config.createRole
      ? new iam.Role(this, 'Role', {
          roleName: config.roleName,
          description: `fleetscope control plane ${config.controlPlaneStack} reaches this account's EKS clusters through this role`,
          // Assumed by a Lambda role (role chaining): an hour is the most such a session can last.
          maxSessionDuration: Duration.hours(1),
          assumedBy: new iam.AccountPrincipal(account).withConditions({
            ArnLike: { 'aws:PrincipalArn': trusted },
            ...(config.externalId ? { StringEquals: { 'sts:ExternalId': config.externalId } } : {}),
          }),
        })
      : iam.Role.fromRoleName(this, 'Role', config.roleName);

    for (const cluster of config.clusters) {
      const entry = new eks.CfnAccessEntry(this, `Access${pascal(cluster)}`, {
        clusterName: cluster,
        principalArn: this.role.roleArn,
        type: 'STANDARD',
        ...(config.kubernetesGroups.length ? { kubernetesGroups: config.kubernetesGroups } : {}),
        accessPolicies: config.accessPolicies.map((policy) => ({
          policyArn: `arn:${Aws.PARTITION}:eks::aws:cluster-access-policy/${policy}`,
          accessScope: { type: 'cluster' },
        })),
      });
      this.accessEntries.push(entry);
    }

    // What to pass to `fleetscope cluster register --assume-role`.
    new CfnOutput(this, 'RoleArn', { value: this.role.roleArn });
    new CfnOutput(this, 'TrustedPrincipals', { value: trusted });
  }
}
