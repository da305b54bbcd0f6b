/**
 * Retry policy for cluster API calls: which failures are retried, how long to wait, and when to stop.
 * Pure functions, so the arithmetic is unit-tested without a server.
 */
import type { ClusterAccessError } from './errors.js';

export interface RetryPolicy {
  /** Requests per call, first one included. */
  maxAttempts: number;
  /** Wall-clock budget of a call, retries and waits included. No retry starts that would overrun it. */
  maxElapsedMs: number;
  /** First backoff step; doubles per retry. */
  baseDelayMs: number;
  /** Ceiling of one backoff step. */
  maxDelayMs: number;
  /** Ceiling applied to a server's Retry-After. */
  maxRetryAfterMs: number;
  /** Retry an attempt that timed out. Off by default: a server that hangs once usually hangs again. */
  retryOnTimeout: boolean;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 4,
  maxElapsedMs: 20_000,
  baseDelayMs: 200,
  maxDelayMs: 5_000,
  maxRetryAfterMs: 10_000,
  retryOnTimeout: false,
});

/** Exponential backoff with equal jitter: half fixed, half random, so waits never collapse to zero. */
export function backoffDelay(
  failedAttempts: number,
  p: RetryPolicy,
  random: () => number = Math.random,
): number {
  const exp = Math.min(p.maxDelayMs, p.baseDelayMs * 2 ** Math.max(0, failedAttempts - 1));
  return Math.round(exp / 2 + random() * (exp / 2));
}

/**
 * Whether a failure may be retried at all. 429 is always safe (the server did not process the
 * request); other statuses and connection failures only for idempotent calls.
 */
export function isRetryable(err: ClusterAccessError, p: RetryPolicy, idempotent: boolean): boolean {
  if (err.kind === 'timeout') return p.retryOnTimeout && idempotent;
  if (!err.retryable) return false;
  if (err.status === 429) return true;
  return idempotent;
}

/** The wait before the next attempt: the server's Retry-After (capped) if it gave one, else backoff. */
export function retryDelay(
  err: ClusterAccessError,
  failedAttempts: number,
  p: RetryPolicy,
  random: () => number = Math.random,
): number {
  if (err.retryAfterMs !== undefined && err.retryAfterMs > 0)
    return Math.min(err.retryAfterMs, p.maxRetryAfterMs);
  return backoffDelay(failedAttempts, p, random);
}
