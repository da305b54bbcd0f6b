/**
 * Pod lists answered in Kubernetes protobuf (`Accept: application/vnd.kubernetes.protobuf,
 * application/json;q=0.9`), as kube-apiserver answers them: the views read from protobuf equal those read
 * from JSON page for page, every page really came as protobuf, large pages are gzip-compressed, errors
 * come back as a protobuf Status, and what the simulator has no protobuf for still answers JSON.
 */
import { request } from 'node:https';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterState } from '../../local/sim/cluster.js';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import { podListFromProtobuf } from '../../shared/cycle/pod-protobuf.js';
import { type PodView, podView } from '../../shared/cycle/views.js';
import type { PodObject } from '../../shared/cycle/wire.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import { ClusterAccessError } from '../../shared/k8s/errors.js';
import { PROTOBUF_MEDIA, PROTOBUF_OR_JSON, statusText, unwrap } from '../../shared/k8s/protobuf.js';
import { RawReader } from '../../shared/k8s/raw-reader.js';
import { listError } from '../cycle/pod-protobuf-suite.js';

const NAME = 'pb';
const NODES = 150;

let sim: Simulator & { state(name: string): ClusterState };
let client: ClusterClient;

beforeAll(async () => {
  sim = await startSimulator({
    clusters: [
      {
        name: NAME,
        nodes: NODES,
        seed: 11,
        daemonSets: [
          {
            name: 'agent',
            containers: [
              { name: 'main', requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
              { name: 'side', requests: { cpu: '10m', memory: '16Mi' } },
            ],
            tolerations: [{ operator: 'Exists' }],
            labels: { 'fleetscope.io/balloon': 'true' },
          },
          {
            name: 'logs',
            namespace: 'logging',
            containers: [{ name: 'fluent', requests: { cpu: '50m', memory: '64Mi' } }],
            priorityClassName: 'system-node-critical',
          },
        ],
      },
    ],
  });
  client = ClusterClient.fromKubeconfig(sim.kubeconfig(), { cluster: NAME, context: NAME });
}, 60_000);

afterAll(async () => {
  await client?.close();
  await sim?.stop();
});

interface Read {
  pages: PodView[][];
  decoded: number;
  resourceVersion?: string;
  restarts: number;
}

/** A pod list through RawReader, as JSON or as protobuf (counting the pages protobuf decoded). */
async function views(
  reader: RawReader,
  path: string,
  query: Record<string, string>,
  pageSize: number,
  protobuf: boolean,
  onPage?: (page: number) => void,
): Promise<Read> {
  const out: Read = { pages: [], decoded: 0, restarts: 0 };
  const owners = new Map();
  const { resourceVersion } = await reader.list<PodObject>(
    'list pods',
    path,
    query,
    (items) => {
      out.pages.push(items.map((p) => podView(p, owners) as PodView));
      onPage?.(out.pages.length);
    },
    {
      pageSize,
      onRestart: () => {
        out.restarts++;
        out.pages = [];
      },
      ...(protobuf
        ? {
            protobuf: (bytes: Uint8Array) => {
              out.decoded++;
              return podListFromProtobuf(bytes);
            },
          }
        : {}),
    },
  );
  out.resourceVersion = resourceVersion;
  return out;
}

interface Answer {
  status: number;
  type: string;
  encoding?: string;
  body: Buffer;
}

/** One GET with the given Accept header; the body gunzipped when it came compressed. */
function get(path: string, accept: string, gzip = false): Promise<Answer> {
  const c = sim.cluster(NAME);
  const url = new URL(path, c.server);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        headers: {
          Authorization: `Bearer ${c.token}`,
          Accept: accept,
          ...(gzip ? { 'Accept-Encoding': 'gzip' } : {}),
        },
        ca: c.caData,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => {
          const wire = Buffer.concat(chunks);
          const encoding = res.headers['content-encoding'];
          resolve({
            status: res.statusCode ?? 0,
            type: String(res.headers['content-type'] ?? ''),
            encoding,
            body: encoding === 'gzip' ? gunzipSync(wire) : wire,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('pod lists in Kubernetes protobuf', () => {
  it('gives the same views as JSON, page for page, every page decoded from protobuf', async () => {
    const reader = new RawReader(client);
    for (const [path, query] of [
      ['/api/v1/pods', {}],
      ['/api/v1/namespaces/kube-system/pods', { labelSelector: 'fleetscope.io/balloon=true' }],
      ['/api/v1/namespaces/logging/pods', {}],
      ['/api/v1/pods', { fieldSelector: 'metadata.namespace=logging' }],
    ] as const) {
      const json = await views(reader, path, query, 40, false);
      const pb = await views(reader, path, query, 40, true);
      expect(json.pages.length, path).toBeGreaterThan(2);
      expect(pb.decoded, path).toBe(pb.pages.length);
      expect(pb.pages, path).toEqual(json.pages);
      expect(pb.resourceVersion, path).toBe(json.resourceVersion);
    }
    // What the views read is there (views equal because both lost a field would prove nothing).
    const pb = await views(reader, '/api/v1/namespaces/kube-system/pods', {}, 40, true);
    const agent = pb.pages.flat().find((v) => v.owner?.name === 'agent') as PodView;
    expect(agent).toMatchObject({ balloon: true, owner: { kind: 'DaemonSet', name: 'agent' } });
    expect(agent.node).not.toBe('');
    expect(agent.containers[0]).toMatchObject({ reqCpu: 100, limMem: 256 * 2 ** 20 });
    const logs = await views(reader, '/api/v1/namespaces/logging/pods', {}, 40, true);
    expect(logs.pages.flat().length).toBeGreaterThan(NODES / 2);
    expect(logs.pages.flat()[0]?.priority).toBe(2_000_001_000);
  });

  it('reads the rest of a list as JSON when a protobuf page does not decode, and counts it', async () => {
    const reader = new RawReader(client);
    const path = '/api/v1/pods';
    const json = await views(reader, path, {}, 40, false);
    let calls = 0;
    const pages: PodView[][] = [];
    const owners = new Map();
    await reader.list<PodObject>(
      'list pods',
      path,
      {},
      (items) => pages.push(items.map((p) => podView(p, owners) as PodView)),
      {
        pageSize: 40,
        // The second page "does not decode": it and every page after it come as JSON.
        protobuf: (bytes) => {
          if (++calls === 2) throw new RangeError('index out of range');
          return podListFromProtobuf(bytes);
        },
      },
    );
    expect(json.pages.length).toBeGreaterThan(2);
    expect(calls).toBe(2);
    expect(pages).toEqual(json.pages);
    expect(reader.stats.protobufFallbacks).toBe(1);
  });

  it('frames the answer as kube-apiserver does: k8s\\0, an Unknown of kind PodList, the protobuf content type', async () => {
    const a = await get('/api/v1/namespaces/logging/pods?limit=5', PROTOBUF_OR_JSON);
    expect(a.status).toBe(200);
    expect(a.type).toBe(PROTOBUF_MEDIA);
    expect([...a.body.subarray(0, 4)]).toEqual([0x6b, 0x38, 0x73, 0x00]);
    expect(unwrap(a.body).kind).toBe('PodList');
    const list = podListFromProtobuf(a.body);
    expect(list.items).toHaveLength(5);
    expect(list.metadata?.continue).toBeTruthy();
    // Protobuf only (no JSON acceptable) is answered too; JSON first still answers JSON.
    const only = await get('/api/v1/namespaces/logging/pods?limit=5', PROTOBUF_MEDIA);
    expect(only.type).toBe(PROTOBUF_MEDIA);
    const jsonFirst = await get(
      '/api/v1/namespaces/logging/pods?limit=5',
      `application/json, ${PROTOBUF_MEDIA};q=0.9`,
    );
    expect(jsonFirst.type).toBe('application/json');
    const higherQ = await get('/api/v1/pods?limit=5', `application/json;q=0.5, ${PROTOBUF_MEDIA}`);
    expect(higherQ.type).toBe(PROTOBUF_MEDIA);
  });

  it('gzip-compresses a large protobuf page as it does JSON, and it decodes the same', async () => {
    const json = new RawReader(client);
    const pb = new RawReader(client);
    const a = await views(json, '/api/v1/pods', {}, 1000, false);
    const b = await views(pb, '/api/v1/pods', {}, 1000, true);
    expect(b.decoded).toBe(1);
    expect(b.pages).toEqual(a.pages);
    expect(pb.stats.decodedBytes).toBeGreaterThan(128 * 1024);
    expect(pb.stats.wireBytes).toBeLessThan(pb.stats.decodedBytes / 4);
    // Smaller than the same page in JSON: the same fields in a denser encoding.
    expect(pb.stats.decodedBytes).toBeLessThan(json.stats.decodedBytes);
    const raw = await get('/api/v1/pods?limit=1000', PROTOBUF_OR_JSON, true);
    expect(raw.encoding).toBe('gzip');
    expect(raw.type).toBe(PROTOBUF_MEDIA);
    // A small page is sent as it is.
    const small = await get('/api/v1/pods?limit=2', PROTOBUF_OR_JSON, true);
    expect(small.encoding).toBeUndefined();
    expect(podListFromProtobuf(small.body).items).toHaveLength(2);
  });

  it('encodes every field the pods carry: a page weighs about what a real server sends', async () => {
    // A real kube-apiserver's protobuf of a page is about 67% of its JSON (it writes every field, and Go's
    // zero values of fields the JSON omits); one of only the fields fleetscope reads is about 35%, and
    // would make a cold cycle look cheaper than it is. These pods (no managedFields) with every field they
    // carry come to about 50% (56% with managedFields): the rest is Go's zero values, not written here.
    const path = '/api/v1/namespaces/kube-system/pods?limit=100';
    const pb = await get(path, PROTOBUF_OR_JSON);
    const json = await get(path, 'application/json');
    expect(pb.type).toBe(PROTOBUF_MEDIA);
    expect(json.type).toBe('application/json');
    const items = (JSON.parse(json.body.toString()) as { items: PodObject[] }).items;
    expect((podListFromProtobuf(pb.body).items ?? []).map((p) => p.metadata?.name)).toEqual(
      items.map((p) => p.metadata?.name),
    );
    expect(pb.body.length / json.body.length).toBeGreaterThanOrEqual(0.45);
  });

  it('answers an expired continue token with a protobuf Status 410 that reads as the JSON one', async () => {
    const token = Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: 1, start: 'a\u0000' })).toString(
      'base64url',
    );
    const path = `/api/v1/pods?limit=5&continue=${token}`;
    const j = await get(path, 'application/json');
    const p = await get(path, PROTOBUF_OR_JSON);
    expect(j.status).toBe(410);
    expect(p.status).toBe(410);
    expect(p.type).toBe(PROTOBUF_MEDIA);
    expect(unwrap(p.body).kind).toBe('Status');
    const fromJson = JSON.parse(j.body.toString('utf8'));
    const fromPb = JSON.parse(statusText(p.body));
    expect(fromPb).toMatchObject({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      code: 410,
      reason: 'Expired',
      message: fromJson.message,
    });
    expect(fromPb.metadata.continue).toBe(fromJson.metadata.continue);
  });

  it('restarts a protobuf list whose continue token expired between pages, as it does a JSON one', async () => {
    const state = sim.state(NAME);
    const expireAfterFirst = (page: number) => {
      if (page !== 1) return;
      // History moves on and is compacted between two pages.
      const node = sim.cluster(NAME).store.list('nodes')[0] as { metadata: { labels?: object } };
      sim.cluster(NAME).store.put('nodes', {
        ...node,
        metadata: { ...node.metadata, labels: { ...node.metadata.labels, touched: String(Date.now()) } },
      });
      state.store.compact();
    };
    const reader = new RawReader(client);
    let first = true;
    const once = (page: number) => {
      if (first) expireAfterFirst(page);
      first = false;
    };
    const pb = await views(reader, '/api/v1/namespaces/logging/pods', {}, 40, true, once);
    const json = await views(reader, '/api/v1/namespaces/logging/pods', {}, 40, false);
    expect(pb.restarts).toBe(1);
    expect(pb.pages).toEqual(json.pages);
    // The pages of the first attempt, the 410 (no page), then every page again.
    expect(pb.decoded).toBe(1 + json.pages.length);
  });

  it('answers other errors of a protobuf request as a protobuf Status (404), read as the same error', async () => {
    const path = '/api/v1/namespaces/logging/pods/missing';
    const j = await get(path, 'application/json');
    const p = await get(path, PROTOBUF_OR_JSON);
    expect(p.status).toBe(404);
    expect(p.type).toBe(PROTOBUF_MEDIA);
    expect(JSON.parse(statusText(p.body))).toEqual(JSON.parse(j.body.toString('utf8')));
    const reader = new RawReader(client);
    const missing = (protobuf: boolean) =>
      listError(reader, '/api/v1/namespaces/logging/nosuchresources', {}, protobuf);
    const [je, pe] = [await missing(false), await missing(true)];
    expect(je).toBeInstanceOf(ClusterAccessError);
    expect(pe).toBeInstanceOf(ClusterAccessError);
    expect((pe as ClusterAccessError).status).toBe(404);
    expect((pe as ClusterAccessError).status).toBe((je as ClusterAccessError).status);
    expect((pe as ClusterAccessError).message).toBe((je as ClusterAccessError).message);
  });

  it('answers JSON for what it has no protobuf for when JSON is acceptable, 406 when it is not', async () => {
    const nodes = await get('/api/v1/nodes?limit=3', PROTOBUF_OR_JSON);
    expect(nodes.status).toBe(200);
    expect(nodes.type).toBe('application/json');
    expect(JSON.parse(nodes.body.toString('utf8')).items).toHaveLength(3);
    const pod = await get('/api/v1/namespaces/logging/pods?limit=1', 'application/json');
    const name = JSON.parse(pod.body.toString('utf8')).items[0].metadata.name;
    const one = await get(`/api/v1/namespaces/logging/pods/${name}`, PROTOBUF_OR_JSON);
    expect(one.type).toBe('application/json');
    expect(JSON.parse(one.body.toString('utf8')).metadata.name).toBe(name);
    const onlyPb = await get('/api/v1/nodes', PROTOBUF_MEDIA);
    expect(onlyPb.status).toBe(406);
    expect(JSON.parse(onlyPb.body.toString('utf8')).reason).toBe('NotAcceptable');
    // A Table asked first is still a Table, for pods too.
    const table = await get(
      '/api/v1/namespaces/logging/pods?limit=1',
      `application/json;as=Table;v=v1;g=meta.k8s.io, ${PROTOBUF_OR_JSON}`,
    );
    expect(JSON.parse(table.body.toString('utf8')).kind).toBe('Table');
  });
});
