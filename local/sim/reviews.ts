/**
 * The self reviews (`kubectl auth can-i`, `kubectl auth can-i --list`, `kubectl auth whoami`), answered
 * for the requesting user by the same authorizer that guards requests: on a cluster without RBAC
 * enforcement every request is allowed, and the reviews say so.
 */
import { type Attributes, authorize, rulesOf } from './authz.js';
import { rfc3339 } from './clock.js';
import { isObject, type Json, type JsonObject } from './json.js';
import type { SimState, UserInfo } from './state.js';

/** A review's metadata: nothing but the unset creationTimestamp, null up to 1.33 (see Features). */
const unsetMetadata = (cluster: SimState): JsonObject =>
  cluster.features.nullCreationTimestamp ? { creationTimestamp: null } : {};

/** The attributes as the server echoes them: its string fields are omitempty. */
function echoedSpec(spec: Json): JsonObject {
  const out: JsonObject = { ...(spec ?? {}) };
  for (const k of ['resourceAttributes', 'nonResourceAttributes'])
    if (isObject(out[k]))
      out[k] = Object.fromEntries(Object.entries(out[k] as JsonObject).filter(([, v]) => v !== ''));
  return out;
}

const ALLOW_ALL = {
  allowed: true,
  reason: 'simulated cluster without RBAC enforcement: everything is allowed',
};

export function selfSubjectAccessReview(cluster: SimState, user: UserInfo, spec: Json): JsonObject {
  const r = spec?.resourceAttributes;
  const n = spec?.nonResourceAttributes;
  const a: Attributes = {
    user,
    verb: String(r?.verb ?? n?.verb ?? ''),
    resourceRequest: !!r,
    path: String(n?.path ?? ''),
    apiGroup: String(r?.group ?? ''),
    apiVersion: String(r?.version ?? ''),
    namespace: String(r?.namespace ?? ''),
    resource: String(r?.resource ?? ''),
    subresource: String(r?.subresource ?? ''),
    name: String(r?.name ?? ''),
  };
  const d = cluster.spec.rbac ? authorize(cluster, a) : ALLOW_ALL;
  const status: JsonObject = { allowed: d.allowed };
  if (d.reason) status.reason = d.reason;
  return {
    kind: 'SelfSubjectAccessReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: unsetMetadata(cluster),
    spec: echoedSpec(spec),
    status,
  };
}

export function selfSubjectRulesReview(cluster: SimState, user: UserInfo, spec: Json): JsonObject {
  const namespace = String(spec?.namespace ?? '');
  let resourceRules: JsonObject[] = [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }];
  let nonResourceRules: JsonObject[] = [{ verbs: ['*'], nonResourceURLs: ['*'] }];
  const status: JsonObject = {};
  if (cluster.spec.rbac) {
    const { rules, errors } = rulesOf(cluster, user, namespace);
    resourceRules = rules.filter((r) => !r.nonResourceURLs?.length) as JsonObject[];
    nonResourceRules = rules
      .filter((r) => r.nonResourceURLs?.length)
      .map((r) => ({ verbs: r.verbs, nonResourceURLs: r.nonResourceURLs }));
    if (errors.length) status.evaluationError = errors.join(', ');
  }
  return {
    kind: 'SelfSubjectRulesReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: unsetMetadata(cluster),
    spec: spec ?? {},
    status: { resourceRules, nonResourceRules, incomplete: false, ...status },
  };
}

export function selfSubjectReview(cluster: SimState, user: UserInfo): JsonObject {
  const userInfo: JsonObject = { username: user.username };
  if (user.uid) userInfo.uid = user.uid;
  userInfo.groups = user.groups;
  if (user.extra) userInfo.extra = user.extra;
  return {
    kind: 'SelfSubjectReview',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { creationTimestamp: rfc3339(cluster.clock.now()) },
    status: { userInfo },
  };
}
