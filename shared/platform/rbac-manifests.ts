/**
 * Least-privilege RBAC for fleetscope's identity in a cluster, generated from what each capability
 * declares (`Capability.kubernetes`): per capability one ClusterRole for its cluster-wide rules and one
 * Role per namespace for the others, each bound to the identity. Pure: no AWS or Kubernetes client.
 */
import { type KubePermission, permissionProblem } from './kube-permissions.js';

export interface CapabilityPermissions {
  id: string;
  kubernetes: KubePermission[];
  requires?: string[];
}

/** The capabilities named and every one they require, in catalogue order. */
export function withRequired<C extends CapabilityPermissions>(all: C[], ids: string[]): C[] {
  const want = new Set<string>();
  const add = (id: string) => {
    if (want.has(id)) return;
    want.add(id);
    for (const r of all.find((c) => c.id === id)?.requires ?? []) add(r);
  };
  ids.forEach(add);
  return all.filter((c) => want.has(c.id));
}

/** Who fleetscope is in the cluster: a ServiceAccount, or an EKS access entry's username and groups. */
export type RbacSubject =
  | { kind: 'ServiceAccount'; namespace: string; name: string }
  | { kind: 'User'; name: string }
  | { kind: 'Group'; name: string };

export interface RbacOptions {
  subjects: RbacSubject[];
  /** Optional behaviours asked for or turned off (`feature.name` of a permission). */
  with?: string[];
  without?: string[];
  /** Prefix of every object name (default `fleetscope`). */
  prefix?: string;
}

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** One manifest and, per rule, why it is there (for comments in YAML output). */
export interface RbacManifest {
  object: Record<string, unknown>;
  reasons?: string[];
}

const RBAC_API = 'rbac.authorization.k8s.io/v1';
const LABELS = { 'app.kubernetes.io/part-of': 'fleetscope' };

/** The features any permission mentions, with their defaults (for --help and for checking --with). */
export function knownFeatures(caps: CapabilityPermissions[]): Map<string, boolean> {
  const out = new Map<string, boolean>();
  for (const c of caps)
    for (const p of c.kubernetes) if (p.feature) out.set(p.feature.name, p.feature.default);
  return out;
}

function wanted(p: KubePermission, o: RbacOptions): boolean {
  if (!p.feature) return true;
  if (o.without?.includes(p.feature.name)) return false;
  return p.feature.default || !!o.with?.includes(p.feature.name);
}

export function policyRule(p: KubePermission): PolicyRule {
  const rule: PolicyRule = { apiGroups: [p.group], resources: [...p.resources], verbs: [...p.verbs] };
  if (p.names?.length) rule.resourceNames = [...p.names];
  return rule;
}

function subjectOf(s: RbacSubject): Record<string, string> {
  if (s.kind === 'ServiceAccount') return { kind: s.kind, name: s.name, namespace: s.namespace };
  return { kind: s.kind, apiGroup: 'rbac.authorization.k8s.io', name: s.name };
}

function checkInput(caps: CapabilityPermissions[], o: RbacOptions): void {
  if (o.subjects.length === 0)
    throw new Error('no subject: name the identity fleetscope uses in the cluster');
  const features = knownFeatures(caps);
  for (const f of [...(o.with ?? []), ...(o.without ?? [])])
    if (!features.has(f))
      throw new Error(`unknown feature "${f}" (known: ${[...features.keys()].sort().join(', ') || 'none'})`);
  for (const c of caps)
    for (const p of c.kubernetes) {
      const problem = permissionProblem(p);
      if (problem) throw new Error(`capability ${c.id}: the rule for ${p.resources.join(',')} ${problem}`);
    }
}

/** The manifests for the given capabilities, in apply order (ServiceAccount, roles, bindings). */
export function rbacManifests(caps: CapabilityPermissions[], o: RbacOptions): RbacManifest[] {
  checkInput(caps, o);
  const prefix = o.prefix ?? 'fleetscope';
  const subjects = o.subjects.map(subjectOf);
  const out: RbacManifest[] = o.subjects
    .filter((s): s is Extract<RbacSubject, { kind: 'ServiceAccount' }> => s.kind === 'ServiceAccount')
    .map((s) => ({
      object: {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: s.name, namespace: s.namespace, labels: LABELS },
      },
    }));
  for (const cap of caps) {
    const perms = cap.kubernetes.filter((p) => wanted(p, o));
    const name = `${prefix}:${cap.id}`;
    const byNamespace = new Map<string | undefined, KubePermission[]>();
    for (const p of perms) byNamespace.set(p.namespace, [...(byNamespace.get(p.namespace) ?? []), p]);
    for (const [ns, list] of [...byNamespace].sort(([a], [b]) => (a ?? '').localeCompare(b ?? ''))) {
      const metadata = ns === undefined ? { name, labels: LABELS } : { name, namespace: ns, labels: LABELS };
      const kind = ns === undefined ? 'ClusterRole' : 'Role';
      out.push({
        object: { apiVersion: RBAC_API, kind, metadata, rules: list.map(policyRule) },
        reasons: list.map((p) => p.why),
      });
      out.push({
        object: {
          apiVersion: RBAC_API,
          kind: ns === undefined ? 'ClusterRoleBinding' : 'RoleBinding',
          metadata,
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name },
          subjects,
        },
      });
    }
  }
  return out;
}
