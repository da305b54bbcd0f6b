/**
 * User impersonation, as kube-apiserver's impersonation filter does it (apiserver
 * pkg/endpoints/filters/impersonation.go): Impersonate-User (a ServiceAccount when it reads
 * system:serviceaccount:NS:NAME), Impersonate-Group, Impersonate-Extra-*, Impersonate-Uid. Each is
 * authorized as the verb `impersonate` on users, serviceaccounts, groups, userextras/KEY or uids; the
 * request then runs as the impersonated user. Groups or extras without a user are refused (with the
 * filter's 500, as upstream answers).
 */
import type { IncomingMessage } from 'node:http';
import { AUTHENTICATED } from './authn.js';
import { type Attributes, authorize, forbidden, recordDenial, resourceAttributes } from './authz.js';
import type { ClusterState } from './cluster.js';
import { ApiError } from './errors.js';
import type { UserInfo } from './state.js';

const EXTRA_PREFIX = 'impersonate-extra-';
const AUTH_GROUP = 'authentication.k8s.io';

/** One thing asked for, with how it is authorized (v1.ObjectReference upstream). */
interface Request {
  kind: 'User' | 'ServiceAccount' | 'Group' | 'UserExtra' | 'UID';
  name: string;
  namespace?: string;
  extraKey?: string;
}

function requestsOf(req: IncomingMessage): Request[] {
  const h = req.headersDistinct;
  const out: Request[] = [];
  const user = h['impersonate-user']?.[0];
  if (user) {
    const sa = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(user);
    out.push(
      sa ? { kind: 'ServiceAccount', namespace: sa[1], name: sa[2] as string } : { kind: 'User', name: user },
    );
  }
  for (const g of h['impersonate-group'] ?? []) out.push({ kind: 'Group', name: g });
  for (const [header, values] of Object.entries(h)) {
    if (!header.startsWith(EXTRA_PREFIX)) continue;
    const extraKey = decodeURIComponent(header.slice(EXTRA_PREFIX.length));
    for (const v of values ?? []) out.push({ kind: 'UserExtra', name: v, extraKey });
  }
  const uid = h['impersonate-uid']?.[0];
  if (uid) out.push({ kind: 'UID', name: uid });
  if (out.length && !user) {
    // fmt's %v of []v1.ObjectReference: {Kind Namespace Name UID APIVersion ResourceVersion FieldPath}.
    const refs = out.map(
      (r) => `{${[r.kind, r.namespace ?? '', r.name, '', '', '', r.extraKey ?? ''].join(' ')}}`,
    );
    const message = `Internal error occurred: requested [${refs.join(' ')}] without impersonating a user`;
    throw new ApiError(500, 'InternalError', message, { causes: [{ message: message.slice(25) }] });
  }
  return out;
}

function attributes(actor: UserInfo, r: Request): Attributes {
  const on = (resource: string, apiGroup = '') =>
    resourceAttributes(actor, 'impersonate', { apiGroup, resource, name: r.name });
  switch (r.kind) {
    case 'User':
      return on('users');
    case 'ServiceAccount':
      return { ...on('serviceaccounts'), namespace: r.namespace ?? '' };
    case 'Group':
      return on('groups');
    case 'UserExtra':
      return { ...on('userextras', AUTH_GROUP), subresource: r.extraKey ?? '' };
    case 'UID':
      return on('uids', AUTH_GROUP);
  }
}

/** The user the request runs as: the authenticated one, or the one it may impersonate (else 403). */
export function impersonate(cluster: ClusterState, actor: UserInfo, req: IncomingMessage): UserInfo {
  const requests = requestsOf(req);
  if (!requests.length) return actor;
  // Without RBAC every authenticated request is allowed, impersonation too.
  for (const r of cluster.spec.rbac ? requests : []) {
    const a = attributes(actor, r);
    const d = authorize(cluster, a);
    if (!d.allowed) {
      recordDenial(cluster, a);
      throw forbidden(a, d.reason);
    }
  }
  return impersonated(requests);
}

function impersonated(requests: Request[]): UserInfo {
  const who = requests[0] as Request;
  const username =
    who.kind === 'ServiceAccount' ? `system:serviceaccount:${who.namespace}:${who.name}` : who.name;
  let groups = requests.filter((r) => r.kind === 'Group').map((r) => r.name);
  if (who.kind === 'ServiceAccount' && !groups.length)
    groups = ['system:serviceaccounts', `system:serviceaccounts:${who.namespace}`];
  if (username === 'system:anonymous') {
    if (!groups.includes('system:unauthenticated')) groups.push('system:unauthenticated');
  } else if (!groups.includes(AUTHENTICATED) && !groups.includes('system:unauthenticated'))
    groups.push(AUTHENTICATED);
  const extra: Record<string, string[]> = {};
  for (const r of requests)
    if (r.kind === 'UserExtra' && r.extraKey) extra[r.extraKey] = [...(extra[r.extraKey] ?? []), r.name];
  const uid = requests.find((r) => r.kind === 'UID')?.name;
  return { username, groups, ...(uid ? { uid } : {}), ...(Object.keys(extra).length ? { extra } : {}) };
}
