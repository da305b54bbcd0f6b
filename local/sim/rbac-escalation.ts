/**
 * RBAC's escalation prevention, as kube-apiserver's policy-based storage does it
 * (pkg/registry/rbac/{clusterrole,role,clusterrolebinding,rolebinding}/policybased and
 * pkg/registry/rbac/validation): a user may create or update a role only with permissions they hold
 * (or with the `escalate` verb on it), and may bind a role only if they hold its permissions (or have
 * `bind` on it). system:masters may do anything. The refusal is the real 403 with the missing rules in
 * upstream's compact form.
 */
import { authorize, RBAC_GROUP, type Rule, resourceAttributes, rulesOf } from './authz.js';
import { ApiError, notFound } from './errors.js';
import type { Json } from './json.js';
import type { SimState, UserInfo } from './state.js';

/** Every permission: what "must have cluster-admin privileges" is checked against. */
const FULL_AUTHORITY: Rule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

const has = (set: string[] | undefined, v: string) => !!set?.includes(v);
const hasAll = (set: string[] | undefined, vs: string[] | undefined) => (vs ?? []).every((v) => has(set, v));

function resourceCoversAll(set: string[] | undefined, covers: string[] | undefined): boolean {
  if (has(set, '*') || hasAll(set, covers)) return true;
  return (covers ?? []).every((path) => {
    if (has(set, path)) return true;
    const slash = path.indexOf('/');
    return slash >= 0 && has(set, `*/${path.slice(slash + 1)}`);
  });
}

const nonResourceURLCovers = (owner: string, sub: string) =>
  owner === sub || (owner.endsWith('*') && sub.startsWith(owner.replace(/\*+$/, '')));

function ruleCovers(owner: Rule, sub: Rule): boolean {
  const names = sub.resourceNames?.length
    ? !owner.resourceNames?.length || hasAll(owner.resourceNames, sub.resourceNames)
    : !owner.resourceNames?.length;
  return (
    (has(owner.verbs, '*') || hasAll(owner.verbs, sub.verbs)) &&
    (has(owner.apiGroups, '*') || hasAll(owner.apiGroups, sub.apiGroups)) &&
    resourceCoversAll(owner.resources, sub.resources) &&
    names &&
    (sub.nonResourceURLs ?? []).every((p) =>
      (owner.nonResourceURLs ?? []).some((o) => nonResourceURLCovers(o, p)),
    )
  );
}

/** BreakdownRule: one rule per group, resource, verb (and resource name); one per URL and verb. */
function breakdown(rule: Rule): Rule[] {
  const out: Rule[] = [];
  for (const group of rule.apiGroups ?? [])
    for (const resource of rule.resources ?? [])
      for (const verb of rule.verbs ?? []) {
        const base = { apiGroups: [group], resources: [resource], verbs: [verb] };
        if (rule.resourceNames?.length)
          for (const name of rule.resourceNames) out.push({ ...base, resourceNames: [name] });
        else out.push(base);
      }
  for (const url of rule.nonResourceURLs ?? [])
    for (const verb of rule.verbs ?? []) out.push({ nonResourceURLs: [url], verbs: [verb] });
  return out;
}

/** Covers: the servant rules' pieces that no owner rule covers. */
export function uncovered(owner: Rule[], servant: Rule[]): Rule[] {
  return servant.flatMap(breakdown).filter((sub) => !owner.some((o) => ruleCovers(o, sub)));
}

/** CompactRules: single-group, single-resource rules that differ only by verb become one rule. */
function compact(rules: Rule[]): Rule[] {
  const simple = new Map<string, Rule>();
  const out: Rule[] = [];
  for (const r of rules) {
    const isSimple =
      (r.resourceNames?.length ?? 0) <= 1 &&
      !r.nonResourceURLs?.length &&
      r.apiGroups?.length === 1 &&
      r.resources?.length === 1;
    if (!isSimple) {
      out.push(r);
      continue;
    }
    const key = JSON.stringify([r.apiGroups, r.resources, r.resourceNames ?? null]);
    const existing = simple.get(key);
    if (existing) existing.verbs = [...(existing.verbs ?? []), ...(r.verbs ?? [])];
    else simple.set(key, { ...r, verbs: [...(r.verbs ?? [])] });
  }
  return [...out, ...simple.values()];
}

/** Go's %q of a []string: ["a" "b"]. */
const goStrings = (xs: string[]) => `[${xs.map((x) => JSON.stringify(x)).join(' ')}]`;

