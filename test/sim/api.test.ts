/** Core API behaviour over real HTTPS with @kubernetes/client-node: auth, TLS, lists, selectors, writes. */
import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  PatchStrategy,
  SchedulingV1Api,
  setHeaderOptions,
  type V1Pod,
  Watch,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import { kubeConfigFor, raw } from './helpers.js';

let sim: Simulator;
let core: CoreV1Api;
let apps: AppsV1Api;

const DAEMONSETS = [
  {
    name: 'agent',
    containers: [
      { name: 'agent', requests: { cpu: '50m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } },
      { name: 'sidecar', requests: { cpu: '10m', memory: '16Mi' } },
    ],
  },
  {
    name: 'everywhere',
    namespace: 'monitoring',
    tolerations: [{ operator: 'Exists' }],
    containers: [{ name: 'e', requests: { cpu: '5m' } }],
  },
];

beforeAll(async () => {
  sim = await startSimulator({
    clusters: [
      { name: 'alpha', nodes: 23, seed: 7, daemonSets: DAEMONSETS },
      { name: 'old', nodes: 2, resizeSubresource: false, kubernetesVersion: '1.31.4' },
    ],
    now: Date.parse('2026-03-02T12:00:00Z'),
  });
  const kc = kubeConfigFor(sim, 'alpha');
  core = kc.makeApiClient(CoreV1Api);
  apps = kc.makeApiClient(AppsV1Api);
});
afterAll(async () => {
  await sim?.stop();
});

const status = (e: unknown) => {
  expect(e).toBeInstanceOf(ApiException);
  const err = e as ApiException<string>;
  return { code: err.code, body: typeof err.body === 'string' && err.body ? JSON.parse(err.body) : err.body };
};

// biome-ignore lint/suspicious/noExplicitAny: a Status body, inspected field by field
async function failure(p: Promise<unknown>): Promise<{ code: number; body: any }> {
  try {
    await p;
  } catch (e) {
    return status(e);
  }
  throw new Error('expected the request to fail');
}

describe('identity, authentication and TLS', () => {
  it('serves kube-system with a UID that is stable for a cluster name and seed', async () => {
    const ns = await core.readNamespace({ name: 'kube-system' });
    expect(ns.metadata?.uid).toBe(sim.cluster('alpha').kubeSystemUid);
    expect(ns.metadata?.uid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const again = await startSimulator({ clusters: [{ name: 'alpha', nodes: 1, seed: 7 }] });
    try {
      expect(again.cluster('alpha').kubeSystemUid).toBe(ns.metadata?.uid);
    } finally {
      await again.stop();
    }
  });

  it('answers 401 with a Status without the token, and with a wrong one', async () => {
    const c = sim.cluster('alpha');
    for (const token of [null, 'wrong']) {
      const r = await raw(c, 'GET', '/api/v1/nodes', { token });
      expect(r.status).toBe(401);
      expect(r.json).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'Unauthorized',
        reason: 'Unauthorized',
        code: 401,
      });
    }
  });

  it('keeps TLS verification on: a client without the CA cannot connect', async () => {
    const c = sim.cluster('alpha');
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'x', server: c.server, skipTLSVerify: false }],
      users: [{ name: 'x', token: c.token }],
      contexts: [{ name: 'x', cluster: 'x', user: 'x' }],
      currentContext: 'x',
    });
    const err = await kc
      .makeApiClient(CoreV1Api)
      .listNode()
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeDefined();
    expect(err).not.toBeInstanceOf(ApiException);
    expect(String((err as Error & { cause?: unknown }).cause ?? err)).toMatch(
      /certificate|self.signed|issuer/i,
    );
  });

  it('writes a kubeconfig with one context per cluster', () => {
    const kc = new KubeConfig();
    kc.loadFromString(sim.kubeconfig());
    expect(kc.getContexts().map((x) => x.name)).toEqual(['alpha', 'old']);
    expect(kc.getCluster('old')?.caData).toBe(Buffer.from(sim.cluster('old').caData).toString('base64'));
    expect(kc.getUser('alpha')?.token).toBe(sim.cluster('alpha').token);
  });
});

