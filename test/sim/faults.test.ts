/** Fault injection (latency, status, reset, hang), its HTTP control endpoints, request statistics and the clock endpoint. */
import { ApiException, CoreV1Api } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import { kubeConfigFor, raw } from './helpers.js';

let sim: Simulator;
let core: CoreV1Api;

beforeAll(async () => {
  sim = await startSimulator({
    clusters: [
      { name: 'f', nodes: 3 },
      { name: 'g', nodes: 1 },
    ],
    now: Date.parse('2026-01-01T00:00:00Z'),
  });
  core = kubeConfigFor(sim, 'f').makeApiClient(CoreV1Api);
});
afterAll(async () => {
  await sim?.stop();
});
afterEach(() => {
  sim.faults.clear();
});

describe('faults', () => {
  it('adds latency to matching requests only', async () => {
    sim.faults.inject({ cluster: 'f', match: { kind: 'nodes' }, fault: { type: 'latency', ms: 300 } });
    const t0 = performance.now();
    await core.listNode();
    expect(performance.now() - t0).toBeGreaterThanOrEqual(290);
    // Only the nodes request matched: a namespaces request is not delayed by the rule.
    const t1 = performance.now();
    await core.listNamespace();
    expect(performance.now() - t1).toBeLessThan(290);
  });

  it('answers 429 in plain text with Retry-After, as API Priority and Fairness does', async () => {
    sim.faults.inject({
      cluster: 'f',
      match: { method: 'GET', kind: 'pods' },
      fault: { type: 'status', code: 429, retryAfterSeconds: 7 },
      times: 1,
    });
    const err = (await core.listPodForAllNamespaces().catch((e: unknown) => e)) as ApiException<string>;
    expect(err).toBeInstanceOf(ApiException);
    expect(err.code).toBe(429);
    expect(err.headers['retry-after']).toBe('7');
    expect(err.body).toBe('Too many requests, please try again later.\n');
    // times: 1 -> the next request passes
    await expect(core.listPodForAllNamespaces()).resolves.toBeDefined();
  });

  it('answers other codes with a JSON Status', async () => {
    sim.faults.inject({
      cluster: 'f',
      match: { pathIncludes: '/api/v1/nodes' },
      fault: { type: 'status', code: 503 },
    });
    const err = (await core.listNode().catch((e: unknown) => e)) as ApiException<string>;
    expect(err.code).toBe(503);
    expect(JSON.parse(err.body)).toMatchObject({
      kind: 'Status',
      status: 'Failure',
      reason: 'ServiceUnavailable',
      code: 503,
    });
  });

  it('resets the connection', async () => {
    sim.faults.inject({ cluster: 'f', match: { kind: 'namespaces' }, fault: { type: 'reset' }, times: 1 });
    const err = await core.listNamespace().catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(ApiException);
    expect(String((err as Error & { cause?: Error }).cause?.message ?? err)).toMatch(
      /socket|closed|reset|other side/i,
    );
  });

  it('hangs until the client gives up', async () => {
    sim.faults.inject({ cluster: 'f', fault: { type: 'hang' } });
    const r = await raw(sim.cluster('f'), 'GET', '/api/v1/nodes', { timeoutMs: 300 }).catch(
      (e: unknown) => e,
    );
    expect(String(r)).toMatch(/timeout after 300 ms/);
  });

  it('only affects the named cluster', async () => {
    sim.faults.inject({ cluster: 'g', fault: { type: 'status', code: 500 } });
    await expect(core.listNode()).resolves.toBeDefined();
    expect((await raw(sim.cluster('g'), 'GET', '/api/v1/nodes')).status).toBe(500);
  });

  it('classifies discovery, resize, metrics and custom resource requests', async () => {
    const c = sim.cluster('f');
    sim.faults.inject({ cluster: 'f', match: { kind: 'discovery' }, fault: { type: 'status', code: 500 } });
    sim.faults.inject({ cluster: 'f', match: { kind: 'resize' }, fault: { type: 'status', code: 502 } });
    sim.faults.inject({ cluster: 'f', match: { kind: 'metrics' }, fault: { type: 'status', code: 504 } });
    expect((await raw(c, 'GET', '/apis')).status).toBe(500);
    expect((await raw(c, 'GET', '/api/v1/namespaces/x/pods/y/resize')).status).toBe(502);
    expect((await raw(c, 'GET', '/apis/metrics.k8s.io/v1beta1/nodes')).status).toBe(504);
    expect((await raw(c, 'GET', '/api/v1/namespaces/x/pods/y')).status).toBe(404);
  });
});

describe('control endpoints over HTTP (for a simulator in another process)', () => {
  it('injects and clears faults with the cluster token', async () => {
    const c = sim.cluster('f');
    const added = await raw(c, 'POST', '/_sim/faults', {
      body: { match: { kind: 'nodes' }, fault: { type: 'status', code: 500 }, times: 2 },
    });
    expect(added.status).toBe(201);
    expect(added.json.id).toMatch(/^fault-/);
    expect((await raw(c, 'GET', '/api/v1/nodes')).status).toBe(500);
    expect((await raw(c, 'GET', '/_sim/faults')).json.faults).toHaveLength(1);
    expect((await raw(c, 'DELETE', '/_sim/faults')).status).toBe(200);
    expect((await raw(c, 'GET', '/api/v1/nodes')).status).toBe(200);
    expect((await raw(c, 'POST', '/_sim/faults', { body: { fault: { type: 'status' } } })).status).toBe(400);
    expect((await raw(c, 'POST', '/_sim/faults', { token: 'x', body: {} })).status).toBe(401);
  });

  it('reports and resets request statistics by method and kind', async () => {
    const c = sim.cluster('f');
    c.resetStats();
    await core.listNode();
    await core.listNode();
    await core.readNamespace({ name: 'default' });
    await raw(c, 'GET', '/api/v1');
    const s = (await raw(c, 'GET', '/_sim/stats')).json;
    expect(s).toEqual(c.stats());
    expect(s.total).toBe(4);
    expect(s.byMethod).toEqual({ GET: 4 });
    expect(s.byKind).toEqual({ nodes: 2, namespaces: 1, discovery: 1 });
    expect(s.byMethodAndKind['GET nodes']).toBe(2);
    await raw(c, 'DELETE', '/_sim/stats');
    expect(c.stats().total).toBe(0);
  });

  it('moves the simulated clock', async () => {
    const c = sim.cluster('f');
    const now = sim.clock.now();
    expect((await raw(c, 'POST', '/_sim/clock', { body: { advanceMs: 60_000 } })).json.now).toBe(
      now + 60_000,
    );
    expect(sim.clock.now()).toBe(now + 60_000);
    expect((await raw(c, 'POST', '/_sim/clock', { body: { now: now + 120_000 } })).json.now).toBe(
      now + 120_000,
    );
    expect((await raw(c, 'GET', '/_sim/clock')).json.now).toBe(now + 120_000);
    expect((await raw(c, 'POST', '/_sim/clock', { body: {} })).status).toBe(400);
  });
});
