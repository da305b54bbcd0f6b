/**
 * Continue tokens in the apiserver's own format: base64url (no padding) of
 * {"v":"meta.k8s.io/v1","rv":<list revision>,"start":"<last key>\u0000"}, the key being relative to
 * the list's prefix (the pod name for a namespaced list, "namespace/name" across namespaces).
 */
import { ApiError, badRequest } from './errors.js';

export interface ContinueToken {
  rv: number;
  start: string;
}

export function encodeContinue(rv: number, lastKey: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start: `${lastKey}\u0000` })).toString(
    'base64url',
  );
}

export function decodeContinue(token: string): ContinueToken {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw badRequest('continue key is not valid: illegal base64 data at input byte 0');
  }
  const p = parsed as { v?: unknown; rv?: unknown; start?: unknown };
  if (p.v !== 'meta.k8s.io/v1')
    throw badRequest('continue key is not valid: server does not recognize this encoded key');
  if (typeof p.rv !== 'number' || typeof p.start !== 'string' || p.start === '')
    throw badRequest('continue key is not valid: continue key is not valid');
  if (p.start.includes('..') || p.start.startsWith('/'))
    throw badRequest('continue key is not valid: continue key is not valid');
  return { rv: p.rv, start: p.start };
}

const EXPIRED =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

/** 410 Expired for a token older than the retained history, carrying an inconsistent (rv -1) token. */
export function continueExpired(start: string): ApiError {
  const token = Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: -1, start })).toString('base64url');
  return new ApiError(410, 'Expired', EXPIRED, undefined, { continue: token });
}
