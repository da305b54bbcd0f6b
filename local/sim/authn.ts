/**
 * Authentication as kube-apiserver's chain does it, for the credentials the simulator hands out: a
 * client certificate signed by the cluster CA (user = CN, groups = O), the cluster's admin token (a
 * system:masters member), static user tokens (as a token file, or the username and groups an EKS access
 * entry maps a role to), and ServiceAccount tokens from TokenRequest (signed, bound to the account's UID,
 * expiring on the simulated clock). Every authenticated user is also in system:authenticated.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { SimState, UserInfo } from './state.js';

export const ADMIN_USER = 'fleetscope-sim';
export const AUTHENTICATED = 'system:authenticated';
const CREDENTIAL_ID = 'authentication.kubernetes.io/credential-id';

const keys = new WeakMap<SimState, Buffer>();
const keyOf = (c: SimState): Buffer => {
  let k = keys.get(c);
  if (!k) {
    k = randomBytes(32);
    keys.set(c, k);
  }
  return k;
};

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
const sign = (c: SimState, data: string) => createHmac('sha256', keyOf(c)).update(data).digest('base64url');

/** A ServiceAccount token (JWT-shaped, HS256 with a per-cluster key) as TokenRequest returns it. */
export function mintServiceAccountToken(
  cluster: SimState,
  sa: { namespace: string; name: string; uid: string },
  audiences: string[],
  expiresAt: number,
): string {
  const now = Math.floor(cluster.clock.now() / 1000);
  const body = {
    aud: audiences,
    exp: Math.floor(expiresAt / 1000),
    iat: now,
    iss: 'https://kubernetes.default.svc.cluster.local',
    nbf: now,
    sub: `system:serviceaccount:${sa.namespace}:${sa.name}`,
    'kubernetes.io': { namespace: sa.namespace, serviceaccount: { name: sa.name, uid: sa.uid } },
  };
  const unsigned = `${b64({ alg: 'HS256', kid: 'fleetscope-sim' })}.${b64(body)}`;
  return `${unsigned}.${sign(cluster, unsigned)}`;
}

function serviceAccountUser(cluster: SimState, token: string): UserInfo | undefined {
  const [head, payload, sig] = token.split('.');
  if (!head || !payload || !sig) return undefined;
  const want = Buffer.from(sign(cluster, `${head}.${payload}`));
  const got = Buffer.from(sig);
  if (got.length !== want.length || !timingSafeEqual(got, want)) return undefined;
  let claims: {
    exp?: number;
    'kubernetes.io'?: { namespace?: string; serviceaccount?: { name?: string; uid?: string } };
  };
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!claims.exp || claims.exp * 1000 <= cluster.clock.now()) return undefined;
  const ns = claims['kubernetes.io']?.namespace;
  const sa = claims['kubernetes.io']?.serviceaccount;
  // A bound token dies with its ServiceAccount (a new one of the same name has another UID).
  const live = ns && sa?.name ? cluster.store.get('serviceaccounts', `${ns}/${sa.name}`) : undefined;
  if (!live || live.metadata?.uid !== sa?.uid) return undefined;
  return {
    username: `system:serviceaccount:${ns}:${sa?.name}`,
    uid: sa?.uid,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, AUTHENTICATED],
  };
}

const same = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

function certificateUser(req: IncomingMessage): UserInfo | undefined {
  const socket = req.socket as TLSSocket;
  if (!socket.authorized || typeof socket.getPeerCertificate !== 'function') return undefined;
  const subject = socket.getPeerCertificate()?.subject;
  const cn = subject?.CN;
  if (!cn) return undefined;
  const orgs = subject.O === undefined ? [] : Array.isArray(subject.O) ? subject.O : [subject.O];
  // The x509 authenticator names the credential by its certificate's SHA-256 (1.30+).
  const raw = socket.getPeerCertificate().raw;
  const extra = raw
    ? { [CREDENTIAL_ID]: [`X509SHA256=${createHash('sha256').update(raw).digest('hex')}`] }
    : undefined;
  return { username: String(cn), groups: [...orgs.map(String), AUTHENTICATED], ...(extra ? { extra } : {}) };
}

/** The user a request authenticates as, or undefined (401). */
export function authenticate(
  cluster: SimState,
  adminToken: string,
  req: IncomingMessage,
): UserInfo | undefined {
  const fromCert = certificateUser(req);
  if (fromCert) return fromCert;
  const h = req.headers.authorization;
  if (typeof h !== 'string' || !h.startsWith('Bearer ')) return undefined;
  const token = h.slice(7).trim();
  if (same(token, adminToken)) return { username: ADMIN_USER, groups: ['system:masters', AUTHENTICATED] };
  for (const u of cluster.spec.users ?? [])
    if (u.token && same(token, u.token))
      return { username: u.name, groups: [...(u.groups ?? []), AUTHENTICATED] };
  return serviceAccountUser(cluster, token);
}
