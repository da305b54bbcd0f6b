/**
 * fleetscope's raw reader and watch follower when the server resets the connection, at each stage: the
 * TLS handshake, before the answer, in the middle of a list's page (JSON, gzip, protobuf, protobuf in
 * gzip) and of a watch's stream; and the client's writes when it is reset in the middle of sending a
 * request's body. A reset is a retryable network failure: retried within the call's budget, then a
 * ClusterAccessError naming the cluster and the operation; never an unhandled rejection (which vitest
 * reports as an error of the run), never part of a list handed on, never a kept list half-updated.
 * A stand-in HTTPS server resets (RST) the first N attempts of the stage under test.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createCertificates } from '../../local/sim/certs.js';
import { kubeconfigYaml } from '../../local/sim/kubeconfig.js';
import { followCluster } from '../../shared/cycle/follow.js';
import type { KeptListSpec } from '../../shared/cycle/kept-lists.js';
import { KeptLists } from '../../shared/cycle/kept-lists.js';
import { readKeptList } from '../../shared/cycle/resume.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import { ClusterAccessError } from '../../shared/k8s/errors.js';
import { RawReader } from '../../shared/k8s/raw-reader.js';

const PATH = '/api/v1/namespaces/x/configmaps';
const PROTOBUF = 'application/vnd.kubernetes.protobuf';
type Item = { metadata: { name: string; resourceVersion?: string } };
const item = (name: string) => ({
  metadata: { name, resourceVersion: '10' },
  data: { t: 'y'.repeat(60_000) },
});
const page = (names: string[], next?: string) =>
  Buffer.from(
    `${JSON.stringify({ kind: 'ConfigMapList', metadata: { continue: next, resourceVersion: '10' }, items: names.map(item) })}\n`,
  );
const watchLines = (rv: number) =>
  [
    {
      type: 'MODIFIED',
      object: { metadata: { name: 'a', resourceVersion: String(rv - 1) }, data: { t: 'z' } },
    },
    { type: 'BOOKMARK', object: { metadata: { resourceVersion: String(rv) } } },
  ]
    .map((e) => `${JSON.stringify(e)}\n`)
    .join('');

type Stage = 'handshake' | 'headers' | 'page' | 'watch' | 'body';
/** How many attempts of each stage are reset before the server answers. */
const resets: Record<Stage, number> = { handshake: 0, headers: 0, page: 0, watch: 0, body: 0 };
let encoding: 'identity' | 'gzip' | 'protobuf' | 'protobuf+gzip' = 'identity';
let requests = 0;

/** Writes half of `body`, then resets the connection (RST: the client reads ECONNRESET). */
function resetMidway(res: import('node:http').ServerResponse, tcp: Socket, body: Buffer, headers: object) {
  res.writeHead(200, headers as Record<string, string>);
  res.write(body.subarray(0, Math.floor(body.length / 2)), () => setTimeout(() => tcp.resetAndDestroy(), 20));
}

