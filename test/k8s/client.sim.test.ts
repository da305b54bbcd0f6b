/**
 * The cluster access layer over real HTTPS against the Kubernetes API simulator (its own CA, bearer
 * tokens, fault injection). Timing assertions compare request timestamps, never a test's duration.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { V1Node } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createCertificates } from '../../local/sim/certs.js';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import { ClusterClient, type ClusterClientOptions } from '../../shared/k8s/client.js';
import { ClusterConnector } from '../../shared/k8s/connector.js';
import { ClusterAccessError, KubeconfigError } from '../../shared/k8s/errors.js';
import type { BuildKubeConfigOptions } from '../../shared/k8s/kubeconfig.js';
import { FileKubeconfigSource } from '../../shared/k8s/kubeconfig-source.js';
import type { EksTokenProvider } from '../../shared/k8s/token-source.js';
import { simpleKubeconfig } from './helpers.js';

const BIG_NODES = 1234;
let sim: Simulator & { state(name: string): { store: { compact(): void } } };
let dir: string;
const open: ClusterClient[] = [];

/** A kubeconfig for one simulated cluster, optionally with another token or CA. */
function kubeconfigFor(
  name: string,
  o: { token?: string; caData?: string; user?: Record<string, unknown> } = {},
) {
  const c = sim.cluster(name);
  return simpleKubeconfig({
    name,
    server: c.server,
    caData: o.caData ?? Buffer.from(c.caData).toString('base64'),
    user: o.user ?? { token: o.token ?? c.token },
  });
}

function clientFor(
  name: string,
  opts: ClusterClientOptions & Partial<BuildKubeConfigOptions> & { text?: string } = {},
): ClusterClient {
  const c = ClusterClient.fromKubeconfig(opts.text ?? kubeconfigFor(name), {
    cluster: name,
    timeoutMs: 2_000,
    retry: { baseDelayMs: 20, maxDelayMs: 100 },
    ...opts,
  });
  open.push(c);
  return c;
}

beforeAll(async () => {
  sim = await startSimulator({
    clusters: [
      { name: 'alpha', nodes: BIG_NODES },
      { name: 'beta', nodes: 3 },
      {
        name: 'gamma',
        nodes: 3,
        daemonSets: [
          { name: 'agent', containers: [{ name: 'a', requests: { cpu: '50m', memory: '64Mi' } }] },
        ],
      },
      { name: 'delta', nodes: 1, metricsApi: 'absent' },
    ],
  });
  dir = mkdtempSync(path.join(tmpdir(), 'k8s-sim-'));
});

afterEach(() => {
  sim.faults.clear();
});

