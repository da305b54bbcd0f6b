/**
 * Clusters in other AWS accounts are reached through a role in the cluster's own account: the control
 * plane assumes it and mints the cluster's EKS token with the role's temporary credentials.
 *
 * This layer only describes the role; the token source it is handed (shared/k8s/token-source.ts) mints
 * with the role's credentials. The STS adapter and the minter live in shared/platform and are wired by
 * the composition root (shared/fleet/cluster-access.ts), so neither layer imports the other.
 */

/** The role to assume for a cluster, and the external ID its trust policy may require. */
export interface AssumeRoleSpec {
  roleArn: string;
  externalId?: string;
}

/** IAM role ARN: partition, 12-digit account, optional path, name of at most 64 characters. */
const ROLE_ARN = /^arn:aws(?:-[a-z]+)*:iam::\d{12}:role\/(?:[\w+=,.@-]+\/)*[\w+=,.@-]{1,64}$/;
/** sts:ExternalId: 2 to 1,224 characters of this set (the AssumeRole API's own rule). */
const EXTERNAL_ID = /^[\w+=,.@:/-]{2,1224}$/;

/** Null when the spec is usable, else a message naming what is wrong (never echoing the external ID). */
export function assumeRoleProblem(spec: unknown): string | null {
  if (!spec || typeof spec !== 'object') return 'the role to assume must be an object with a "roleArn"';
  const s = spec as Record<string, unknown>;
  if (typeof s.roleArn !== 'string' || !ROLE_ARN.test(s.roleArn))
    return `role ARN ${JSON.stringify(String(s.roleArn ?? '')).slice(0, 120)} is not an IAM role ARN (arn:aws:iam::<12-digit account>:role/<name>)`;
  if (s.externalId !== undefined && (typeof s.externalId !== 'string' || !EXTERNAL_ID.test(s.externalId)))
    return 'the external ID must be 2 to 1,224 letters, digits or the characters +=,.@:/-_';
  return null;
}

/** The account a role belongs to. */
export const roleAccount = (roleArn: string): string => roleArn.split(':')[4] ?? '';

/** A cache key for a role: one set of credentials per (role, external ID). */
export const roleKey = (spec: AssumeRoleSpec): string => `${spec.roleArn}\u0000${spec.externalId ?? ''}`;

/** For messages and logs: the role, and whether an external ID is used (not its value). */
export const describeRole = (spec: AssumeRoleSpec): string =>
  `role ${spec.roleArn}${spec.externalId ? ' (with an external ID)' : ''}`;
