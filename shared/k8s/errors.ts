/**
 * One error type for everything that can go wrong between a handler and a cluster's API server.
 *
 * A ClusterAccessError always names the cluster and the operation, says whether trying again later
 * may help, and carries a message that has been passed through the redactor. It never carries the
 * original error as `cause`: client-node's ApiException message embeds raw bodies and headers, and
 * network errors can embed anything; only their sanitised facts (status, reason, code) are kept.
 */
import { redact } from './redact.js';

export type FailureKind =
  /** The API server answered with a non-2xx status. */
  | 'http'
  /** No complete answer within the call's timeout; the request was aborted. */
  | 'timeout'
  /** The connection failed (refused, reset, DNS). */
  | 'network'
  /** The server's certificate could not be verified against the kubeconfig's CA. */
  | 'tls'
  /** The kubeconfig (or its reference) is unusable. */
  | 'kubeconfig'
  /** Credentials could not be obtained (secret not readable, EKS token not mintable). */
  | 'credentials'
  /** The caller aborted the call. */
  | 'aborted'
  /** Anything else (a bug, a response that could not be decoded). */
  | 'internal';

export interface ClusterAccessErrorInit {
  cluster: string;
  operation: string;
  kind: FailureKind;
  /** HTTP status when the server answered. */
  status?: number;
  /** Kubernetes Status `reason` (e.g. NotFound, Conflict, Expired, TooManyRequests). */
  reason?: string;
  /** Whether trying again later may succeed. */
  retryable: boolean;
  /** What went wrong, in words; redacted before use. */
  detail: string;
  /** A low-level error code such as ECONNRESET or SELF_SIGNED_CERT_IN_CHAIN. */
  code?: string;
  /** Requests made for this call, when more than one. */
  attempts?: number;
  elapsedMs?: number;
  /** Why retrying stopped (appended to the message). */
  note?: string;
  /** Server-requested delay (Retry-After / details.retryAfterSeconds), in ms. */
  retryAfterMs?: number;
  /** Kubernetes Status `metadata.continue` (410 Expired carries a fresh token). */
  continueToken?: string;
}

export class ClusterAccessError extends Error {
  override readonly name: string = 'ClusterAccessError';
  readonly cluster: string;
  readonly operation: string;
  readonly kind: FailureKind;
  readonly status?: number;
  readonly reason?: string;
  readonly retryable: boolean;
  readonly code?: string;
  readonly attempts?: number;
  readonly elapsedMs?: number;
  readonly retryAfterMs?: number;
  readonly note?: string;
  /** Not part of the message: a continue token is not a credential, but it is noise. */
  readonly continueToken?: string;
  /** The redacted detail without the cluster/operation prefix. */
  readonly detail: string;

  constructor(init: ClusterAccessErrorInit) {
    const detail = redact(init.detail);
    super(redact(formatMessage({ ...init, detail })));
    this.cluster = init.cluster;
    this.operation = init.operation;
    this.kind = init.kind;
    this.status = init.status;
    this.reason = init.reason;
    this.retryable = init.retryable;
    this.code = init.code;
    this.attempts = init.attempts;
    this.elapsedMs = init.elapsedMs;
    this.retryAfterMs = init.retryAfterMs;
    this.note = init.note;
    this.continueToken = init.continueToken;
    this.detail = detail;
  }

  /** A copy with retry accounting added to the message. */
  withAttempts(attempts: number, elapsedMs: number, note?: string): ClusterAccessError {
    return new ClusterAccessError({ ...this.init(), attempts, elapsedMs, note });
  }

  /** Fields safe to put in a structured log line. */
  toLog(): Record<string, unknown> {
    return {
      cluster: this.cluster,
      operation: this.operation,
      kind: this.kind,
      status: this.status,
      reason: this.reason,
      code: this.code,
      retryable: this.retryable,
      attempts: this.attempts,
      error: this.message,
    };
  }

  override toString(): string {
    return `${this.name}: ${this.message}`;
  }

  private init(): ClusterAccessErrorInit {
    return {
      cluster: this.cluster,
      operation: this.operation,
      kind: this.kind,
      status: this.status,
      reason: this.reason,
      retryable: this.retryable,
      detail: this.detail,
      code: this.code,
      attempts: this.attempts,
      elapsedMs: this.elapsedMs,
      retryAfterMs: this.retryAfterMs,
      note: this.note,
      continueToken: this.continueToken,
    };
  }
}

/** A kubeconfig that cannot be used. Raised before any request is made. */
export class KubeconfigError extends ClusterAccessError {
  override readonly name: string = 'KubeconfigError';
  constructor(cluster: string, detail: string, operation = 'load kubeconfig') {
    super({ cluster, operation, kind: 'kubeconfig', retryable: false, detail });
  }
}

