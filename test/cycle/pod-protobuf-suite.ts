/**
 * Pods read as Kubernetes protobuf give the same views as the same pods read as JSON, page for page,
 * over every field a view reads, on the real kube-apiserver (pod-protobuf.real.test.ts, the judge of the
 * field numbers and of what Go writes). The simulator's answers: test/sim/protobuf-list.test.ts.
 */
import https from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { podListFromProtobuf } from '../../shared/cycle/pod-protobuf.js';
import { type PodView, podView } from '../../shared/cycle/views.js';
import type { PodObject } from '../../shared/cycle/wire.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import { ClusterAccessError } from '../../shared/k8s/errors.js';
import { isProtobuf, PROTOBUF_OR_JSON, statusText } from '../../shared/k8s/protobuf.js';
import { RawReader } from '../../shared/k8s/raw-reader.js';

const NS = 'pod-protobuf';
const T0 = '2026-11-20T10:00:00Z';
const T1 = '2026-11-20T10:05:07Z';
const q = (cpu: string, memory: string) => ({ cpu, memory });

/** Pods that between them set every field a view reads (wire.ts), with the status a kubelet would write. */
function fixtures(): { pod: Record<string, unknown>; status?: Record<string, unknown> }[] {
  const owner = {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    name: 'agent',
    uid: '0a7e4c36-1111-4b7a-9d0e-2f2f2f2f2f2f',
    controller: true,
  };
  const containers = [
    {
      name: 'main',
      image: 'pause',
      resources: { requests: q('100m', '128Mi'), limits: { memory: '512Mi' } },
    },
    { name: 'side', image: 'pause', resources: { requests: q('20m', '32Mi') } },
  ];
  const running = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    image: 'pause',
    imageID: '',
    ready: true,
    restartCount: 0,
    state: { running: { startedAt: T0 } },
    ...extra,
  });
  return [
    {
      pod: {
        metadata: {
          name: 'ds-a',
          labels: { app: 'agent', 'fleetscope.io/balloon': 'true' },
          annotations: { 'fleetscope.io/recommendation': '{"source":"node","containers":{}}', other: 'x' },
          ownerReferences: [owner],
        },
        spec: {
          nodeName: 'node-a',
          containers,
          tolerations: [
            { operator: 'Exists' },
            { key: 'k', operator: 'Equal', value: 'v', effect: 'NoExecute', tolerationSeconds: 30 },
          ],
        },
      },
      status: {
        phase: 'Running',
        startTime: T0,
        conditions: [
          { type: 'Ready', status: 'True', lastTransitionTime: T0 },
          {
            type: 'PodResizePending',
            status: 'True',
            reason: 'Deferred',
            message: 'not enough cpu',
            observedGeneration: 1,
            lastTransitionTime: T1,
          },
          { type: 'PodResizeInProgress', status: 'True', lastTransitionTime: T1 },
          { type: 'PodResizePreemptionDisabled', status: 'True', lastTransitionTime: T1 },
        ],
        containerStatuses: [
          running('main', {
            restartCount: 3,
            allocatedResources: q('100m', '128Mi'),
            resources: { requests: q('90m', '128Mi'), limits: { memory: '512Mi' } },
            lastState: { terminated: { exitCode: 137, reason: 'OOMKilled', startedAt: T0, finishedAt: T1 } },
          }),
          running('side', {
            allocatedResources: q('20m', '32Mi'),
            resources: { requests: q('20m', '32Mi') },
          }),
        ],
      },
    },
    {
      // Not bound: its selector, tolerations, priority and nominated node are what a view keeps.
      pod: {
        metadata: { name: 'pending-b', labels: { app: 'web' } },
        spec: {
          priorityClassName: 'pod-protobuf-high',
          nodeSelector: { pool: 'gpu', zone: 'a' },
          tolerations: [{ key: 'gpu', operator: 'Exists', effect: 'NoSchedule' }],
          // Where it may land, and whose it is to place (balloons' pending demand, issue 28).
          schedulerName: 'volcano',
          schedulingGates: [{ name: 'example.com/quota' }],
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [
                  { matchExpressions: [{ key: 'pool', operator: 'In', values: ['gpu', 'tpu'] }] },
                  { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-b'] }] },
                ],
              },
            },
          },
          containers: [{ name: 'web', image: 'pause', resources: { requests: q('2', '4Gi') } }],
        },
      },
      status: {
        phase: 'Pending',
        nominatedNodeName: 'node-b',
        conditions: [
          {
            type: 'PodScheduled',
            status: 'False',
            reason: 'Unschedulable',
            message: '0/3 nodes are available: 3 Insufficient cpu.',
            lastTransitionTime: T0,
          },
        ],
      },
    },
    {
      // A sidecar and a plain init container, and a RuntimeClass's overhead.
      pod: {
        metadata: {
          name: 'init-c',
          ownerReferences: [{ ...owner, name: 'other', uid: '0a7e4c36-2222-4b7a-9d0e-2f2f2f2f2f2f' }],
        },
        spec: {
          nodeName: 'node-c',
          runtimeClassName: 'pod-protobuf-kata',
          initContainers: [
            {
              name: 'proxy',
              image: 'pause',
              restartPolicy: 'Always',
              resources: { requests: q('50m', '64Mi') },
            },
            { name: 'setup', image: 'pause', resources: { requests: q('1', '1Gi') } },
          ],
          containers: [{ name: 'app', image: 'pause', resources: { requests: q('250m', '256Mi') } }],
        },
      },
      status: {
        phase: 'Running',
        startTime: T1,
        initContainerStatuses: [
          running('proxy', {
            allocatedResources: q('50m', '64Mi'),
            resources: { requests: q('50m', '64Mi') },
          }),
          {
            name: 'setup',
            image: 'pause',
            imageID: '',
            ready: false,
            restartCount: 0,
            state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: T0, finishedAt: T0 } },
          },
        ],
        containerStatuses: [
          running('app', {
            state: { terminated: { exitCode: 137, reason: 'OOMKilled', startedAt: T0, finishedAt: T1 } },
          }),
        ],
      },
    },
    {
      // Terminating (a finalizer holds it), no status written, no owner.
      pod: {
        metadata: { name: 'gone-d', finalizers: ['example.com/hold'] },
        spec: { nodeName: 'node-a', containers: [{ name: 'x', image: 'pause' }] },
      },
    },
  ];
}

