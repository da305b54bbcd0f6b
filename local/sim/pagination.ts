/**
 * Continue tokens in the apiserver's own format: base64url (no padding) of
 * {"v":"meta.k8s.io/v1","rv":<list revision>,"start":"<last key>\u0000"}, the key being relative to
 * the list's prefix (the pod name for a namespaced list, "namespace/name" across namespaces).
 */
import { ApiError } from './errors.js';

export function encodeContinue(rv: number, lastKey: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start: `${lastKey}\u0000` })).toString(
    'base64url',
  );
}

const EXPIRED =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

/** 410 Expired for a token older than the retained history, carrying an inconsistent (rv -1) token. */
export function continueExpired(start: string): ApiError {
  const token = Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: -1, start })).toString('base64url');
  return new ApiError(410, 'Expired', EXPIRED, undefined, { continue: token });
}
