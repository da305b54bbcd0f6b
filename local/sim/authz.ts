/**
 * Authorization as kube-apiserver's chain does it with --authorization-mode=RBAC: system:masters may do
 * anything (the privileged-group authorizer), then RBAC (plugin/pkg/auth/authorizer/rbac, rule
 * matching of rbac/v1 helpers): ClusterRoleBindings apply everywhere, RoleBindings in their namespace.
 * The request's attributes follow RequestInfoFactory (apiserver pkg/endpoints/request/requestinfo.go).
 */
import { ApiError } from './errors.js';
import type { Json } from './json.js';
import type { RequestInfo, SimState, UserInfo } from './state.js';

export const RBAC_GROUP = 'rbac.authorization.k8s.io';

export interface Attributes {
  user: UserInfo;
  verb: string;
  resourceRequest: boolean;
  path: string;
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
}

/** The attributes of a check the server makes itself (escalate, bind, impersonate): a resource request. */
export function resourceAttributes(
  user: UserInfo,
  verb: string,
  on: { apiGroup: string; resource: string; name: string; namespace?: string; subresource?: string },
): Attributes {
  return {
    user,
    verb,
    resourceRequest: true,
    path: '',
    apiVersion: '',
    namespace: on.namespace ?? '',
    subresource: on.subresource ?? '',
    apiGroup: on.apiGroup,
    resource: on.resource,
    name: on.name,
  };
}

export interface Decision {
  allowed: boolean;
  reason: string;
}

/** RequestInfoFactory's attributes of a parsed request. */
export function attributesOf(info: RequestInfo, user: UserInfo): Attributes {
  const base = {
    user,
    path: info.path,
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
  };
  if (info.type !== 'resource' || !info.resource)
    return {
      ...base,
      verb: info.method === 'HEAD' ? 'head' : info.method.toLowerCase(),
      resourceRequest: false,
    };
  let name = info.name ?? '';
  const verb = info.verb ?? '';
  if ((verb === 'list' || verb === 'watch') && !name) {
    // A list or watch of one object by name is authorized as that name (so resourceNames rules apply).
    const m = /^metadata\.name==?([^,]+)$/.exec(info.query.get('fieldSelector') ?? '');
    if (m?.[1] && !/[/%]/.test(m[1]) && m[1] !== '.' && m[1] !== '..') name = m[1];
  }
  return {
    ...base,
    verb,
    resourceRequest: true,
    apiGroup: info.group ?? '',
    apiVersion: info.version ?? '',
    // For namespaces/{name}, the namespace of the request is the namespace itself.
    namespace: info.resource === 'namespaces' ? (info.name ?? '') : (info.namespace ?? ''),
    resource: info.resource,
    subresource: info.subresource ?? '',
    name,
  };
}

export interface Rule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

const has = (list: string[] | undefined, v: string) => !!list?.some((x) => x === '*' || x === v);

function resourceMatches(rule: Rule, a: Attributes): boolean {
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  return !!rule.resources?.some(
    (r) => r === '*' || r === combined || (a.subresource !== '' && r === `*/${a.subresource}`),
  );
}

export function ruleAllows(rule: Rule, a: Attributes): boolean {
  if (!has(rule.verbs, a.verb)) return false;
  if (!a.resourceRequest)
    return !!rule.nonResourceURLs?.some(
      (u) => u === '*' || u === a.path || (u.endsWith('*') && a.path.startsWith(u.slice(0, -1))),
    );
  return (
    has(rule.apiGroups, a.apiGroup) &&
    resourceMatches(rule, a) &&
    (!rule.resourceNames?.length || rule.resourceNames.includes(a.name))
  );
}

function appliesTo(user: UserInfo, subject: Json, bindingNamespace: string): boolean {
  switch (subject?.kind) {
    case 'User':
      return user.username === subject.name;
    case 'Group':
      return user.groups.includes(subject.name);
    case 'ServiceAccount': {
      const ns = subject.namespace || bindingNamespace;
      return !!ns && user.username === `system:serviceaccount:${ns}:${subject.name}`;
    }
    default:
      return false;
  }
}

function describeSubject(s: Json, bindingNamespace: string): string {
  if (s.kind === 'ServiceAccount')
    return `${s.kind} ${JSON.stringify(`${s.name}/${s.namespace || bindingNamespace}`)}`;
  return `${s.kind} ${JSON.stringify(s.name)}`;
}

interface Visit {
  source: string;
  rules: Rule[];
}

