import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import {
  CallTimeout,
  ClusterAccessError,
  parseStatus,
  toClusterAccessError,
} from '../../shared/k8s/errors.js';

const ctx = { cluster: 'prod-eu', operation: 'list pods', server: 'https://10.0.0.1:6443' };

describe('toClusterAccessError', () => {
  it('parses a JSON Status body (raw text, as client-node gives it)', () => {
    const body = JSON.stringify({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      message: 'pods "x" not found',
      reason: 'NotFound',
      code: 404,
    });
    const e = toClusterAccessError(new ApiException(404, 'Unknown API Status Code!', body, {}), ctx);
    expect(e).toBeInstanceOf(ClusterAccessError);
    expect(e).toMatchObject({ cluster: 'prod-eu', operation: 'list pods', status: 404, reason: 'NotFound' });
    expect(e.retryable).toBe(false);
    expect(e.message).toBe('cluster "prod-eu": list pods failed: HTTP 404 NotFound: pods "x" not found');
  });

  it('handles APF 429 plain text with Retry-After', () => {
    const e = toClusterAccessError(
      new ApiException(429, 'Unknown API Status Code!', 'Too many requests, please try again later.\n', {
        'retry-after': '3',
      }),
      ctx,
    );
    expect(e).toMatchObject({ status: 429, reason: 'TooManyRequests', retryable: true, retryAfterMs: 3000 });
    expect(e.message).toContain('Too many requests');
  });

  it('takes retryAfterSeconds and continue tokens from Status details', () => {
    const body = JSON.stringify({
      kind: 'Status',
      code: 410,
      reason: 'Expired',
      message: 'too old',
      metadata: { continue: 'abc' },
    });
    const e = toClusterAccessError(new ApiException(410, 'x', body, {}), ctx);
    expect(e).toMatchObject({ status: 410, reason: 'Expired', continueToken: 'abc', retryable: false });
    expect(
      parseStatus(JSON.stringify({ kind: 'Status', details: { retryAfterSeconds: 2 } }))?.retryAfterSeconds,
    ).toBe(2);
  });

  it('explains a 401 without a body', () => {
    const e = toClusterAccessError(new ApiException(401, 'Unauthorized', undefined, {}), ctx);
    expect(e).toMatchObject({ status: 401, reason: 'Unauthorized', retryable: false });
    expect(e.message).toContain('rejected the credentials');
  });

  it('classifies undici connection resets and TLS failures', () => {
    const reset = new TypeError('fetch failed', {
      cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
    });
    expect(toClusterAccessError(reset, ctx)).toMatchObject({
      kind: 'network',
      code: 'ECONNRESET',
      retryable: true,
    });
    const hangup = new TypeError('fetch failed', { cause: new Error('socket hang up') });
    expect(toClusterAccessError(hangup, ctx)).toMatchObject({ kind: 'network', retryable: true });
    const tls = new TypeError('fetch failed', {
      cause: Object.assign(new Error('self-signed certificate in certificate chain'), {
        code: 'SELF_SIGNED_CERT_IN_CHAIN',
      }),
    });
    const t = toClusterAccessError(tls, ctx);
    expect(t).toMatchObject({ kind: 'tls', retryable: false, code: 'SELF_SIGNED_CERT_IN_CHAIN' });
    expect(t.message).toContain('TLS verification failed');
    expect(t.message).toContain('certificate-authority-data');
  });

  it('reports the call timeout', () => {
    const e = toClusterAccessError(new CallTimeout(250), ctx);
    expect(e).toMatchObject({ kind: 'timeout', retryable: true });
    expect(e.message).toContain('cluster "prod-eu": list pods failed: timed out');
    expect(e.message).toContain('250 ms');
  });

  it('never keeps the raw error as cause and redacts what it quotes', () => {
    const body = JSON.stringify({ kind: 'Status', code: 500, message: 'bad token Bearer abcdef123456' });
    const e = toClusterAccessError(new ApiException(500, 'x', body, { authorization: 'Bearer zzz' }), ctx);
    expect(e.cause).toBeUndefined();
    expect(e.message).not.toContain('abcdef123456');
    expect(e.stack).not.toContain('abcdef123456');
  });
});