describe('nodes', () => {
  it('has nodes of varied sizes with the labels fleetscope reads, some of them tainted', async () => {
    const nodes = (await core.listNode()).items;
    expect(nodes).toHaveLength(23);
    const types = new Set(nodes.map((n) => n.metadata?.labels?.['node.kubernetes.io/instance-type']));
    expect(types.size).toBeGreaterThanOrEqual(3);
    const cpus = new Set(nodes.map((n) => n.status?.allocatable?.cpu));
    expect(cpus.size).toBeGreaterThanOrEqual(3);
    for (const n of nodes) {
      expect(n.metadata?.labels?.['kubernetes.io/hostname']).toBe(n.metadata?.name);
      expect(n.metadata?.labels?.['topology.kubernetes.io/zone']).toMatch(/^us-east-1[abc]$/);
      expect(n.status?.capacity?.memory).toMatch(/^\d+(Ki|Mi|Gi)$/);
    }
    expect(nodes.some((n) => (n.spec?.taints ?? []).length > 0)).toBe(true);
  });

  it('returns a NotFound Status for a missing node', async () => {
    const { code, body } = await failure(core.readNode({ name: 'nope' }));
    expect(code).toBe(404);
    expect(body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'nodes "nope" not found',
      reason: 'NotFound',
      details: { name: 'nope', kind: 'nodes' },
      code: 404,
    });
  });
});

