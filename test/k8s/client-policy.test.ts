/**
 * ClusterClient's call/listAll logic with scripted failures (no network): retry decisions, waits,
 * budgets, timeouts and 410 restarts. The same behaviour over real HTTPS is in client.sim.test.ts.
 */
import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { ClusterClient, type ClusterClientOptions } from '../../shared/k8s/client.js';
import { ClusterAccessError } from '../../shared/k8s/errors.js';
import { simpleKubeconfig } from './helpers.js';

function client(opts: ClusterClientOptions = {}) {
  let now = 0;
  const sleeps: number[] = [];
  const c = ClusterClient.fromKubeconfig(simpleKubeconfig({}), {
    cluster: 'alpha',
    env: {},
    random: () => 0.5,
    now: () => now,
    sleep: async (ms) => {
      sleeps.push(ms);
      now += ms;
    },
    ...opts,
  });
  return { c, sleeps };
}

const status = (code: number, reason: string, headers: Record<string, string> = {}) =>
  new ApiException(
    code,
    'Unknown API Status Code!',
    JSON.stringify({ kind: 'Status', code, reason, message: `${reason} happened` }),
    headers,
  );

describe('ClusterClient.call policy', () => {
  it('logs a failure the caller expects (a 404 meaning absent) at debug, any other as a warning', async () => {
    const seen: string[] = [];
    const logger = {
      warn: (m: string, f?: Record<string, unknown>) => void seen.push(`warn ${m} ${f?.status}`),
      debug: (m: string, f?: Record<string, unknown>) => void seen.push(`debug ${m} ${f?.status}`),
    };
    const { c } = client({ logger });
    const notFound = () => Promise.reject(status(404, 'NotFound'));
    await expect(c.call('read CRD', notFound, { expected: [404] })).rejects.toMatchObject({ status: 404 });
    await expect(c.call('read pod', notFound)).rejects.toMatchObject({ status: 404 });
    await expect(
      c.call('create', () => Promise.reject(status(422, 'Invalid')), { expected: [409] }),
    ).rejects.toMatchObject({ status: 422 });
    expect(seen).toEqual([
      'debug cluster API call failed 404',
      'warn cluster API call failed 404',
      'warn cluster API call failed 422',
    ]);
  });

  it('retries 503 with exponential backoff and returns the eventual success', async () => {
    const { c, sleeps } = client({ retry: { baseDelayMs: 100 } });
    let n = 0;
    const r = await c.call('get thing', async () => {
      if (++n < 3) throw status(503, 'ServiceUnavailable');
      return 'ok';
    });
    expect(r).toBe('ok');
    expect(sleeps).toEqual([75, 150]);
    expect(c.stats().retries).toBe(2);
  });

  it('honours Retry-After on 429, capped', async () => {
    const { c, sleeps } = client({ retry: { maxRetryAfterMs: 5000 } });
    let n = 0;
    await c.call('get', async () => {
      n++;
      if (n === 1) throw status(429, 'TooManyRequests', { 'retry-after': '2' });
      if (n === 2) throw status(429, 'TooManyRequests', { 'retry-after': '30' });
      return 1;
    });
    expect(sleeps).toEqual([2000, 5000]);
  });

  it('gives up after the attempt budget with a clear error', async () => {
    const { c } = client({ retry: { maxAttempts: 3 } });
    const e = await c
      .call('list nodes', async () => {
        throw status(500, 'InternalError');
      })
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ClusterAccessError);
    const err = e as ClusterAccessError;
    expect(err).toMatchObject({
      cluster: 'alpha',
      operation: 'list nodes',
      status: 500,
      attempts: 3,
      retryable: true,
    });
    expect(err.message).toMatch(
      /^cluster "alpha": list nodes failed: HTTP 500 InternalError: InternalError happened/,
    );
    expect(err.message).toContain('retry budget of 3 attempts');
  });

  it('gives up when the next wait would overrun the time budget', async () => {
    const { c, sleeps } = client({ retry: { maxAttempts: 10, maxElapsedMs: 1000, baseDelayMs: 400 } });
    const e = (await c
      .call('x', async () => {
        throw status(502, 'BadGateway');
      })
      .catch((x: unknown) => x)) as ClusterAccessError;
    expect(sleeps).toEqual([300, 600]);
    expect(e.message).toContain('would exceed the retry budget of 1000 ms');
  });

  it('does not retry non-transient statuses, and retries only 429 for non-idempotent calls', async () => {
    const { c } = client();
    let n = 0;
    await expect(
      c.call('get', async () => {
        n++;
        throw status(404, 'NotFound');
      }),
    ).rejects.toMatchObject({ status: 404, reason: 'NotFound' });
    expect(n).toBe(1);
    n = 0;
    await expect(
      c.call(
        'create',
        async () => {
          n++;
          throw status(500, 'InternalError');
        },
        { idempotent: false },
      ),
    ).rejects.toMatchObject({ status: 500 });
    expect(n).toBe(1);
  });

  it('times out a call that never answers', async () => {
    const c = ClusterClient.fromKubeconfig(simpleKubeconfig({}), {
      cluster: 'alpha',
      env: {},
      timeoutMs: 50,
    });
    const e = (await c
      .call('hang', () => new Promise(() => {}))
      .catch((x: unknown) => x)) as ClusterAccessError;
    expect(e).toMatchObject({ kind: 'timeout', cluster: 'alpha', operation: 'hang' });
    expect(e.message).toContain('timed out');
  });

  it('calls onUnauthorized on 401', async () => {
    const seen: number[] = [];
    const { c } = client({ onUnauthorized: (e) => seen.push(e.status ?? 0) });
    await expect(
      c.call('get', async () => {
        throw new ApiException(401, 'Unauthorized', undefined, {});
      }),
    ).rejects.toMatchObject({ status: 401 });
    expect(seen).toEqual([401]);
  });
});

describe('ClusterClient.listAll policy', () => {
  it('follows continue tokens (typed and raw metadata)', async () => {
    const { c } = client();
    const seen: Array<string | undefined> = [];
    const items = await c.listAll(
      'list',
      async (p) => {
        seen.push(p._continue);
        expect(p.limit).toBe(2);
        if (!p._continue) return { items: [1, 2], metadata: { _continue: 't1' } };
        if (p._continue === 't1') return { items: [3, 4], metadata: { continue: 't2' } };
        return { items: [5], metadata: {} };
      },
      { pageSize: 2 },
    );
    expect(items).toEqual([1, 2, 3, 4, 5]);
    expect(seen).toEqual([undefined, 't1', 't2']);
  });

  it('restarts once on 410 Expired, then gives up on a second 410', async () => {
    const { c } = client();
    let expireOnce = true;
    const items = await c.listAll('list', async (p) => {
      if (!p._continue) return { items: ['a'], metadata: { _continue: 'old' } };
      if (expireOnce) {
        expireOnce = false;
        throw status(410, 'Expired');
      }
      return { items: ['b'] };
    });
    expect(items).toEqual(['a', 'b']);

    await expect(
      c.listAll('list', async (p) => {
        if (!p._continue) return { items: ['a'], metadata: { _continue: 'old' } };
        throw status(410, 'Expired');
      }),
    ).rejects.toMatchObject({ status: 410, reason: 'Expired' });
  });
});
