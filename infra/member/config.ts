import type { Node } from 'constructs';

/**
 * The member-account stack's settings, from CDK context (`-c member.<key>=value`; prefixed so they never
 * mix with the control plane's keys in cdk.json). Lists are comma-separated.
 *
 *   member.stackName            the stack's name. Default "FleetscopeMember".
 *   member.controlPlaneAccount  the account of the control plane whose functions may assume the role.
 *                               Default: this account (a single-account fleet).
 *   member.controlPlaneStack    the control plane's stack name (its functions' roles sit under the IAM
 *                               path /fleetscope/<stack>/). Default "Fleetscope".
 *   member.roleName             the role fleetscope assumes; must match the control plane's
 *                               assumeRolePattern. Default "fleetscope-access".
 *   member.externalId           sts:ExternalId the trust policy requires. Default none.
 *   member.clusters             EKS clusters (in this stack's region) to give access entries. Default none.
 *   member.accessPolicies       EKS access policies for each entry, cluster-wide. Default none: what
 *                               fleetscope may do in a cluster is the RBAC `fleetscope rbac` generates
 *                               from the capabilities' declarations, bound to the entries' group.
 *   member.kubernetesGroups     The Kubernetes group of the entries, which that RBAC binds (exactly one).
 *                               Default "fleetscope".
 *   member.capabilities         The capabilities enabled in these clusters (the RBAC command's
 *                               --capability flags). Default: all.
 *   member.createRole           false in this account's second region: the role (global) exists already
 *                               and only the access entries are deployed. Default true.
 */
export interface MemberConfig {
  stackName: string;
  controlPlaneAccount: string | undefined;
  controlPlaneStack: string;
  roleName: string;
  externalId: string | undefined;
  clusters: string[];
  accessPolicies: string[];
  kubernetesGroups: string[];
  /** Empty: every capability. */
  capabilities: string[];
  createRole: boolean;
}

export const MEMBER_DEFAULTS = {
  stackName: 'FleetscopeMember',
  controlPlaneAccount: '',
  controlPlaneStack: 'Fleetscope',
  roleName: 'fleetscope-access',
  externalId: '',
  clusters: '',
  accessPolicies: '',
  kubernetesGroups: 'fleetscope',
  capabilities: '',
  createRole: 'true',
} as const;

type Key = keyof typeof MEMBER_DEFAULTS;

const RULES: Record<Key, [RegExp, string]> = {
  stackName: [/^[A-Za-z][A-Za-z0-9-]{0,127}$/, 'letters, digits and "-", starting with a letter'],
  controlPlaneAccount: [/^(\d{12})?$/, 'a 12-digit AWS account ID, or empty for this account'],
  controlPlaneStack: [/^[A-Za-z][A-Za-z0-9-]{0,127}$/, 'the control plane stack name'],
  roleName: [/^[\w+=,.@-]{1,64}$/, 'an IAM role name (at most 64 letters, digits or +=,.@_-)'],
  externalId: [/^([\w+=,.@:/-]{2,1224})?$/, '2 to 1,224 letters, digits or +=,.@:/-_, or empty'],
  clusters: [
    /^([0-9A-Za-z][A-Za-z0-9_-]{0,99})?(,[0-9A-Za-z][A-Za-z0-9_-]{0,99})*$/,
    'EKS cluster names, comma-separated',
  ],
  accessPolicies: [
    /^(AmazonEKS[A-Za-z]+Policy)?(,AmazonEKS[A-Za-z]+Policy)*$/,
    'EKS access policy names such as AmazonEKSViewPolicy',
  ],
  kubernetesGroups: [
    /^[a-z0-9][a-z0-9._-]*$/,
    'one Kubernetes group name (the RBAC binds it; names starting with "system:" are reserved)',
  ],
  capabilities: [/^([a-z][a-z0-9-]*)?(,[a-z][a-z0-9-]*)*$/, 'capability ids, comma-separated'],
  createRole: [/^(true|false)$/, 'true or false'],
};

export function readMemberConfig(node: Node): MemberConfig {
  const get = (key: Key): string => {
    const v = node.tryGetContext(`member.${key}`);
    const value = String(v === undefined || v === null ? MEMBER_DEFAULTS[key] : v).trim();
    const [re, rule] = RULES[key];
    if (!re.test(value)) throw new Error(`context "member.${key}" = ${JSON.stringify(value)}: ${rule}`);
    return value;
  };
  const list = (key: Key) => (get(key) === '' ? [] : [...new Set(get(key).split(','))]);
  return {
    stackName: get('stackName'),
    controlPlaneAccount: get('controlPlaneAccount') || undefined,
    controlPlaneStack: get('controlPlaneStack'),
    roleName: get('roleName'),
    externalId: get('externalId') || undefined,
    clusters: list('clusters'),
    accessPolicies: list('accessPolicies'),
    kubernetesGroups: list('kubernetesGroups'),
    capabilities: list('capabilities'),
    createRole: get('createRole') === 'true',
  };
}
