/**
 * A gzip-compressed body that does not decode (corrupt, cut short) or an encoding that was not asked
 * for: the raw reader's call fails with an error naming the cluster, the operation and the request, and
 * a list never hands on part of what it read. A stand-in HTTPS server sends the broken bodies (neither
 * the simulator nor kube-apiserver sends one on purpose).
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCertificates } from '../../local/sim/certs.js';
import { kubeconfigYaml } from '../../local/sim/kubeconfig.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import { ClusterAccessError } from '../../shared/k8s/errors.js';
import { RawReader } from '../../shared/k8s/raw-reader.js';

const PATH = '/api/v1/namespaces/x/configmaps';
const page = (names: string[], next?: string) =>
  `${JSON.stringify({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: { continue: next }, items: names.map((name) => ({ metadata: { name }, data: { text: 'y'.repeat(70_000) } })) })}\n`;
const FIRST = gzipSync(page(['a', 'b'], 'page-2'));
const SECOND = gzipSync(page(['c', 'd']));

/** What the stand-in answers for the second page. */
let second: { encoding: string; body: Buffer } = { encoding: 'gzip', body: SECOND };

describe('raw reader: gzip bodies that do not decode', () => {
  let server: Server;
  let client: ClusterClient;
  beforeAll(async () => {
    const certs = await createCertificates();
    server = createServer({ key: certs.keyPem, cert: certs.certPem }, (req, res) => {
      const url = new URL(req.url ?? '/', 'https://x');
      const answer = url.searchParams.get('continue') ? second : { encoding: 'gzip', body: FIRST };
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Encoding': answer.encoding });
      res.end(answer.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const kubeconfig = kubeconfigYaml([
      { name: 'stand-in', server: `https://127.0.0.1:${port}`, caPem: certs.caPem, token: 'test-token' },
    ]);
    client = ClusterClient.fromKubeconfig(kubeconfig, { cluster: 'stand-in' });
  });
  afterAll(async () => {
    await client?.close();
    await new Promise((r) => server?.close(r));
  });

  /** Lists both pages; what reached the page handler, and how the list ended. */
  async function listBoth(): Promise<{ names: string[]; error?: unknown }> {
    const names: string[] = [];
    const reader = new RawReader(client);
    const error = await reader
      .list<{ metadata: { name: string } }>(
        'list configmaps',
        PATH,
        {},
        (items) => names.push(...items.map((i) => i.metadata.name)),
        { pageSize: 2 },
      )
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    return { names, error };
  }

  const expectUndecodable = (error: unknown, what: RegExp) => {
    expect(error).toBeInstanceOf(ClusterAccessError);
    const e = error as ClusterAccessError;
    expect(e.cluster).toBe('stand-in');
    expect(e.operation).toBe('list configmaps');
    expect(e.retryable).toBe(false);
    expect(e.message).toContain(`GET ${PATH}`);
    expect(e.message).toMatch(what);
  };

  it('reads well-formed gzip pages (the control)', async () => {
    second = { encoding: 'gzip', body: SECOND };
    expect(await listBoth()).toEqual({ names: ['a', 'b', 'c', 'd'], error: undefined });
  });

  it('fails the list on a corrupt gzip body, naming the request', async () => {
    const corrupt = Buffer.from(SECOND);
    corrupt.fill(0x5a, 10, 40); // past the gzip header: the deflate data is garbage
    second = { encoding: 'gzip', body: corrupt };
    const { names, error } = await listBoth();
    expectUndecodable(error, /gzip-compressed response body does not decode/);
    expect(names).toEqual(['a', 'b']);
  });

  it('fails the list on a gzip body cut short, though the HTTP response ended cleanly', async () => {
    second = { encoding: 'gzip', body: SECOND.subarray(0, Math.floor(SECOND.length / 2)) };
    const { names, error } = await listBoth();
    expectUndecodable(error, /does not decode \(unexpected end of file\)/);
    expect(names).toEqual(['a', 'b']);
  });

  it('fails on an encoding it did not ask for', async () => {
    second = { encoding: 'br', body: SECOND };
    const { error } = await listBoth();
    expectUndecodable(error, /encoded as "br", which was not asked for/);
  });
});
