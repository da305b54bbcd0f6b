import { Aws, CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import * as eks from 'aws-cdk-lib/aws-eks';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { CAPABILITIES } from '../../shared/capabilities.js';
import { rbacManifests, withRequired } from '../../shared/platform/rbac-manifests.js';
import { Functions } from '../constructs/functions.js';
import { pascal } from '../paths.js';
import type { MemberConfig } from './config.js';

/** The capability that is always enabled: registration. */
const CORE = 'fleet';

/**
 * What to run once per cluster with its admin credentials: the RBAC `fleetscope rbac` generates from
 * the capabilities' declarations, bound to the access entries' group. The stack's `RbacCommand` output.
 */
export function rbacCommand(config: Pick<MemberConfig, 'kubernetesGroups' | 'capabilities'>): string {
  const caps = config.capabilities.map((c) => ` --capability ${c}`).join('');
  return `npx fleetscope rbac --group ${config.kubernetesGroups[0]}${caps} | kubectl apply -f -`;
}

/**
 * One member account's side of a fleet: the role fleetscope assumes there, and an EKS access entry per
 * named cluster, so onboarding an account (region) is one deploy and one command per cluster.
 *
 * The role has no IAM permissions: the EKS token is a presigned sts:GetCallerIdentity, which needs none.
 * Its access entries carry no access policy unless the operator names one (member.accessPolicies): what
 * it may do in a cluster is the RBAC the capabilities declare, bound to the entries' Kubernetes group
 * (`rbacCommand`, the one recipe). It trusts only the control plane's cluster-access function roles (by
 * their IAM path) and, when set, only with the external ID.
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
    checkRbac(config);
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
        kubernetesGroups: config.kubernetesGroups,
        ...(config.accessPolicies.length
          ? {
              accessPolicies: config.accessPolicies.map((policy) => ({
                policyArn: `arn:${Aws.PARTITION}:eks::aws:cluster-access-policy/${policy}`,
                accessScope: { type: 'cluster' },
              })),
            }
          : {}),
      });
      this.accessEntries.push(entry);
    }

    // What to pass to `fleetscope cluster register --assume-role`.
    new CfnOutput(this, 'RoleArn', { value: this.role.roleArn });
    new CfnOutput(this, 'TrustedPrincipals', { value: trusted });
    new CfnOutput(this, 'KubernetesGroup', { value: config.kubernetesGroups[0]! });
    // Once per cluster, with its admin credentials: the RBAC the access entry's group is bound by.
    new CfnOutput(this, 'RbacCommand', { value: rbacCommand(config) });
  }
}

/** The capabilities named exist, and their declarations make valid least-privilege RBAC for the group. */
function checkRbac(config: MemberConfig): void {
  const known = CAPABILITIES.map((c) => c.id);
  for (const c of config.capabilities)
    if (!known.includes(c))
      throw new Error(
        `context "member.capabilities": unknown capability "${c}" (known: ${known.join(', ')})`,
      );
  if (config.kubernetesGroups.length !== 1)
    throw new Error('context "member.kubernetesGroups": exactly one group, which the RBAC binds');
  const caps = config.capabilities.length
    ? withRequired(CAPABILITIES, [CORE, ...config.capabilities])
    : CAPABILITIES;
  rbacManifests(caps, { subjects: [{ kind: 'Group', name: config.kubernetesGroups[0]! }] });
}