/** rbacv1helpers.CompactString. */
function compactString(r: Rule): string {
  const parts: string[] = [];
  if (r.apiGroups?.length) parts.push(`APIGroups:${goStrings(r.apiGroups)}`);
  if (r.resources?.length) parts.push(`Resources:${goStrings(r.resources)}`);
  if (r.nonResourceURLs?.length) parts.push(`NonResourceURLs:${goStrings(r.nonResourceURLs)}`);
  if (r.resourceNames?.length) parts.push(`ResourceNames:${goStrings(r.resourceNames)}`);
  if (r.verbs?.length) parts.push(`Verbs:${goStrings(r.verbs)}`);
  return `{${parts.join(', ')}}`;
}

/** ConfirmNoEscalation: undefined when the user holds every rule, else the error's text. */
function escalation(cluster: SimState, user: UserInfo, namespace: string, rules: Rule[]): string | undefined {
  const owned = rulesOf(cluster, user, namespace);
  const missing = uncovered(owned.rules, rules);
  if (!missing.length) return undefined;
  const lines = [...new Set(compact(missing).map(compactString))].sort();
  let msg = `user ${JSON.stringify(user.username)} (groups=${goStrings(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${lines.join('\n')}`;
  if (owned.errors.length) msg += `; resolution errors: [${owned.errors.join(' ')}]`;
  return msg;
}

const forbiddenRbac = (resource: string, name: string, message: string) =>
  new ApiError(
    403,
    'Forbidden',
    `${resource}.${RBAC_GROUP} ${JSON.stringify(name)} is forbidden: ${message}`,
    {
      name,
      group: RBAC_GROUP,
      kind: resource,
    },
  );

/** Whether the authorizer allows `verb` on the role (escalate, bind). */
function allowedOn(
  cluster: SimState,
  user: UserInfo,
  verb: string,
  resource: string,
  name: string,
  namespace: string,
) {
  return authorize(
    cluster,
    resourceAttributes(user, verb, { apiGroup: RBAC_GROUP, resource, name, namespace }),
  ).allowed;
}

export interface RbacWrite {
  cluster: SimState;
  user: UserInfo;
  namespace: string;
}

/** The check of a Role or ClusterRole create or update (`old` on update). */
export function checkRoleWrite(w: RbacWrite, role: Json, old?: Json): void {
  if (w.user.groups.includes('system:masters')) return;
  const resource = w.namespace ? 'roles' : 'clusterroles';
  const name = role?.metadata?.name ?? '';
  if (allowedOn(w.cluster, w.user, 'escalate', resource, name, w.namespace)) return;
  const missing = escalation(w.cluster, w.user, w.namespace, role?.rules ?? []);
  if (missing) throw forbiddenRbac(resource, name, missing);
  if (role?.aggregationRule || old?.aggregationRule)
    if (escalation(w.cluster, w.user, w.namespace, FULL_AUTHORITY))
      throw forbiddenRbac(resource, name, 'must have cluster-admin privileges to use the aggregationRule');
}

/** The check of a RoleBinding or ClusterRoleBinding create or update. */
export function checkBindingWrite(w: RbacWrite, binding: Json, update: boolean): void {
  if (w.user.groups.includes('system:masters')) return;
  const ref = binding?.roleRef ?? {};
  const resource = w.namespace ? 'rolebindings' : 'clusterrolebindings';
  const name = binding?.metadata?.name ?? '';
  const roleResource = ref.kind === 'ClusterRole' ? 'clusterroles' : 'roles';
  if (allowedOn(w.cluster, w.user, 'bind', roleResource, ref.name ?? '', w.namespace)) return;
  const role =
    ref.kind === 'ClusterRole'
      ? w.cluster.store.get(`clusterroles.${RBAC_GROUP}`, ref.name)
      : w.cluster.store.get(`roles.${RBAC_GROUP}`, `${w.namespace}/${ref.name}`);
  if (!role) {
    // GetRoleReferenceRules' NotFound: returned as it is on create, wrapped in a 403 on update.
    const err = notFound(
      { group: RBAC_GROUP, resource: ref.kind === 'ClusterRole' ? 'clusterrole' : 'role' },
      ref.name,
    );
    if (update) throw forbiddenRbac(resource, name, err.message);
    throw err;
  }
  const missing = escalation(w.cluster, w.user, w.namespace, role.rules ?? []);
  if (missing) throw forbiddenRbac(resource, name, missing);
}
