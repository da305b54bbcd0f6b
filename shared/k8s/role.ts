/**
 * Clusters in other AWS accounts are reached through a role in the cluster's own account: the control
 * plane assumes it and mints the cluster's EKS token with the role's temporary credentials.
 *
 * This layer only describes the role and asks for its credentials through {@link RoleCredentialsProvider};
 * the STS adapter that answers lives in shared/platform and is passed in by the composition root
 * (shared/fleet/cluster-access.ts), so neither layer imports the other.
 */

/** The role to assume for a cluster, and the external ID its trust policy may require. */
export interface AssumeRoleSpec {
  roleArn: string;
  externalId?: string;
}

/** Temporary credentials of an assumed role. */
export interface TemporaryCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string;
  expiration: Date;
}

/**
 * Supplies a role's temporary credentials. A refusal is thrown as an error carrying the STS error's
 * `code` (AccessDenied, ExpiredToken, ...) and a message that names the role, never a credential.
 */
export interface RoleCredentialsProvider {
  /** `cluster` names the session (CloudTrail, EKS audit) when a new one has to be opened. */
  credentials(role: AssumeRoleSpec, cluster: string): Promise<TemporaryCredentials>;
  /** Drops the role's cached credentials (a cluster refused a token minted with them). */
  forget(role: AssumeRoleSpec): void;
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
