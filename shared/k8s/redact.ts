/**
 * Scrubs credentials from any string before it reaches a log line or an error message.
 *
 * Two layers:
 *  - patterns for every credential shape a cluster-access path can carry (bearer tokens, EKS
 *    `k8s-aws-v1.` tokens, JWTs, PEM blocks and their base64 form, kubeconfig/JSON secret fields,
 *    AWS keys and presigned-URL signatures);
 *  - exact values registered with {@link registerSecret} (every token, key and password read from a
 *    kubeconfig is registered when it is parsed), so a credential of no recognisable shape is still
 *    scrubbed wherever it turns up.
 *
 * The primary rule stays: fleetscope never builds a message out of kubeconfig content. This is the
 * safety net for text that comes from elsewhere (server messages, SDK and network errors).
 */

const REDACTED = '[REDACTED]';

/** Kubeconfig / JSON / env field names whose values are credentials. */
const SECRET_KEYS = [
  'token',
  'id-token',
  'refresh-token',
  'access-token',
  'client-key-data',
  'client-certificate-data',
  'certificate-authority-data',
  'client-secret',
  'password',
  'secretaccesskey',
  'secret_access_key',
  'aws_secret_access_key',
  'sessiontoken',
  'session_token',
  'aws_session_token',
  'secretstring',
  'authorization',
];

const KEY_ALT = SECRET_KEYS.map((k) => k.replace(/[-_]/g, '[-_]?')).join('|');

interface Rule {
  re: RegExp;
  to: string | ((...m: string[]) => string);
}

const RULES: Rule[] = [
  // PEM blocks, whole or truncated at the end of the string.
  {
    re: /-----BEGIN [A-Z0-9 ]+-----[\s\S]*?(?:-----END [A-Z0-9 ]+-----|$)/g,
    to: '[REDACTED PEM]',
  },
  // base64 of "-----BEGIN" (what kubeconfig *-data fields hold).
  { re: /LS0tLS1CRUdJTi[A-Za-z0-9+/=\\n\r]*/g, to: REDACTED },
  // EKS tokens.
  { re: /k8s-aws-v1\.[A-Za-z0-9_\-=]*/g, to: `k8s-aws-v1.${REDACTED}` },
  // Authorization schemes.
  { re: /\b(Bearer|Basic)\s+[A-Za-z0-9\-._~+/]+=*/gi, to: (_m, scheme) => `${scheme} ${REDACTED}` },
  // JWTs (service-account and OIDC tokens).
  { re: /\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g, to: REDACTED },
  // key: value / "key": "value" / key=value for credential fields (YAML, JSON, env, query strings).
  {
    re: new RegExp(
      `(["']?\\b(?:${KEY_ALT})\\b["']?\\s*[:=]\\s*)("(?:[^"\\\\]|\\\\.)*"|'[^']*'|[^\\s,;&}\\]]+)`,
      'gi',
    ),
    to: (_m, key) => `${key}${REDACTED}`,
  },
  // SigV4 presigned-URL parts.
  {
    re: /(X-Amz-(?:Signature|Security-Token|Credential)=)[^&\s"']+/gi,
    to: (_m, key) => `${key}${REDACTED}`,
  },
  // AWS access key ids.
  { re: /\b(AKIA|ASIA)[A-Z0-9]{16}\b/g, to: (_m, p) => `${p}${REDACTED}` },
  // AWS secret access keys: 40 base64 characters with both cases (hex digests stay readable).
  {
    re: /(?<![A-Za-z0-9/+=])(?=[A-Za-z0-9/+]*[a-z])(?=[A-Za-z0-9/+]*[A-Z])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/g,
    to: REDACTED,
  },
];

const known = new Set<string>();
let knownSorted: string[] = [];

/** Values shorter than this are not registered: too likely to collide with ordinary words. */
const MIN_SECRET_LENGTH = 6;

/**
 * Registers a credential value so that {@link redact} scrubs it verbatim wherever it appears (and its
 * base64 / base64url forms). Safe to call repeatedly with the same value.
 */
export function registerSecret(value: string | undefined | null): void {
  if (!value) return;
  const v = value.trim();
  if (v.length < MIN_SECRET_LENGTH || known.has(v)) return;
  known.add(v);
  const b64 = Buffer.from(v, 'utf8').toString('base64').replace(/=+$/, '');
  if (b64.length >= MIN_SECRET_LENGTH) known.add(b64);
  const b64url = Buffer.from(v, 'utf8').toString('base64url');
  if (b64url.length >= MIN_SECRET_LENGTH) known.add(b64url);
  knownSorted = [...known].sort((a, b) => b.length - a.length);
}

/** Scrubs credentials from a string. Never throws; non-strings are stringified first. */
export function redact(input: unknown): string {
  let s: string;
  try {
    s = typeof input === 'string' ? input : String(input);
  } catch {
    return '[unprintable]';
  }
  for (const secret of knownSorted) {
    if (s.includes(secret)) s = s.split(secret).join(REDACTED);
  }
  for (const rule of RULES) {
    rule.re.lastIndex = 0;
    const to = rule.to;
    s = typeof to === 'string' ? s.replace(rule.re, to) : s.replace(rule.re, (...m: string[]) => to(...m));
  }
  return s;
}

/** Redacts every string inside a plain log-field object (deeply), leaving numbers and booleans. */
export function redactFields<T>(fields: T): T {
  const secretKey = new RegExp(`^(?:${KEY_ALT})$`, 'i');
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return redact(v);
    if (depth > 6 || v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      out[k] = secretKey.test(k) && typeof x === 'string' ? REDACTED : walk(x, depth + 1);
    }
    return out;
  };
  return walk(fields, 0) as T;
}