function formatMessage(init: ClusterAccessErrorInit): string {
  const parts: string[] = [];
  if (init.status !== undefined) parts.push(`HTTP ${init.status}${init.reason ? ` ${init.reason}` : ''}: `);
  else if (init.kind === 'timeout') parts.push('timed out: ');
  else if (init.kind === 'tls') parts.push('TLS verification failed: ');
  else if (init.kind === 'network') parts.push('connection failed: ');
  parts.push(init.detail);
  const trailer: string[] = [];
  if (init.attempts !== undefined && init.attempts > 1) {
    const secs = init.elapsedMs !== undefined ? ` over ${(init.elapsedMs / 1000).toFixed(1)} s` : '';
    trailer.push(`${init.attempts} attempts${secs}`);
  }
  if (init.note) trailer.push(init.note);
  if (trailer.length) parts.push(` [${trailer.join('; ')}]`);
  return `cluster "${init.cluster}": ${init.operation} failed: ${parts.join('')}`;
}

// ---------------------------------------------------------------------------------------------------
// Classification of what client-node / undici throw.

/** The parsed parts of a Kubernetes `Status` object that matter here. */
export interface K8sStatus {
  code?: number;
  reason?: string;
  message?: string;
  retryAfterSeconds?: number;
  continueToken?: string;
}

/** Duck-typed ApiException: `code` numeric, `body` raw text (or object), `headers` lower-cased. */
export interface ApiExceptionLike {
  code: number;
  body: unknown;
  headers: Record<string, string>;
}

export function isApiException(e: unknown): e is ApiExceptionLike {
  return (
    e instanceof Error &&
    typeof (e as Partial<ApiExceptionLike>).code === 'number' &&
    'body' in e &&
    'headers' in e
  );
}

/** Parses an ApiException body (raw JSON text, an object, or plain text like APF's 429) into a Status. */
export function parseStatus(body: unknown): K8sStatus | undefined {
  let obj: unknown = body;
  if (typeof body === 'string') {
    const t = body.trim();
    if (!t.startsWith('{')) return undefined;
    try {
      obj = JSON.parse(t);
    } catch {
      return undefined;
    }
  } else if (body instanceof Uint8Array) {
    return parseStatus(Buffer.from(body).toString('utf8'));
  }
  if (!obj || typeof obj !== 'object') return undefined;
  const s = obj as {
    kind?: unknown;
    code?: unknown;
    reason?: unknown;
    message?: unknown;
    details?: { retryAfterSeconds?: unknown };
    metadata?: { continue?: unknown };
  };
  if (s.kind !== undefined && s.kind !== 'Status') return undefined;
  return {
    code: typeof s.code === 'number' ? s.code : undefined,
    reason: typeof s.reason === 'string' && s.reason ? s.reason : undefined,
    message: typeof s.message === 'string' ? s.message : undefined,
    retryAfterSeconds:
      typeof s.details?.retryAfterSeconds === 'number' && s.details.retryAfterSeconds > 0
        ? s.details.retryAfterSeconds
        : undefined,
    continueToken:
      typeof s.metadata?.continue === 'string' && s.metadata.continue ? s.metadata.continue : undefined,
  };
}

/** Default reasons by status when the body carries none (401 bodies are dropped by client-node). */
const REASON_BY_STATUS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Gone',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  502: 'BadGateway',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504]);

/** Parses Retry-After (delta-seconds or HTTP-date) into milliseconds. */
export function parseRetryAfter(value: string | undefined, nowMs = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  if (Number.isFinite(at)) return Math.max(0, at - nowMs);
  return undefined;
}

const TLS_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'HOSTNAME_MISMATCH',
  'INVALID_CA',
]);

const RETRYABLE_NET_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);

const NETWORK_CODES = new Set([...RETRYABLE_NET_CODES, 'ENOTFOUND', 'UND_ERR_INFO']);

interface ErrLike {
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  errors?: unknown;
}

/** Walks `cause` chains and AggregateError members, yielding each error-like object once. */
function* causes(e: unknown, depth = 0): Generator<ErrLike> {
  if (!e || typeof e !== 'object' || depth > 8) return;
  const x = e as ErrLike;
  yield x;
  if (Array.isArray(x.errors)) for (const m of x.errors) yield* causes(m, depth + 1);
  if (x.cause) yield* causes(x.cause, depth + 1);
}

function findCode(e: unknown): { code?: string; message: string } {
  let firstMessage = '';
  for (const c of causes(e)) {
    const code = typeof c.code === 'string' ? c.code : undefined;
    const message = typeof c.message === 'string' ? c.message : '';
    if (!firstMessage && message && message !== 'fetch failed') firstMessage = message;
    if (code && (TLS_CODES.has(code) || NETWORK_CODES.has(code) || code.startsWith('ERR_SSL_')))
      return { code, message: message || firstMessage };
  }
  for (const c of causes(e)) {
    const message = typeof c.message === 'string' ? c.message : '';
    if (/socket hang up|other side closed/i.test(message)) return { code: 'ECONNRESET', message };
  }
  return { message: firstMessage };
}