/** A write: reset once the first chunk of its body arrived while `resets.body` lasts, else created. */
function write(
  req: import('node:http').IncomingMessage,
  res: import('node:http').ServerResponse,
  tcp: Socket,
) {
  if (resets.body > 0) {
    resets.body--;
    return void req.once('data', () => tcp.resetAndDestroy());
  }
  req.resume();
  req.on('end', () => {
    res.writeHead(201, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w', namespace: 'x' } }));
  });
}

describe('raw reader: connections reset by the server', () => {
  let server: Server;
  let client: ClusterClient;
  const tcpOf = new Map<number, Socket>();
  beforeAll(async () => {
    const certs = await createCertificates();
    server = createServer({ key: certs.keyPem, cert: certs.certPem }, (req, res) => {
      requests++;
      const tcp = tcpOf.get(req.socket.remotePort ?? 0) as Socket;
      const url = new URL(req.url ?? '/', 'https://x');
      if (url.pathname.includes('revision-probe')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ metadata: { resourceVersion: '20' }, items: [] }));
      }
      if (req.method !== 'GET') return write(req, res, tcp);
      if (resets.headers > 0) {
        resets.headers--;
        return void tcp.resetAndDestroy();
      }
      if (url.searchParams.get('watch') === 'true') {
        const body = Buffer.from(watchLines(20));
        if (resets.watch > 0) {
          resets.watch--;
          return resetMidway(res, tcp, body, { 'content-type': 'application/json' });
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(body);
      }
      const second = url.searchParams.get('continue') === 'page-2';
      const json = second ? page(['c', 'd']) : page(['a', 'b'], 'page-2');
      const gzip = encoding.endsWith('gzip');
      const body = gzip ? gzipSync(json) : json;
      const headers = {
        'content-type': encoding.startsWith('protobuf') ? PROTOBUF : 'application/json',
        ...(gzip ? { 'content-encoding': 'gzip' } : {}),
      };
      if (second && resets.page > 0) {
        resets.page--;
        return resetMidway(res, tcp, body, headers);
      }
      res.writeHead(200, headers);
      res.end(body);
    });
    server.on('connection', (s: Socket) => {
      if (resets.handshake > 0) {
        resets.handshake--;
        return void s.resetAndDestroy();
      }
      tcpOf.set(s.remotePort ?? 0, s);
    });
    server.on('tlsClientError', () => {});
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const kubeconfig = kubeconfigYaml([
      { name: 'stand-in', server: `https://127.0.0.1:${port}`, caPem: certs.caPem, token: 'test-token' },
    ]);
    client = ClusterClient.fromKubeconfig(kubeconfig, {
      cluster: 'stand-in',
      retry: { baseDelayMs: 5, maxDelayMs: 20 },
    });
  });
  afterAll(async () => {
    await client?.close();
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
  });
  beforeEach(async () => {
    // No kept-alive socket from an earlier test: each starts with a handshake.
    await new RawReader(client).closeIdle();
    Object.assign(resets, { handshake: 0, headers: 0, page: 0, watch: 0, body: 0 });
    encoding = 'identity';
    requests = 0;
  });

  /** Lists both pages; what reached the page handler, and how the list ended. */
  async function listBoth(reader = new RawReader(client)): Promise<{ names: string[]; error?: unknown }> {
    const names: string[] = [];
    const error = await reader
      .list<Item>('list configmaps', PATH, {}, (items) => names.push(...items.map((i) => i.metadata.name)), {
        pageSize: 2,
        ...(encoding.startsWith('protobuf')
          ? { protobuf: (b: Uint8Array) => JSON.parse(Buffer.from(b).toString('utf8')) }
          : {}),
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    return { names, error };
  }

  const expectReset = (error: unknown, operation: string) => {
    expect(error).toBeInstanceOf(ClusterAccessError);
    const e = error as ClusterAccessError;
    expect(e).toMatchObject({ cluster: 'stand-in', operation, kind: 'network', retryable: true });
    expect(e.code).toBe('ECONNRESET');
    expect(e.attempts).toBe(4);
  };

  const cases: [string, Stage, typeof encoding][] = [
    ['the TLS handshake', 'handshake', 'identity'],
    ['the wait for the answer', 'headers', 'identity'],
    ['a JSON page', 'page', 'identity'],
    ['a gzip-compressed page', 'page', 'gzip'],
    ['a protobuf page', 'page', 'protobuf'],
    ['a gzip-compressed protobuf page', 'page', 'protobuf+gzip'],
  ];
  it.each(cases)('a reset during %s is retried, and the list is whole', async (_what, stage, enc) => {
    encoding = enc;
    resets[stage] = 2;
    const reader = new RawReader(client);
    const { names, error } = await listBoth(reader);
    expect(error).toBeUndefined();
    // The reset page was handed on once, whole; the first page was not repeated.
    expect(names).toEqual(['a', 'b', 'c', 'd']);
    expect(resets[stage]).toBe(0);
    expect(reader.stats.requests).toBe(4);
    if (stage !== 'handshake') expect(requests).toBe(4);
  });

  it.each(cases)(
    'resets during %s beyond the budget fail the list as a retryable reset',
    async (_w, stage, enc) => {
      encoding = enc;
      resets[stage] = 100;
      const { names, error } = await listBoth();
      expectReset(error, 'list configmaps');
      expect(names).toEqual(stage === 'page' ? ['a', 'b'] : []);
    },
  );

  it('a reset in the middle of a watch is retried from the same revision', async () => {
    resets.watch = 1;
    const seen: string[] = [];
    const r = await new RawReader(client).watch<Item>(
      'watch configmaps',
      PATH,
      {},
      (type, o) => seen.push(`${type} ${o.metadata.name}`),
      { from: '10', timeoutSeconds: 3, untilBookmark: true },
    );
    expect(r).toMatchObject({ rv: '20', end: 'bookmark' });
    // The event before the reset may come twice (a retry starts from `from`): applied by key, harmless.
    expect(seen.at(-1)).toBe('MODIFIED a');
    expect(resets.watch).toBe(0);
  });

  it('resets of every watch attempt fail it as a retryable reset', async () => {
    resets.watch = 100;
    const error = await new RawReader(client)
      .watch<Item>('watch configmaps', PATH, {}, () => {}, {
        from: '10',
        timeoutSeconds: 3,
        untilBookmark: true,
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expectReset(error, 'watch configmaps');
  });

  const spec: KeptListSpec<Item, string> = {
    operation: 'list configmaps',
    path: PATH,
    query: {},
    pageSize: 2,
    keyOf: (o) => o.metadata.name,
    view: (o) => o.metadata.resourceVersion,
  };

  it("a cycle whose kept list's watch is reset throughout lists in full instead", async () => {
    const reader = new RawReader(client);
    const { list } = await readKeptList(reader, spec, undefined, async () => undefined);
    resets.watch = 100;
    const again = await readKeptList(reader, spec, list, async () => '20');
    expect(again.read).toEqual({ how: 'listed', why: 'watch failed' });
    expect([...again.list.items.keys()]).toEqual(['a', 'b', 'c', 'd']);
  });

  /** A reader and the lists it keeps: one, listed. */
  async function keptOne(): Promise<{ reader: RawReader; kept: KeptLists }> {
    const reader = new RawReader(client);
    const kept = new KeptLists();
    const { list } = await readKeptList(reader, spec, undefined, async () => undefined);
    kept.put('stand-in s list', list);
    return { reader, kept };
  }

  it('a follow whose watch is reset throughout drops the list, and the next cycle lists it', async () => {
    const { reader, kept } = await keptOne();
    resets.watch = 100;
    const r = await followCluster(reader, kept, 'stand-in s');
    expect(r.lists).toEqual({ list: { how: 'dropped', why: 'watch failed' } });
    expect(kept.size()).toEqual({ lists: 0, objects: 0 });
  });

  it('a follow whose watch is reset once takes the list up all the same', async () => {
    const { reader, kept } = await keptOne();
    resets.watch = 1;
    const r = await followCluster(reader, kept, 'stand-in s');
    expect(r.lists.list).toMatchObject({ how: 'resumed', rv: '20' });
    expect(kept.take<string, Item>('stand-in s list')?.items.get('a')).toBe('19');
  });

  /** A ConfigMap of 4 MiB: far more than a socket's buffers, so the reset lands while it is being sent. */
  const create = (idempotent: boolean) =>
    client
      .call(
        'create configmap',
        () =>
          client.core.createNamespacedConfigMap({
            namespace: 'x',
            body: { metadata: { name: 'w' }, data: { t: 'y'.repeat(4 << 20) } },
          }),
        { idempotent },
      )
      .then(
        (cm) => ({ name: cm.metadata?.name, error: undefined }),
        (error: unknown) => ({ name: undefined, error }),
      );

  it("a reset while a create's body is sent fails it once, as a retryable reset, never retried", async () => {
    resets.body = 100;
    const { error } = await create(false);
    expect(error).toBeInstanceOf(ClusterAccessError);
    const e = error as ClusterAccessError;
    expect(e).toMatchObject({ cluster: 'stand-in', operation: 'create configmap', kind: 'network' });
    expect(e.retryable).toBe(true);
    expect(['ECONNRESET', 'EPIPE']).toContain(e.code);
    // A create the server may have half-done is not sent again blindly: the caller decides (409 or list).
    expect(e.attempts ?? 1).toBe(1);
    expect(resets.body).toBe(99);
  });

  it("a reset while an idempotent write's body is sent is retried, and the write lands", async () => {
    resets.body = 2;
    const { name, error } = await create(true);
    expect(error).toBeUndefined();
    expect(name).toBe('w');
    expect(resets.body).toBe(0);
  });
});