/** Every binding that applies to the user (cluster-wide, then in `namespace`), with its role's rules. */
function* visitBindings(
  cluster: SimState,
  user: UserInfo,
  namespace: string,
  errors: string[],
): Generator<Visit> {
  const store = cluster.store;
  const roleRules = (kind: string, name: string, ns: string): Rule[] | undefined => {
    const obj =
      kind === 'ClusterRole'
        ? store.get(`clusterroles.${RBAC_GROUP}`, name)
        : store.get(`roles.${RBAC_GROUP}`, `${ns}/${name}`);
    // The rule resolver names the role by its singular resource (NewNotFound(rbac.Resource("role"), ...)).
    if (!obj)
      errors.push(`${kind === 'ClusterRole' ? 'clusterrole' : 'role'}.${RBAC_GROUP} "${name}" not found`);
    return obj?.rules;
  };
  const crbs = store.collection(`clusterrolebindings.${RBAC_GROUP}`);
  for (const key of crbs.keys()) {
    const b = crbs.get(key);
    const subject = (b?.subjects ?? []).find((s: Json) => appliesTo(user, s, ''));
    if (!subject) continue;
    const rules = roleRules('ClusterRole', b.roleRef?.name, '');
    if (rules)
      yield {
        source: `ClusterRoleBinding ${JSON.stringify(b.metadata.name)} of ClusterRole ${JSON.stringify(b.roleRef.name)} to ${describeSubject(subject, '')}`,
        rules,
      };
  }
  if (!namespace) return;
  const rbs = store.collection(`rolebindings.${RBAC_GROUP}`);
  for (const key of rbs.keys()) {
    if (!key.startsWith(`${namespace}/`)) continue;
    const b = rbs.get(key);
    const subject = (b?.subjects ?? []).find((s: Json) => appliesTo(user, s, namespace));
    if (!subject) continue;
    const rules = roleRules(b.roleRef?.kind, b.roleRef?.name, namespace);
    if (rules)
      yield {
        source: `RoleBinding ${JSON.stringify(`${b.metadata.name}/${namespace}`)} of ${b.roleRef.kind} ${JSON.stringify(b.roleRef.name)} to ${describeSubject(subject, namespace)}`,
        rules,
      };
  }
}

const aggregate = (errors: string[]) => {
  const unique = [...new Set(errors)];
  return unique.length === 1 ? (unique[0] as string) : `[${unique.join(', ')}]`;
};

/** The decision of the union authorizer (privileged group, then RBAC), with its reason. */
export function authorize(cluster: SimState, a: Attributes): Decision {
  if (a.user.groups.includes('system:masters')) return { allowed: true, reason: '' };
  const errors: string[] = [];
  for (const v of visitBindings(cluster, a.user, a.resourceRequest ? a.namespace : '', errors))
    if (v.rules.some((r) => ruleAllows(r, a)))
      return { allowed: true, reason: `RBAC: allowed by ${v.source}` };
  return { allowed: false, reason: errors.length ? `RBAC: ${aggregate(errors)}` : '' };
}

/** The 403 of responsewriters.Forbidden: forbiddenMessage(attributes) and the authorizer's reason. */
export function forbidden(a: Attributes, reason: string): ApiError {
  const who = JSON.stringify(a.user.username);
  let msg: string;
  if (!a.resourceRequest) msg = `User ${who} cannot ${a.verb} path ${JSON.stringify(a.path)}`;
  else {
    const res = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
    const where = a.namespace ? `in the namespace ${JSON.stringify(a.namespace)}` : 'at the cluster scope';
    msg = `User ${who} cannot ${a.verb} resource ${JSON.stringify(res)} in API group ${JSON.stringify(a.apiGroup)} ${where}`;
  }
  if (reason) msg = `${msg}: ${reason}`;
  // errors.NewForbidden(GroupResource{group, resource}, name, err).
  const gr = a.resource ? (a.apiGroup ? `${a.resource}.${a.apiGroup}` : a.resource) : '';
  const message = !gr
    ? `forbidden: ${msg}`
    : a.name
      ? `${gr} ${JSON.stringify(a.name)} is forbidden: ${msg}`
      : `${gr} is forbidden: ${msg}`;
  return new ApiError(403, 'Forbidden', message, { name: a.name, group: a.apiGroup, kind: a.resource });
}

/** What SelfSubjectRulesReview lists: the rules of every binding that applies in `namespace`. */
export function rulesOf(
  cluster: SimState,
  user: UserInfo,
  namespace: string,
): { rules: Rule[]; errors: string[] } {
  const errors: string[] = [];
  const rules: Rule[] = [];
  for (const v of visitBindings(cluster, user, namespace, errors)) rules.push(...v.rules);
  return { rules, errors };
}

const denials = new WeakMap<SimState, string[]>();

/** Remembers a refused request ("GET pods/resize in kube-system by system:serviceaccount:..."). */
export function recordDenial(cluster: SimState, a: Attributes): void {
  const what = a.resourceRequest
    ? `${a.verb} ${a.apiGroup ? `${a.apiGroup}/` : ''}${a.subresource ? `${a.resource}/${a.subresource}` : a.resource}${a.name ? ` ${a.name}` : ''}${a.namespace ? ` in ${a.namespace}` : ''}`
    : `${a.verb} ${a.path}`;
  const list = denials.get(cluster) ?? [];
  list.push(`${what} by ${a.user.username}`);
  denials.set(cluster, list);
}

/** Requests refused with 403 so far (tests prove a capability's cycle needs nothing it lacks). */
export function deniedRequests(cluster: SimState): string[] {
  return [...(denials.get(cluster) ?? [])];
}