export function podProtobufSuite(target: () => { kubeconfig: string; cluster: string }): void {
  let client: ClusterClient;
  let reader: RawReader;
  beforeAll(async () => {
    const t = target();
    client = ClusterClient.fromKubeconfig(t.kubeconfig, { cluster: t.cluster });
    reader = new RawReader(client);
    const put = (path: string, body: unknown) => reader.send('create', 'POST', path, body);
    await put('/api/v1/namespaces', { metadata: { name: NS } });
    await put('/api/v1/namespaces/pod-protobuf/serviceaccounts', { metadata: { name: 'default' } }).catch(
      () => {},
    );
    await put('/apis/scheduling.k8s.io/v1/priorityclasses', {
      metadata: { name: 'pod-protobuf-high' },
      value: 1000,
    });
    await put('/apis/node.k8s.io/v1/runtimeclasses', {
      metadata: { name: 'pod-protobuf-kata' },
      handler: 'kata',
      overhead: { podFixed: q('250m', '160Mi') },
    });
    for (const f of fixtures()) {
      const created = await put(`/api/v1/namespaces/${NS}/pods`, {
        ...f.pod,
        metadata: { ...(f.pod.metadata as object), namespace: NS },
      });
      const name = (created as PodObject).metadata?.name as string;
      if (f.status)
        await reader.send('status', 'PUT', `/api/v1/namespaces/${NS}/pods/${name}/status`, {
          ...(created as object),
          status: f.status,
        });
    }
    await reader.send('delete', 'DELETE', `/api/v1/namespaces/${NS}/pods/gone-d`, {});
  }, 120_000);
  afterAll(async () => {
    await reader
      ?.send(
        'unhold',
        'PATCH',
        `/api/v1/namespaces/${NS}/pods/gone-d`,
        { metadata: { finalizers: null } },
        'application/merge-patch+json',
      )
      .catch(() => {});
    await client?.close();
  });

  const views = async (protobuf: boolean) => {
    const pages: PodView[][] = [];
    let decoded = 0;
    const owners = new Map();
    const { resourceVersion } = await reader.list<PodObject>(
      'list pods',
      `/api/v1/namespaces/${NS}/pods`,
      {},
      (items) => pages.push(items.map((p) => podView(p, owners) as PodView)),
      {
        pageSize: 3,
        ...(protobuf
          ? {
              protobuf: (bytes: Uint8Array) => {
                decoded++;
                return podListFromProtobuf(bytes);
              },
            }
          : {}),
      },
    );
    return { pages, decoded, resourceVersion };
  };

  it('reads every page as protobuf, and each view equals the one read from JSON', async () => {
    const json = await views(false);
    const pb = await views(true);
    expect(json.pages.flat().map((v) => v.name)).toEqual(['ds-a', 'gone-d', 'init-c', 'pending-b']);
    // Two pages of at most 3, each answered in protobuf (not a JSON fallback).
    expect(pb.decoded).toBe(2);
    expect(pb.pages).toEqual(json.pages);
    expect(pb.resourceVersion).toBe(json.resourceVersion);
    // The fields the fixtures set are there (a view equal because both lost them would prove nothing).
    const [a, d, c, b] = pb.pages.flat() as [PodView, PodView, PodView, PodView];
    expect(a).toMatchObject({
      balloon: true,
      node: 'node-a',
      owner: { kind: 'DaemonSet', name: 'agent' },
      resizePreemptionDisabled: true,
    });
    expect(a.annotation).toContain('"source":"node"');
    expect(a.containers[0]).toMatchObject({
      reqCpu: 100,
      limMem: 512 * 2 ** 20,
      allocCpu: 100,
      actCpu: 90,
      hasActual: true,
      oomAt: Date.parse(T1),
      oomRanMs: 307_000,
    });
    expect(a.resize.state).not.toBe('none');
    expect(b).toMatchObject({
      node: '',
      priority: 1000,
      nominated: 'node-b',
      nodeSelector: { pool: 'gpu', zone: 'a' },
      phase: 'Pending',
    });
    expect(b.tolerations).toContainEqual({ key: 'gpu', operator: 'Exists', effect: 'NoSchedule' });
    expect(b.preemptionPolicy).toBe('PreemptLowerPriority');
    expect(b.waiting).toEqual({
      schedulerName: 'volcano',
      gated: true,
      terms: [
        { matchExpressions: [{ key: 'pool', operator: 'In', values: ['gpu', 'tpu'] }], matchFields: [] },
        { matchExpressions: [], matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-b'] }] },
      ],
      forResources: true,
    });
    // The init peak (setup beside the sidecar) over the running containers, plus the overhead.
    expect(c.occupancy).toEqual({ cpu: 1000 + 50 + 250, memory: 2 ** 30 + 64 * 2 ** 20 + 160 * 2 ** 20 });
    expect(c.containers[0]?.oomAt).toBe(Date.parse(T1));
    expect(d.terminating).toBe(true);
  });

  it('an error answered in protobuf reads as the same error as JSON', async () => {
    // A selector the server cannot parse: the pods' own handler refuses it, in the format asked for.
    const BAD = { labelSelector: 'app in (a' };
    const missing = (protobuf: boolean) => listError(reader, `/api/v1/namespaces/${NS}/pods`, BAD, protobuf);
    const [j, p] = [await missing(false), await missing(true)];
    // The server did answer in protobuf (else statusText was never exercised).
    const answer = await rawGet(
      target().kubeconfig,
      `/api/v1/namespaces/${NS}/pods?${new URLSearchParams(BAD)}`,
    );
    expect(answer.status).toBe(400);
    expect(isProtobuf(answer.type)).toBe(true);
    expect(JSON.parse(statusText(answer.body))).toMatchObject({ code: 400, reason: 'BadRequest' });
    expect(j).toBeInstanceOf(ClusterAccessError);
    expect(p).toBeInstanceOf(ClusterAccessError);
    expect((p as ClusterAccessError).status).toBe((j as ClusterAccessError).status);
    expect((p as ClusterAccessError).message).toBe((j as ClusterAccessError).message);
  });
}

/** One GET asking for protobuf, as the reader asks: its status, content type and body. */
async function rawGet(kubeconfig: string, path: string) {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfig);
  const opts: https.RequestOptions & { headers?: Record<string, string> } = { headers: {} };
  await kc.applyToHTTPSOptions(opts);
  return new Promise<{ status: number; type: string; body: Buffer }>((resolve, reject) => {
    const req = https.request(
      new URL(path, kc.getCurrentCluster()?.server),
      { ...opts, headers: { ...opts.headers, accept: PROTOBUF_OR_JSON } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            type: String(res.headers['content-type']),
            body: Buffer.concat(chunks),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** How a list fails, read as JSON or as protobuf (undefined if it does not fail). */
export function listError(
  reader: RawReader,
  path: string,
  query: Record<string, string>,
  protobuf: boolean,
): Promise<unknown> {
  return reader
    .list<PodObject>('list pods', path, query, () => {}, {
      pageSize: 3,
      ...(protobuf ? { protobuf: podListFromProtobuf } : {}),
    })
    .then(
      () => undefined,
      (e: unknown) => e,
    );
}
