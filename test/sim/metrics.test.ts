/**
 * metrics.k8s.io as metrics-server serves it: formats, windows, selectors, the simulated clock, load
 * profiles (node-to-node spread, growth, OOM kills), and the aggregator's 404/503 when it is absent
 * or unavailable.
 */
import { CoreV1Api, CustomObjectsApi, Metrics } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import { parseCpu, parseMemory } from '../../shared/kernel/quantity.js';
import { kubeConfigFor, raw } from './helpers.js';

const START = Date.parse('2026-06-01T08:00:00Z');
let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({
    now: START,
    clusters: [
      {
        name: 'm',
        nodes: 12,
        daemonSets: [
          {
            name: 'spread',
            namespace: 'monitoring',
            tolerations: [{ operator: 'Exists' }],
            containers: [
              { name: 'main', requests: { cpu: '100m', memory: '100Mi' }, limits: { memory: '1Gi' } },
            ],
            load: { perNode: 'heterogeneous', cpu: '100m', memory: '100Mi', noise: 0 },
          },
          {
            name: 'leaky',
            namespace: 'monitoring',
            tolerations: [{ operator: 'Exists' }],
            containers: [
              { name: 'leak', requests: { cpu: '10m', memory: '50Mi' }, limits: { memory: '100Mi' } },
            ],
            load: { cpu: '5m', memory: '40Mi', memoryGrowthPerHour: 0.5 },
          },
          {
            name: 'flat',
            containers: [{ name: 'f', requests: { cpu: '20m', memory: '20Mi' } }],
            load: {
              perNode: { '0': 2 },
              cpu: '20m',
              memory: '20Mi',
              noise: 0,
              oomKills: [{ atMs: START + 30 * 60_000, nodes: [0] }],
            },
          },
        ],
      },
      { name: 'absent', nodes: 2, metricsApi: 'absent' },
      { name: 'unavailable', nodes: 2, metricsApi: 'unavailable' },
    ],
  });
});
afterAll(async () => {
  await sim?.stop();
});