describe('lists', () => {
  it('pages with limit/continue and counts remainingItemCount down', async () => {
    const names: string[] = [];
    let cont: string | undefined;
    const remaining: (number | undefined)[] = [];
    let rv: string | undefined;
    do {
      const page = await core.listNode({ limit: 5, _continue: cont });
      names.push(...page.items.map((n) => n.metadata?.name as string));
      remaining.push(page.metadata?.remainingItemCount);
      rv ??= page.metadata?.resourceVersion;
      expect(page.metadata?.resourceVersion).toBe(rv);
      cont = page.metadata?._continue;
    } while (cont);
    expect(names).toHaveLength(23);
    expect([...names].sort()).toEqual(names);
    expect(remaining).toEqual([18, 13, 8, 3, undefined]);
  });

  it('keeps a consistent snapshot across pages while objects change', async () => {
    const first = await core.listNamespacedPod({ namespace: 'kube-system', limit: 10 });
    const victim = (await core.listNamespacedPod({ namespace: 'kube-system' })).items.at(-1) as V1Pod;
    await core.deleteNamespacedPod({ name: victim.metadata?.name as string, namespace: 'kube-system' });
    let cont = first.metadata?._continue;
    const rest: string[] = [];
    while (cont) {
      const page = await core.listNamespacedPod({ namespace: 'kube-system', limit: 10, _continue: cont });
      rest.push(...page.items.map((p) => p.metadata?.name as string));
      cont = page.metadata?._continue;
    }
    // The deleted pod is still in the snapshot; its replacement (created after) is not.
    expect(rest).toContain(victim.metadata?.name);
    expect(first.items.length + rest.length).toBe(22);
  });

  it('answers 410 Expired with a fresh token for a continue token from before the retained history', async () => {
    const token = Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: 1, start: 'a\u0000' })).toString(
      'base64url',
    );
    const { code, body } = await failure(core.listNode({ limit: 5, _continue: token }));
    expect(code).toBe(410);
    expect(body.reason).toBe('Expired');
    expect(body.message).toMatch(/^The provided continue parameter is too old/);
    expect(JSON.parse(Buffer.from(body.metadata.continue, 'base64url').toString()).rv).toBe(-1);
  });

  it('filters with label selectors (=, ==, !=, in, notin, exists, !exists)', async () => {
    const count = async (labelSelector: string) =>
      (await core.listPodForAllNamespaces({ labelSelector })).items.length;
    const agent = await count('app.kubernetes.io/name=agent');
    const everywhere = await count('app.kubernetes.io/name==everywhere');
    expect(everywhere).toBe(23);
    expect(agent).toBeGreaterThan(15);
    expect(agent).toBeLessThan(23);
    expect(await count('app.kubernetes.io/name!=agent')).toBe(everywhere);
    expect(await count('app.kubernetes.io/name in (agent,everywhere)')).toBe(agent + everywhere);
    expect(await count('app.kubernetes.io/name notin (agent)')).toBe(everywhere);
    expect(await count('controller-revision-hash')).toBe(agent + everywhere);
    expect(await count('!controller-revision-hash')).toBe(0);
    const { code, body } = await failure(core.listPodForAllNamespaces({ labelSelector: 'a in (b' }));
    expect(code).toBe(400);
    expect(body.reason).toBe('BadRequest');
  });

  it('filters with field selectors, and omits remainingItemCount when selecting', async () => {
    const node = (await core.listNode()).items[0]?.metadata?.name as string;
    const onNode = await core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${node}` });
    expect(onNode.items.length).toBeGreaterThanOrEqual(1);
    expect(onNode.items.every((p) => p.spec?.nodeName === node)).toBe(true);
    const running = await core.listPodForAllNamespaces({ fieldSelector: 'status.phase=Running', limit: 3 });
    expect(running.items).toHaveLength(3);
    expect(running.metadata?._continue).toBeTruthy();
    expect(running.metadata?.remainingItemCount).toBeUndefined();
    const byName = await core.listNode({ fieldSelector: `metadata.name=${node}` });
    expect(byName.items.map((n) => n.metadata?.name)).toEqual([node]);
    const ns = await core.listPodForAllNamespaces({ fieldSelector: 'metadata.namespace=monitoring' });
    expect(ns.items.length).toBe(23);
    const { code, body } = await failure(core.listPodForAllNamespaces({ fieldSelector: 'spec.foo=bar' }));
    expect(code).toBe(400);
    expect(body.message).toBe('field label not supported: spec.foo');
  });
});

describe('writes', () => {
  const pod = (name: string): V1Pod => ({
    metadata: { name, labels: { app: 'w' } },
    spec: {
      containers: [
        { name: 'c', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '100m' } } },
      ],
    },
  });

  it('creates (201), refuses duplicates (409 AlreadyExists) and missing namespaces (404)', async () => {
    const created = await core.createNamespacedPod({ namespace: 'default', body: pod('w1') });
    expect(created.metadata?.uid).toBeTruthy();
    expect(created.status?.qosClass).toBe('Burstable');
    expect(created.spec?.serviceAccountName).toBe('default');
    const dup = await failure(core.createNamespacedPod({ namespace: 'default', body: pod('w1') }));
    expect(dup.code).toBe(409);
    expect(dup.body).toMatchObject({
      reason: 'AlreadyExists',
      message: 'pods "w1" already exists',
      details: { name: 'w1', kind: 'pods' },
    });
    const noNs = await failure(core.createNamespacedPod({ namespace: 'nope', body: pod('w2') }));
    expect(noNs.code).toBe(404);
    expect(noNs.body.message).toBe('namespaces "nope" not found');
  });

  it('rejects a PUT with a stale resourceVersion with 409 Conflict', async () => {
    const current = await core.readNamespacedPod({ name: 'w1', namespace: 'default' });
    const updated = await core.replaceNamespacedPod({
      name: 'w1',
      namespace: 'default',
      body: { ...current, metadata: { ...current.metadata, labels: { app: 'w', rev: '1' } } },
    });
    expect(Number(updated.metadata?.resourceVersion)).toBeGreaterThan(
      Number(current.metadata?.resourceVersion),
    );
    const stale = await failure(
      core.replaceNamespacedPod({
        name: 'w1',
        namespace: 'default',
        body: { ...current, metadata: { ...current.metadata, labels: { rev: 'x' } } },
      }),
    );
    expect(stale.code).toBe(409);
    expect(stale.body).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message:
        'Operation cannot be fulfilled on pods "w1": the object has been modified; please apply your changes to the latest version and try again',
      reason: 'Conflict',
      details: { name: 'w1', kind: 'pods' },
      code: 409,
    });
  });

  it('applies strategic merge (containers by name), merge and JSON patches; 415 for other types', async () => {
    const smp = await core.patchNamespacedPod(
      {
        name: 'w1',
        namespace: 'default',
        body: {
          metadata: { labels: { smp: 'yes' } },
          spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.9' }] },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    expect(smp.spec?.containers).toHaveLength(1);
    expect(smp.spec?.containers[0]?.image).toBe('registry.k8s.io/pause:3.9');
    expect(smp.spec?.containers[0]?.resources?.requests?.cpu).toBe('100m');
    const merge = await core.patchNamespacedPod(
      { name: 'w1', namespace: 'default', body: { metadata: { labels: { smp: null, merge: 'yes' } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(merge.metadata?.labels).toMatchObject({ app: 'w', merge: 'yes' });
    expect(merge.metadata?.labels?.smp).toBeUndefined();
    const json = await core.patchNamespacedPod({
      name: 'w1',
      namespace: 'default',
      body: [{ op: 'add', path: '/metadata/labels/json', value: 'yes' }],
    });
    expect(json.metadata?.labels?.json).toBe('yes');
    const r = await raw(sim.cluster('alpha'), 'PATCH', '/api/v1/namespaces/default/pods/w1', {
      body: '{}',
      contentType: 'application/x-yaml',
    });
    expect(r.status).toBe(415);
    expect(r.json.reason).toBe('UnsupportedMediaType');
  });

  it('refuses resource changes through the main pod endpoint (422, as on 1.32+)', async () => {
    const { code, body } = await failure(
      core.patchNamespacedPod(
        {
          name: 'w1',
          namespace: 'default',
          body: { spec: { containers: [{ name: 'c', resources: { requests: { cpu: '200m' } } }] } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      ),
    );
    expect(code).toBe(422);
    expect(body.details.causes[0].message).toMatch(
      /^Forbidden: pod updates may not change fields other than/,
    );
  });

  it('supports dryRun without persisting', async () => {
    const r = await raw(sim.cluster('alpha'), 'POST', '/api/v1/namespaces/default/pods?dryRun=All', {
      body: { apiVersion: 'v1', kind: 'Pod', ...pod('dry') },
    });
    // Created, as a real server answers a dry-run create too.
    expect(r.status).toBe(201);
    expect(r.json.metadata.name).toBe('dry');
    await expect(core.readNamespacedPod({ name: 'dry', namespace: 'default' })).rejects.toBeInstanceOf(
      ApiException,
    );
  });

  it('serves the built-in priority classes and rejects user values above 1e9', async () => {
    const sched = kubeConfigFor(sim, 'alpha').makeApiClient(SchedulingV1Api);
    const list = await sched.listPriorityClass();
    expect(list.items.map((p) => [p.metadata?.name, p.value])).toEqual([
      ['system-cluster-critical', 2000000000],
      ['system-node-critical', 2000001000],
    ]);
    const { code, body } = await failure(
      sched.createPriorityClass({ body: { metadata: { name: 'big' }, value: 1_000_000_001 } }),
    );
    expect(code).toBe(422);
    expect(body.message).toBe(
      'PriorityClass.scheduling.k8s.io "big" is invalid: value: Forbidden: maximum allowed value of a user defined priority is 1000000000',
    );
  });

  it('has a default ServiceAccount in every namespace, new ones included', async () => {
    await core.createNamespace({ body: { metadata: { name: 'team-a' } } });
    const sa = await core.readNamespacedServiceAccount({ name: 'default', namespace: 'team-a' });
    expect(sa.metadata?.namespace).toBe('team-a');
    const ns = await core.readNamespace({ name: 'team-a' });
    expect(ns.metadata?.labels?.['kubernetes.io/metadata.name']).toBe('team-a');
  });
});

describe('DaemonSets', () => {
  it('runs one pod per tolerated node, owned by the DaemonSet', async () => {
    const nodes = (await core.listNode()).items;
    const untainted = nodes.filter((n) => !(n.spec?.taints ?? []).length).length;
    const ds = await apps.readNamespacedDaemonSet({ name: 'agent', namespace: 'kube-system' });
    expect(ds.status?.desiredNumberScheduled).toBe(untainted);
    expect(ds.status?.numberReady).toBe(untainted);
    const pods = (
      await core.listNamespacedPod({
        namespace: 'kube-system',
        labelSelector: 'app.kubernetes.io/name=agent',
      })
    ).items;
    expect(pods).toHaveLength(untainted);
    for (const p of pods) {
      expect(p.metadata?.ownerReferences?.[0]).toMatchObject({
        kind: 'DaemonSet',
        name: 'agent',
        uid: ds.metadata?.uid,
        controller: true,
      });
      expect(p.metadata?.name).toMatch(/^agent-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      expect(p.status?.phase).toBe('Running');
      expect(p.status?.containerStatuses?.map((c) => c.name)).toEqual(['agent', 'sidecar']);
      expect(p.status?.containerStatuses?.[0]?.resources?.requests?.cpu).toBe('50m');
    }
    expect(new Set(pods.map((p) => p.spec?.nodeName)).size).toBe(untainted);
  });

  it('recreates a deleted pod with a new name and uid on the same node', async () => {
    const pods = (await core.listNamespacedPod({ namespace: 'monitoring' })).items;
    const victim = pods[3] as V1Pod;
    await core.deleteNamespacedPod({ name: victim.metadata?.name as string, namespace: 'monitoring' });
    const after = await core.listNamespacedPod({
      namespace: 'monitoring',
      fieldSelector: `spec.nodeName=${victim.spec?.nodeName}`,
    });
    expect(after.items).toHaveLength(1);
    const replacement = after.items[0] as V1Pod;
    expect(replacement.metadata?.name).not.toBe(victim.metadata?.name);
    expect(replacement.metadata?.uid).not.toBe(victim.metadata?.uid);
    expect(replacement.status?.phase).toBe('Running');
    expect((await core.listNamespacedPod({ namespace: 'monitoring' })).items).toHaveLength(23);
  });

  it('creates pods for a DaemonSet created through the API, and removes them with it', async () => {
    await apps.createNamespacedDaemonSet({
      namespace: 'default',
      body: {
        metadata: { name: 'api-ds' },
        spec: {
          selector: { matchLabels: { app: 'api-ds' } },
          template: {
            metadata: { labels: { app: 'api-ds' } },
            spec: {
              containers: [{ name: 'x', image: 'registry.k8s.io/pause:3.10' }],
              nodeSelector: { 'topology.kubernetes.io/zone': 'us-east-1b' },
            },
          },
        },
      },
    });
    const nodes = (
      await core.listNode({ labelSelector: 'topology.kubernetes.io/zone=us-east-1b' })
    ).items.filter((n) => !(n.spec?.taints ?? []).length);
    const pods = await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=api-ds' });
    expect(pods.items).toHaveLength(nodes.length);
    const ds = await apps.readNamespacedDaemonSet({ name: 'api-ds', namespace: 'default' });
    expect(ds.status?.desiredNumberScheduled).toBe(nodes.length);
    await apps.deleteNamespacedDaemonSet({ name: 'api-ds', namespace: 'default' });
    expect(
      (await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=api-ds' })).items,
    ).toHaveLength(0);
  });

  it('with updateStrategy OnDelete, keeps pods on a template change and replaces only deleted ones', async () => {
    const body = (image: string) => ({
      metadata: { name: 'on-delete' },
      spec: {
        selector: { matchLabels: { app: 'on-delete' } },
        updateStrategy: { type: 'OnDelete' },
        template: {
          metadata: { labels: { app: 'on-delete' } },
          spec: {
            containers: [{ name: 'x', image }],
            nodeSelector: { 'topology.kubernetes.io/zone': 'us-east-1b' },
          },
        },
      },
    });
    await apps.createNamespacedDaemonSet({ namespace: 'default', body: body('registry.k8s.io/pause:3.9') });
    const list = async () =>
      (await core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=on-delete' })).items;
    const before = await list();
    expect(before.length).toBeGreaterThan(0);
    await apps.patchNamespacedDaemonSet(
      {
        name: 'on-delete',
        namespace: 'default',
        body: {
          spec: { template: { spec: { containers: [{ name: 'x', image: 'registry.k8s.io/pause:3.10' }] } } },
        },
      },
      (await import('../../shared/k8s/client.js')).patchOptions('strategic-merge'),
    );
    const kept = await list();
    expect(kept.map((p) => p.metadata?.uid).sort()).toEqual(before.map((p) => p.metadata?.uid).sort());
    const victim = kept[0]!;
    await core.deleteNamespacedPod({ name: victim.metadata!.name!, namespace: 'default' });
    const after = await list();
    const replacement = after.find((p) => !kept.some((k) => k.metadata?.uid === p.metadata?.uid));
    expect(replacement?.spec?.containers[0]?.image).toBe('registry.k8s.io/pause:3.10');
    expect(after.filter((p) => p.spec?.containers[0]?.image === 'registry.k8s.io/pause:3.9')).toHaveLength(
      kept.length - 1,
    );
    await apps.deleteNamespacedDaemonSet({ name: 'on-delete', namespace: 'default' });
  });

  it('schedules daemon pods onto a node added later', async () => {
    const store = sim.cluster('alpha').store;
    const template = store.list('nodes')[0];
    store.put('nodes', {
      ...template,
      metadata: {
        name: 'late-node',
        labels: { ...template.metadata.labels, 'kubernetes.io/hostname': 'late-node' },
      },
    });
    const pods = await core.listPodForAllNamespaces({ fieldSelector: 'spec.nodeName=late-node' });
    expect(pods.items.map((p) => p.metadata?.labels?.['app.kubernetes.io/name']).sort()).toEqual([
      'agent',
      'everywhere',
    ]);
  });
});

describe('discovery', () => {
  it('lists pods/resize with get, patch, update when the subresource is registered', async () => {
    const r = await raw(sim.cluster('alpha'), 'GET', '/api/v1');
    const resize = r.json.resources.find((x: { name: string }) => x.name === 'pods/resize');
    expect(resize).toEqual({
      name: 'pods/resize',
      singularName: '',
      namespaced: true,
      kind: 'Pod',
      verbs: ['get', 'patch', 'update'],
    });
  });

  it('answers 404 for pods/resize on a server without it, and leaves it out of discovery', async () => {
    const old = sim.cluster('old');
    const d = await raw(old, 'GET', '/api/v1');
    expect(d.json.resources.some((x: { name: string }) => x.name === 'pods/resize')).toBe(false);
    const pod = (await raw(old, 'GET', '/api/v1/pods')).json.items[0];
    const r = await raw(
      old,
      'PATCH',
      `/api/v1/namespaces/${pod?.metadata.namespace ?? 'default'}/pods/${pod?.metadata.name ?? 'x'}/resize`,
      {
        body: {},
        contentType: 'application/merge-patch+json',
      },
    );
    expect(r.status).toBe(404);
    expect(r.json).toMatchObject({
      reason: 'NotFound',
      message: 'the server could not find the requested resource',
    });
    expect((await raw(old, 'GET', '/version')).json.gitVersion).toBe('v1.31.4');
  });

  it('serves aggregated discovery when asked for it', async () => {
    const r = await raw(sim.cluster('alpha'), 'GET', '/apis', {
      accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json',
    });
    expect(r.headers['content-type']).toBe(
      'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
    );
    const apps = r.json.items.find((i: { metadata: { name: string } }) => i.metadata.name === 'apps');
    expect(apps.versions[0].resources.map((x: { resource: string }) => x.resource)).toContain('daemonsets');
    expect(
      r.json.items.some((i: { metadata: { name: string } }) => i.metadata.name === 'metrics.k8s.io'),
    ).toBe(true);
  });

  it('answers kubectl-style Table requests', async () => {
    const r = await raw(sim.cluster('alpha'), 'GET', '/api/v1/nodes?limit=2', {
      accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
    });
    expect(r.json.kind).toBe('Table');
    expect(r.json.columnDefinitions.map((c: { name: string }) => c.name).slice(0, 5)).toEqual([
      'Name',
      'Status',
      'Roles',
      'Age',
      'Version',
    ]);
    expect(r.json.rows).toHaveLength(2);
    expect(r.json.rows[0].object.kind).toBe('PartialObjectMetadata');
    expect(r.json.metadata.continue).toBeTruthy();
  });
});

describe('watch', () => {
  it('streams ADDED, MODIFIED and DELETED events (client-node Watch)', async () => {
    const events: string[] = [];
    const seen = new Promise<void>((resolve, reject) => {
      void new Watch(kubeConfigFor(sim, 'alpha'))
        .watch(
          '/api/v1/namespaces/default/configmaps',
          { labelSelector: 'watched=yes' },
          (phase, obj) => {
            events.push(`${phase} ${obj.metadata.name}`);
            if (phase === 'DELETED') resolve();
          },
          (err) => (err ? reject(err) : undefined),
        )
        .then((ctl) => seen.finally(() => ctl.abort()));
    });
    await new Promise((r) => setTimeout(r, 50));
    await core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'w', labels: { watched: 'yes' } }, data: { a: '1' } },
    });
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'other' } } });
    await core.patchNamespacedConfigMap({
      name: 'w',
      namespace: 'default',
      body: [{ op: 'replace', path: '/data/a', value: '2' }],
    });
    await core.deleteNamespacedConfigMap({ name: 'w', namespace: 'default' });
    await seen;
    expect(events).toEqual(['ADDED w', 'MODIFIED w', 'DELETED w']);
  });

  it('replays events since a resourceVersion and answers 410 in an ERROR event when it is too old', async () => {
    const c = sim.cluster('alpha');
    const list = await raw(c, 'GET', '/api/v1/namespaces/default/configmaps');
    await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'later' } } });
    const w = await raw(
      c,
      'GET',
      `/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1&resourceVersion=${list.json.metadata.resourceVersion}`,
    );
    const evs = w.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(evs.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(['ADDED later']);
    const old = await raw(
      c,
      'GET',
      '/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1&resourceVersion=1',
    );
    const err = JSON.parse(old.text.trim());
    expect(err.type).toBe('ERROR');
    expect(err.object).toMatchObject({ kind: 'Status', code: 410, reason: 'Expired' });
  });
});