afterAll(async () => {
  await Promise.all(open.map((c) => c.close()));
  await sim?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('kubeconfig validation (simulator kubeconfig)', () => {
  it('uses one context of the multi-cluster kubeconfig and lists the others when asked for an unknown one', async () => {
    const text = sim.kubeconfig();
    const beta = clientFor('beta', { text, context: 'beta' });
    const nodes = await beta.call('list nodes', () => beta.core.listNode());
    expect(nodes.items).toHaveLength(3);
    expect(beta.kubeConfig.getContexts().map((c) => c.name)).toEqual(['beta']);

    const e = (() => {
      try {
        ClusterClient.fromKubeconfig(text, { cluster: 'epsilon', context: 'epsilon' });
      } catch (x) {
        return x as KubeconfigError;
      }
    })();
    expect(e).toBeInstanceOf(KubeconfigError);
    expect(e?.message).toBe(
      'cluster "epsilon": load kubeconfig failed: context "epsilon" is not in the kubeconfig; available contexts: "alpha", "beta", "gamma", "delta"',
    );
  });

  it('refuses invalid YAML, insecure-skip-tls-verify and non-EKS exec plugins', () => {
    const good = kubeconfigFor('alpha');
    expect(() => ClusterClient.fromKubeconfig(`${good}\n  : : [`, { cluster: 'alpha' })).toThrow(
      /not valid YAML/,
    );
    const insecure = good.replace('server:', 'insecure-skip-tls-verify: true\n      server:');
    expect(() => ClusterClient.fromKubeconfig(insecure, { cluster: 'alpha' })).toThrow(
      /insecure-skip-tls-verify: true; fleetscope keeps TLS verification on/,
    );
    const exec = kubeconfigFor('alpha', { user: { exec: { command: 'kubelogin', args: ['get-token'] } } });
    expect(() => ClusterClient.fromKubeconfig(exec, { cluster: 'alpha' })).toThrow(
      /"kubelogin", which cannot work in Lambda/,
    );
  });

  it('replaces an "aws eks get-token" exec user with an in-process token', async () => {
    const seen: string[] = [];
    const eks: EksTokenProvider = {
      token: async (cluster, region) => {
        seen.push(`${cluster}@${region}`);
        return sim.cluster('alpha').token; // the simulator only knows its own tokens
      },
      invalidate: () => {},
    };
    const text = kubeconfigFor('alpha', {
      user: {
        exec: {
          command: 'aws',
          args: ['eks', 'get-token', '--cluster-name', 'alpha-eks', '--region', 'eu-west-1'],
        },
      },
    });
    const c = clientFor('alpha', { text, eksTokens: eks });
    const ns = await c.call('read kube-system', () => c.core.readNamespace({ name: 'kube-system' }));
    expect(ns.metadata?.uid).toBe(sim.cluster('alpha').kubeSystemUid);
    expect(seen).toEqual(['alpha-eks@eu-west-1']);
  });
});

describe('TLS', () => {
  it('fails with a clear TLS error when the kubeconfig CA does not match the server', async () => {
    const other = await createCertificates();
    const c = clientFor('alpha', {
      text: kubeconfigFor('alpha', { caData: Buffer.from(other.caPem).toString('base64') }),
    });
    const e = (await c
      .call('list nodes', () => c.core.listNode({ limit: 1 }))
      .catch((x) => x)) as ClusterAccessError;
    expect(e).toBeInstanceOf(ClusterAccessError);
    expect(e).toMatchObject({ kind: 'tls', retryable: false, cluster: 'alpha', operation: 'list nodes' });
    expect(e.message).toMatch(/^cluster "alpha": list nodes failed: TLS verification failed: /);
    expect(e.message).toContain('certificate-authority-data');
    expect(c.stats().retries).toBe(0);
  });
});

describe('pagination', () => {
  it('gathers every item of a large list with one request per page', async () => {
    const c = clientFor('alpha');
    sim.cluster('alpha').resetStats();
    const nodes = await c.listAll<V1Node>('list nodes', (page) => c.core.listNode(page));
    expect(nodes).toHaveLength(BIG_NODES);
    expect(new Set(nodes.map((n) => n.metadata?.name)).size).toBe(BIG_NODES);
    const pages = Math.ceil(BIG_NODES / 500);
    expect(c.stats().requests).toBe(pages);
    expect(c.stats().byOperation['list nodes']).toBe(pages);

    expect(sim.cluster('alpha').stats().byMethodAndKind['GET nodes']).toBe(pages);

    const small = await c.listAll<V1Node>('list nodes', (page) => c.core.listNode(page), { pageSize: 100 });
    expect(small).toHaveLength(BIG_NODES);
    expect(c.stats().requests).toBe(pages + Math.ceil(BIG_NODES / 100));
  });

  it('restarts the list once when its continue token has expired (410 Expired)', async () => {
    const c = clientFor('alpha');
    const a = sim.cluster('alpha');
    let compacted = false;
    const nodes = await c.listAll<V1Node>('list nodes', async (page) => {
      if (page._continue && !compacted) {
        // history moves on and is compacted between two pages, as etcd does after ~5 minutes
        compacted = true;
        const first = a.store.list('nodes')[0] as V1Node;
        a.store.put('nodes', {
          ...first,
          metadata: { ...first.metadata, labels: { ...first.metadata?.labels, touched: 'yes' } },
        });
        sim.state('alpha').store.compact();
      }
      return c.core.listNode(page);
    });
    expect(nodes).toHaveLength(BIG_NODES);
    const pages = Math.ceil(BIG_NODES / 500);
    // one page, one 410, then the whole list again
    expect(c.stats().requests).toBe(1 + 1 + pages);
  });
});

describe('metrics.k8s.io', () => {
  beforeAll(() => {
    // metrics-server needs two scrapes (15 s apart) after a pod starts before it reports it
    for (let i = 0; i < 6; i++) sim.clock.advance(15_000);
  });

  it('lists NodeMetrics and PodMetrics with label selectors', async () => {
    const c = clientFor('gamma');
    const all = await c.listNodeMetrics();
    expect(all).toHaveLength(3);
    const host = all[0]!.metadata.name;
    const one = await c.listNodeMetrics({ labelSelector: `kubernetes.io/hostname=${host}` });
    expect(one.map((m) => m.metadata.name)).toEqual([host]);
    const selector = 'app.kubernetes.io/name=agent';
    const running = await c.listAll('list pods', (page) =>
      c.core.listNamespacedPod({ namespace: 'kube-system', labelSelector: selector, ...page }),
    );
    expect(running.length).toBeGreaterThan(0);
    const pods = await c.listPodMetrics({ namespace: 'kube-system', labelSelector: selector });
    expect(pods.map((p) => p.metadata.name).sort()).toEqual(running.map((p) => p.metadata?.name).sort());
    expect(pods[0]!.containers[0]!.usage.cpu).toMatch(/^\d+n$/);
    expect(await c.listPodMetrics({ labelSelector: 'app.kubernetes.io/name=nothing' })).toEqual([]);
  });

  it('reports a cluster without metrics-server as a clear 404', async () => {
    const c = clientFor('delta');
    const e = (await c.listNodeMetrics().catch((x) => x)) as ClusterAccessError;
    expect(e).toMatchObject({
      cluster: 'delta',
      operation: 'list node metrics',
      status: 404,
      retryable: false,
    });
  });
});

describe('patches', () => {
  it('sends strategic-merge, merge and JSON patches with their content types', async () => {
    const c = clientFor('beta');
    const name = (await c.call('list nodes', () => c.core.listNode({ limit: 1 }))).items[0]!.metadata!.name!;
    const label = (v: string) => ({ metadata: { labels: { 'fleetscope.io/probe': v } } });
    const smp = await c.patch('label node', 'strategic-merge', (o) =>
      c.core.patchNode({ name, body: label('smp') }, o),
    );
    expect(smp.metadata?.labels?.['fleetscope.io/probe']).toBe('smp');
    const merge = await c.patch('label node', 'merge', (o) =>
      c.core.patchNode({ name, body: label('merge') }, o),
    );
    expect(merge.metadata?.labels?.['fleetscope.io/probe']).toBe('merge');
    const json = await c.patch('label node', 'json', (o) =>
      c.core.patchNode(
        { name, body: [{ op: 'replace', path: '/metadata/labels/fleetscope.io~1probe', value: 'json' }] },
        o,
      ),
    );
    expect(json.metadata?.labels?.['fleetscope.io/probe']).toBe('json');
    expect(c.stats().byOperation['label node']).toBe(3);
  });
});

describe('retries', () => {
  it('retries a 429 after waiting at least Retry-After', async () => {
    const sent: number[] = [];
    const c = clientFor('beta', { onRequest: () => sent.push(performance.now()) });
    sim.faults.inject({
      cluster: 'beta',
      match: { kind: 'nodes' },
      fault: { type: 'status', code: 429, retryAfterSeconds: 1 },
      times: 1,
    });
    const nodes = await c.call('list nodes', () => c.core.listNode());
    expect(nodes.items).toHaveLength(3);
    expect(c.stats()).toMatchObject({ requests: 2, retries: 1 });
    expect(sent).toHaveLength(2);
    expect(sent[1]! - sent[0]!).toBeGreaterThanOrEqual(1000);
  });

  it('gives up on a 500 storm after the retry budget, naming the cluster and the operation', async () => {
    const c = clientFor('beta', { retry: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 40 } });
    sim.faults.inject({ cluster: 'beta', match: { kind: 'nodes' }, fault: { type: 'status', code: 500 } });
    const e = (await c.call('list nodes', () => c.core.listNode()).catch((x) => x)) as ClusterAccessError;
    expect(e).toBeInstanceOf(ClusterAccessError);
    expect(e).toMatchObject({
      cluster: 'beta',
      operation: 'list nodes',
      status: 500,
      attempts: 3,
      retryable: true,
    });
    expect(e.message).toMatch(/^cluster "beta": list nodes failed: HTTP 500 /);
    expect(e.message).toContain('retry budget of 3 attempts');
    expect(c.stats().requests).toBe(3);
  });

  it('retries a reset connection and succeeds', async () => {
    const c = clientFor('beta');
    sim.faults.inject({ cluster: 'beta', match: { kind: 'nodes' }, fault: { type: 'reset' }, times: 1 });
    const nodes = await c.call('list nodes', () => c.core.listNode());
    expect(nodes.items).toHaveLength(3);
    expect(c.stats()).toMatchObject({ requests: 2, retries: 1 });
  });
});

describe('timeouts', () => {
  it('times out a hung cluster while a healthy one answers in parallel', async () => {
    const hung = clientFor('alpha', { timeoutMs: 400 });
    const healthy = clientFor('beta', { timeoutMs: 400 });
    sim.faults.inject({ cluster: 'alpha', fault: { type: 'hang' } });
    const settled: string[] = [];
    const [h, ok] = await Promise.allSettled([
      hung.call('list nodes', () => hung.core.listNode({ limit: 10 })).finally(() => settled.push('alpha')),
      healthy.call('list nodes', () => healthy.core.listNode()).finally(() => settled.push('beta')),
    ]);
    expect(ok.status).toBe('fulfilled');
    expect(settled).toEqual(['beta', 'alpha']);
    expect(h.status).toBe('rejected');
    const e = (h as PromiseRejectedResult).reason as ClusterAccessError;
    expect(e).toBeInstanceOf(ClusterAccessError);
    expect(e).toMatchObject({ kind: 'timeout', cluster: 'alpha', operation: 'list nodes' });
    expect(e.message).toMatch(/^cluster "alpha": list nodes failed: timed out: .*400 ms/);
  });
});

describe('connector', () => {
  it('caches one client per cluster and drops it on 401 so a rotated kubeconfig is picked up', async () => {
    const file = path.join(dir, 'alpha.yaml');
    writeFileSync(file, kubeconfigFor('alpha', { token: 'revoked-token-000' }));
    const connector = new ClusterConnector({
      source: new FileKubeconfigSource({ ttlSeconds: 300 }),
      secretPrefix: 'fleetscope/clusters/',
      ttlSeconds: 300,
      client: { timeoutMs: 2_000 },
    });
    const ref = { kind: 'file' as const, path: file };
    const first = await connector.get('alpha', ref);
    expect(await connector.get('alpha', ref)).toBe(first);

    // the secret is rotated, but the cached (TTL 300 s) kubeconfig still holds the old token
    writeFileSync(file, kubeconfigFor('alpha'));
    const e = (await first
      .call('list nodes', () => first.core.listNode({ limit: 1 }))
      .catch((x) => x)) as ClusterAccessError;
    expect(e).toMatchObject({ status: 401, reason: 'Unauthorized', cluster: 'alpha' });
    expect(connector.isCached('alpha')).toBe(false);

    const second = await connector.get('alpha', ref);
    expect(second).not.toBe(first);
    const nodes = await second.call('list nodes', () => second.core.listNode({ limit: 1 }));
    expect(nodes.items).toHaveLength(1);
    expect(connector.stats()).toMatchObject({
      clientsBuilt: 2,
      kubeconfigLoads: 2,
      invalidations: 1,
      requests: 2,
    });
    await connector.close();
  });
});