describe('NodeMetrics and PodMetrics', () => {
  it('lists node metrics with metrics-server quantities, windows and timestamps from the simulated clock', async () => {
    const r = await raw(sim.cluster('m'), 'GET', '/apis/metrics.k8s.io/v1beta1/nodes');
    expect(r.status).toBe(200);
    expect(r.json.kind).toBe('NodeMetricsList');
    expect(r.json.metadata).toEqual({});
    expect(r.json.items).toHaveLength(12);
    for (const item of r.json.items) {
      expect(Object.keys(item)).toEqual(['metadata', 'timestamp', 'window', 'usage']);
      expect(item.usage.cpu).toMatch(/^\d+(n|u|m)?$/);
      expect(item.usage.memory).toMatch(/^\d+(Ki|Mi|Gi)?$/);
      expect(item.window).toMatch(/^1[45](\.\d{1,3})?s$/);
      const t = Date.parse(item.timestamp);
      expect(t).toBeLessThanOrEqual(START);
      expect(START - t).toBeLessThan(16_000);
      expect(item.metadata.labels['kubernetes.io/hostname']).toBe(item.metadata.name);
      expect(item.metadata.resourceVersion).toBeUndefined();
    }
    sim.clock.advance(60_000);
    const later = await raw(
      sim.cluster('m'),
      'GET',
      `/apis/metrics.k8s.io/v1beta1/nodes/${r.json.items[0].metadata.name}`,
    );
    expect(later.json.kind).toBe('NodeMetrics');
    expect(Date.parse(later.json.timestamp)).toBeGreaterThan(Date.parse(r.json.items[0].timestamp));
  });

  it('lists pod metrics per namespace and across namespaces, sorted, with label selectors', async () => {
    const all = await raw(sim.cluster('m'), 'GET', '/apis/metrics.k8s.io/v1beta1/pods');
    const mon = await raw(sim.cluster('m'), 'GET', '/apis/metrics.k8s.io/v1beta1/namespaces/monitoring/pods');
    const spread = await raw(
      sim.cluster('m'),
      'GET',
      '/apis/metrics.k8s.io/v1beta1/pods?labelSelector=app.kubernetes.io%2Fname%3Dspread',
    );
    expect(all.json.kind).toBe('PodMetricsList');
    expect(mon.json.items).toHaveLength(24);
    expect(spread.json.items).toHaveLength(12);
    const keys = all.json.items.map(
      (p: { metadata: { namespace: string; name: string } }) => `${p.metadata.namespace}/${p.metadata.name}`,
    );
    expect([...keys].sort()).toEqual(keys);
    const one = spread.json.items[0];
    expect(one.containers).toEqual([
      {
        name: 'main',
        usage: { cpu: expect.stringMatching(/^\d+n$/), memory: expect.stringMatching(/^\d+Ki$/) },
      },
    ]);
    const get = await raw(
      sim.cluster('m'),
      'GET',
      `/apis/metrics.k8s.io/v1beta1/namespaces/monitoring/pods/${one.metadata.name}`,
    );
    expect(get.json.kind).toBe('PodMetrics');
    expect(get.json.metadata.namespace).toBe('monitoring');
  });

  it('spreads a heterogeneous load over at least 0.25x..4x across nodes', async () => {
    const r = await raw(
      sim.cluster('m'),
      'GET',
      '/apis/metrics.k8s.io/v1beta1/namespaces/monitoring/pods?labelSelector=app.kubernetes.io%2Fname%3Dspread',
    );
    const cpus = r.json.items.map((p: { containers: { usage: { cpu: string } }[] }) =>
      parseCpu(p.containers[0]?.usage.cpu ?? '0'),
    );
    expect(Math.min(...cpus)).toBe(25);
    expect(Math.max(...cpus)).toBe(400);
  });

  it('accepts only metadata.name/metadata.namespace field selectors, and 404s missing objects', async () => {
    const c = sim.cluster('m');
    const bad = await raw(c, 'GET', '/apis/metrics.k8s.io/v1beta1/pods?fieldSelector=spec.nodeName%3Dx');
    expect(bad.status).toBe(400);
    expect(bad.json.message).toBe(
      '"spec.nodeName" is not a known field selector: only "metadata.name", "metadata.namespace"',
    );
    const node = await raw(c, 'GET', '/apis/metrics.k8s.io/v1beta1/nodes/nope');
    expect(node.status).toBe(404);
    expect(node.json.message).toBe('nodemetrics.metrics.k8s.io "nope" not found');
    const pod = await raw(c, 'GET', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/nope');
    expect(pod.json.message).toBe('podmetrics.metrics.k8s.io "default/nope" not found');
  });

  it('grows memory and OOM-kills containers that reach their limit, with restartCount and lastState', async () => {
    const core = kubeConfigFor(sim, 'm').makeApiClient(CoreV1Api);
    const leaky = () =>
      core.listNamespacedPod({ namespace: 'monitoring', labelSelector: 'app.kubernetes.io/name=leaky' });
    const before = (await leaky()).items[0];
    const restarts0 = before?.status?.containerStatuses?.[0]?.restartCount ?? 0;
    sim.clock.advance(3 * 3_600_000);
    const after = (await leaky()).items[0];
    const cs = after?.status?.containerStatuses?.[0];
    expect(cs?.restartCount).toBeGreaterThan(restarts0);
    expect(cs?.lastState?.terminated?.reason).toBe('OOMKilled');
    expect(cs?.lastState?.terminated?.exitCode).toBe(137);
    const m = await raw(
      sim.cluster('m'),
      'GET',
      `/apis/metrics.k8s.io/v1beta1/namespaces/monitoring/pods/${after?.metadata?.name}`,
    );
    expect(parseMemory(m.json.containers[0].usage.memory)).toBeLessThan(100 * 2 ** 20);
  });

  it('applies explicit OOM kills at their time on the listed nodes only', async () => {
    const core = kubeConfigFor(sim, 'm').makeApiClient(CoreV1Api);
    const pods = (
      await core.listNamespacedPod({ namespace: 'kube-system', labelSelector: 'app.kubernetes.io/name=flat' })
    ).items;
    const restarted = pods.filter((p) => (p.status?.containerStatuses?.[0]?.restartCount ?? 0) > 0);
    expect(restarted).toHaveLength(1);
    const finished = restarted[0]?.status?.containerStatuses?.[0]?.lastState?.terminated
      ?.finishedAt as unknown as Date;
    expect(new Date(finished).toISOString()).toBe('2026-06-01T08:30:00.000Z');
  });

  it('works with client-node Metrics and CustomObjectsApi', async () => {
    const kc = kubeConfigFor(sim, 'm');
    const nodes = await new Metrics(kc).getNodeMetrics();
    expect(nodes.items).toHaveLength(12);
    const custom = kc.makeApiClient(CustomObjectsApi);
    const pods = (await custom.listClusterCustomObject({
      group: 'metrics.k8s.io',
      version: 'v1beta1',
      plural: 'pods',
      labelSelector: 'app.kubernetes.io/name=flat',
    })) as { items: unknown[] };
    expect(pods.items).toHaveLength(12);
  });
});

describe('metrics API absent or unavailable', () => {
  it('answers 404 page not found in plain text when no APIService exists', async () => {
    const c = sim.cluster('absent');
    for (const p of [
      '/apis/metrics.k8s.io',
      '/apis/metrics.k8s.io/v1beta1',
      '/apis/metrics.k8s.io/v1beta1/nodes',
    ]) {
      const r = await raw(c, 'GET', p);
      expect(r.status).toBe(404);
      expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(r.text).toBe('404 page not found\n');
    }
    const groups = await raw(c, 'GET', '/apis');
    expect(groups.json.groups.some((g: { name: string }) => g.name === 'metrics.k8s.io')).toBe(false);
  });

  it('answers 503 service unavailable in plain text when the APIService has no backend', async () => {
    const c = sim.cluster('unavailable');
    for (const p of [
      '/apis/metrics.k8s.io/v1beta1',
      '/apis/metrics.k8s.io/v1beta1/nodes',
      '/apis/metrics.k8s.io/v1beta1/namespaces/kube-system/pods',
    ]) {
      const r = await raw(c, 'GET', p);
      expect(r.status).toBe(503);
      expect(r.text).toBe('service unavailable\n');
    }
    const svc = await raw(c, 'GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io');
    expect(svc.json.status.conditions[0]).toMatchObject({ type: 'Available', status: 'False' });
    // client-node's Metrics helper parses every body as JSON, so the real plain-text 503 surfaces as its 500.
    const err = await new Metrics(kubeConfigFor(sim, 'unavailable'))
      .getNodeMetrics()
      .catch((e: unknown) => e);
    expect((err as { code?: number }).code).toBe(500);
    expect(String((err as Error).message)).toMatch(/Error occurred in metrics request/);
  });
});