/** A marker the client uses as the abort reason of a timed-out attempt. */
export class CallTimeout extends Error {
  override readonly name = 'CallTimeout';
  constructor(readonly timeoutMs: number) {
    super(`no complete response within ${timeoutMs} ms; the request was aborted`);
  }
}

export interface ClassifyContext {
  cluster: string;
  operation: string;
  server?: string;
}

/**
 * Turns anything thrown by a request into a ClusterAccessError: ApiException (Status body parsed),
 * the call's own timeout, undici network/TLS failures, or an unexpected error.
 */
export function toClusterAccessError(e: unknown, ctx: ClassifyContext): ClusterAccessError {
  if (e instanceof ClusterAccessError) return e;
  const base: Origin = { cluster: ctx.cluster, operation: ctx.operation };
  const where = ctx.server ? ` (${ctx.server})` : '';
  if (e instanceof CallTimeout)
    return new ClusterAccessError({
      ...base,
      kind: 'timeout',
      retryable: true,
      detail: `the API server${where} sent ${e.message}`,
      code: 'ETIMEDOUT',
    });
  if (isApiException(e)) return fromApiException(e, base, where);
  if (e instanceof Error && (e.name === 'EksTokenError' || e.name === 'KubeconfigSourceError')) {
    const code = (e as { code?: unknown }).code;
    return new ClusterAccessError({
      ...base,
      kind: 'credentials',
      retryable: false,
      detail: e.message,
      ...(typeof code === 'string' ? { code } : {}),
    });
  }
  return fromTransport(e, base, where);
}

/** Which cluster and operation an error is about. */
type Origin = Pick<ClusterAccessErrorInit, 'cluster' | 'operation'>;

/** An answer of the API server: its status, the Status body's reason and message, and Retry-After. */
function fromApiException(e: ApiExceptionLike, base: Origin, where: string): ClusterAccessError {
  const status = e.code;
  const parsed = parseStatus(e.body);
  const headerRetry = parseRetryAfter(e.headers?.['retry-after']);
  const retryAfterMs =
    headerRetry ?? (parsed?.retryAfterSeconds !== undefined ? parsed.retryAfterSeconds * 1000 : undefined);
  let detail: string;
  if (parsed?.message) detail = parsed.message;
  else if (typeof e.body === 'string' && e.body.trim()) detail = e.body.trim().slice(0, 300);
  else if (status === 401)
    detail = `the API server${where} rejected the credentials (token expired, rotated or not authorised)`;
  else if (status === 403) detail = `the credentials are not allowed to do this`;
  else detail = `the API server${where} answered ${status}`;
  return new ClusterAccessError({
    ...base,
    kind: 'http',
    status,
    reason: parsed?.reason ?? REASON_BY_STATUS[status],
    retryable: RETRYABLE_STATUSES.has(status),
    detail,
    retryAfterMs,
    continueToken: parsed?.continueToken,
  });
}

/** No answer: TLS and network failures (found by code anywhere in the cause chain), aborts, the rest internal. */
function fromTransport(e: unknown, base: Origin, where: string): ClusterAccessError {
  const { code, message } = findCode(e);
  if (code && (TLS_CODES.has(code) || code.startsWith('ERR_SSL_')))
    return new ClusterAccessError({
      ...base,
      kind: 'tls',
      retryable: false,
      code,
      detail: `the certificate of the API server${where} could not be verified (${code}${message ? `: ${message}` : ''}); check the kubeconfig's certificate-authority-data for this cluster`,
    });
  if (code && NETWORK_CODES.has(code))
    return new ClusterAccessError({
      ...base,
      kind: 'network',
      retryable: RETRYABLE_NET_CODES.has(code),
      code,
      detail: `${code}${message && !message.includes(code) ? ` (${message})` : ''} talking to the API server${where}`,
    });
  if (e instanceof Error && (e.name === 'AbortError' || e.name === 'TimeoutError'))
    return new ClusterAccessError({
      ...base,
      kind: 'aborted',
      retryable: false,
      detail: 'the call was aborted',
    });
  if (e instanceof TypeError && e.message === 'fetch failed')
    return new ClusterAccessError({
      ...base,
      kind: 'network',
      retryable: true,
      detail: `the request to the API server${where} failed${message ? `: ${message}` : ''}`,
    });
  const msg = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  return new ClusterAccessError({ ...base, kind: 'internal', retryable: false, detail: msg.slice(0, 500) });
}
