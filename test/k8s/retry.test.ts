import { describe, expect, it } from 'vitest';
import { ClusterAccessError, parseRetryAfter } from '../../shared/k8s/errors.js';
import { backoffDelay, DEFAULT_RETRY_POLICY, isRetryable, retryDelay } from '../../shared/k8s/retry.js';

const p = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 100, maxDelayMs: 1000, maxRetryAfterMs: 3000 };
const err = (init: Partial<ConstructorParameters<typeof ClusterAccessError>[0]>) =>
  new ClusterAccessError({
    cluster: 'c',
    operation: 'op',
    kind: 'http',
    retryable: true,
    detail: 'x',
    ...init,
  });

describe('retry policy', () => {
  it('backs off exponentially with equal jitter, capped', () => {
    expect(backoffDelay(1, p, () => 0)).toBe(50);
    expect(backoffDelay(1, p, () => 1)).toBe(100);
    expect(backoffDelay(3, p, () => 0)).toBe(200);
    expect(backoffDelay(3, p, () => 1)).toBe(400);
    expect(backoffDelay(10, p, () => 1)).toBe(1000);
  });

  it('uses Retry-After when given, capped', () => {
    expect(retryDelay(err({ status: 429, retryAfterMs: 2000 }), 1, p, () => 0)).toBe(2000);
    expect(retryDelay(err({ status: 429, retryAfterMs: 60_000 }), 1, p, () => 0)).toBe(3000);
    expect(retryDelay(err({ status: 500 }), 1, p, () => 0)).toBe(50);
  });

  it('retries 429 always, other transient failures only when idempotent, timeouts only if asked', () => {
    expect(isRetryable(err({ status: 429 }), p, false)).toBe(true);
    expect(isRetryable(err({ status: 503 }), p, false)).toBe(false);
    expect(isRetryable(err({ status: 503 }), p, true)).toBe(true);
    expect(isRetryable(err({ status: 404, retryable: false }), p, true)).toBe(false);
    const t = err({ kind: 'timeout' });
    expect(isRetryable(t, p, true)).toBe(false);
    expect(isRetryable(t, { ...p, retryOnTimeout: true }, true)).toBe(true);
  });

  it('parses Retry-After seconds and dates', () => {
    expect(parseRetryAfter('2')).toBe(2000);
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5000);
  });
});
