/**
 * What a capability may do inside each cluster, declared next to its functions (shared/<capability>/
 * capability.ts) so that `fleetscope rbac` can print least-privilege RBAC for exactly the capabilities
 * enabled. Pure data: no AWS or Kubernetes client.
 */

/** The RBAC verbs fleetscope may ask for. Never "*": a rule names every verb it needs. */
export type KubeVerb =
  | 'get'
  | 'list'
  | 'watch'
  | 'create'
  | 'update'
  | 'patch'
  | 'delete'
  | 'deletecollection';

export const WRITE_VERBS: readonly KubeVerb[] = ['create', 'update', 'patch', 'delete', 'deletecollection'];

export interface KubePermission {
  /** The API group ('' for the core group). */
  group: string;
  /** Plural resource names; a subresource as `pods/resize`. */
  resources: string[];
  verbs: KubeVerb[];
  /** Only these objects (RBAC resourceNames: applies to requests that name an object, so never create or list). */
  names?: string[];
  /** Only in this namespace (a Role and RoleBinding there); cluster-wide when absent. */
  namespace?: string;
  /** Why the capability needs it: printed beside the rule. */
  why: string;
  /**
   * A rule only an optional behaviour needs: included unless turned off (`default: true`) or only when
   * asked for (`default: false`) with `fleetscope rbac --with/--without NAME`.
   */
  feature?: { name: string; default: boolean };
}

/** Why a declaration is not least privilege, or undefined when it is acceptable. */
export function permissionProblem(p: KubePermission): string | undefined {
  const all = [p.group, ...p.resources, ...p.verbs, ...(p.names ?? [])];
  if (all.some((s) => s.includes('*'))) return 'uses a wildcard';
  if (p.resources.length === 0 || p.verbs.length === 0) return 'names no resource or no verb';
  if (p.group === '' && p.resources.some((r) => r === 'secrets' || r.startsWith('secrets/')))
    return 'grants access to secrets';
  if (p.names?.length && p.verbs.some((v) => v === 'create' || v === 'list' || v === 'watch'))
    return 'restricts create, list or watch by name, which RBAC cannot do';
  if (p.why.trim() === '') return 'does not say why it is needed';
  return undefined;
}
