/**
 * List and watch options checked as the apiserver checks them: the query parameters decoded as
 * metav1.ListOptions (a bad `limit` is a 400 with strconv's message), ValidateListOptions
 * (apimachinery pkg/apis/meta/internalversion/validation: 422 `ListOptions.meta.k8s.io "" is invalid`),
 * and the continue token decoded as storage.DecodeContinue does (400 `invalid continue token: ...`).
 */
import {
  ApiError,
  badRequest,
  type FieldError,
  fieldForbidden,
  fieldNotSupported,
  invalid,
} from './errors.js';

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
  sendInitialEvents?: boolean;
}

/** strconv.ParseInt(s, 10, 64) with Go's error text. */
function parseInt64(s: string): number {
  if (!/^[+-]?\d+$/.test(s))
    throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(s)}: invalid syntax`);
  const n = BigInt(s);
  if (n > 2n ** 63n - 1n || n < -(2n ** 63n))
    throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(s)}: value out of range`);
  return Number(n);
}

function validateWatch(o: ListOptions): FieldError[] {
  const errs: FieldError[] = [];
  const match = o.resourceVersionMatch;
  if (o.sendInitialEvents !== undefined && match !== 'NotOlderThan')
    errs.push(
      fieldForbidden(
        'resourceVersionMatch',
        'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
      ),
    );
  if (match) {
    if (o.sendInitialEvents === undefined)
      errs.push(
        fieldForbidden(
          'resourceVersionMatch',
          'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
        ),
      );
    if (match !== 'NotOlderThan')
      errs.push(fieldNotSupported('resourceVersionMatch', match, ['NotOlderThan']));
    if (o.continue)
      errs.push(
        fieldForbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'),
      );
  }
  return errs;
}

function validateList(o: ListOptions): FieldError[] {
  const errs: FieldError[] = [];
  const match = o.resourceVersionMatch;
  if (match) {
    if (!o.resourceVersion)
      errs.push(
        fieldForbidden(
          'resourceVersionMatch',
          'resourceVersionMatch is forbidden unless resourceVersion is provided',
        ),
      );
    if (o.continue)
      errs.push(
        fieldForbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'),
      );
    if (match !== 'Exact' && match !== 'NotOlderThan')
      errs.push(fieldNotSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']));
    if (match === 'Exact' && o.resourceVersion === '0')
      errs.push(
        fieldForbidden(
          'resourceVersionMatch',
          'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
        ),
      );
  }
  if (o.sendInitialEvents !== undefined)
    errs.push(fieldForbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  return errs;
}

/** The options of a list, watch or deletecollection request, validated; throws the server's error. */
export function listOptions(q: URLSearchParams, watch: boolean): ListOptions {
  const limit = q.get('limit');
  const sie = q.get('sendInitialEvents');
  const o: ListOptions = {
    labelSelector: q.get('labelSelector') ?? undefined,
    fieldSelector: q.get('fieldSelector') ?? undefined,
    // A limit of zero or less means no limit.
    limit: limit === null || limit === '' ? undefined : Math.max(0, parseInt64(limit)),
    continue: q.get('continue') || undefined,
    resourceVersion: q.get('resourceVersion') ?? undefined,
    resourceVersionMatch: q.get('resourceVersionMatch') || undefined,
    sendInitialEvents: sie === null ? undefined : sie === 'true' || sie === '1',
  };
  const errs = watch ? validateWatch(o) : validateList(o);
  if (errs.length) throw invalid('ListOptions', 'meta.k8s.io', '', errs);
  return o;
}

const invalidToken = (detail: string) =>
  badRequest(`invalid continue token: continue key is not valid${detail}`);

/** The first byte Go's base64.RawURLEncoding refuses, or -1. */
function base64Error(s: string): number {
  const bad = s.search(/[^A-Za-z0-9_-]/);
  if (bad >= 0) return bad;
  return s.length % 4 === 1 ? s.length - 1 : -1;
}

/** Go's path.Clean of an absolute path. */
function cleanPath(p: string): string {
  const out: string[] = [];
  for (const part of p.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') out.pop();
    else out.push(part);
  }
  return `/${out.join('/')}`;
}

/** storage.DecodeContinue: the token's revision and start key, or the apiserver's 400. */
export function decodeContinueToken(token: string): { rv: number; start: string } {
  const at = base64Error(token);
  if (at >= 0) throw invalidToken(`: illegal base64 data at input byte ${at}`);
  const text = Buffer.from(token, 'base64url').toString('utf8');
  let c: { v?: unknown; rv?: unknown; start?: unknown };
  try {
    c = JSON.parse(text);
  } catch {
    const first = text.trimStart()[0];
    throw invalidToken(
      first === undefined || /[{["\-0-9tfn]/.test(first)
        ? ': unexpected end of JSON input'
        : `: invalid character '${first}' looking for beginning of value`,
    );
  }
  if (typeof c !== 'object' || c === null)
    throw invalidToken(': json: cannot unmarshal into Go value of type storage.continueToken');
  if (c.v !== 'meta.k8s.io/v1')
    throw new ApiError(
      400,
      'BadRequest',
      `invalid continue token: continue key is not valid: server does not recognize this encoded version ${c.v ?? ''}`,
    );
  const rv = typeof c.rv === 'number' ? c.rv : 0;
  if (rv === 0) throw invalidToken(': incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  const start = typeof c.start === 'string' ? c.start : '';
  if (start === '') throw invalidToken(': encoded start key empty (version meta.k8s.io/v1)');
  const key = start.startsWith('/') ? start : `/${start}`;
  // Path traversal defence: a key that path.Clean would change is refused.
  if (cleanPath(key) !== key) throw invalidToken(`: ${start}`);
  return { rv, start };
}
