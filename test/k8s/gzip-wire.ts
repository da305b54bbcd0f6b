/**
 * Response compression on the wire, as one suite run over the simulator (gzip.sim.test.ts) and over
 * the real kube-apiserver (gzip.real.test.ts), which is the judge: which Accept-Encoding values turn
 * it on, the threshold (a body of more than 128 KiB, not at), the headers, watches never compressed,
 * and the raw reader's lists decoding to the same items with gzip as without.
 */
import type { IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import { gunzipSync } from 'node:zlib';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ClusterClient } from '../../shared/k8s/client.js';
import { RawReader } from '../../shared/k8s/raw-reader.js';

/** kube-apiserver's defaultGzipThresholdBytes. */
const THRESHOLD = 128 * 1024;
const NS = 'gzip-wire';

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body as it came over the connection. */
  wire: Buffer;
}

/** A bare HTTPS client over a kubeconfig: the headers it sends are exactly the ones given. */
async function probe(kubeconfig: string) {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfig);
  const opts: https.RequestOptions & { headers?: Record<string, string> } = { headers: {} };
  await kc.applyToHTTPSOptions(opts);
  const base = new URL(kc.getCurrentCluster()?.server ?? '');
  const request = (method: string, path: string, headers: Record<string, string>, body?: string) =>
    new Promise<Answer>((resolve, reject) => {
      const req = https.request(
        new URL(path, base),
        {
          method,
          ca: opts.ca,
          cert: opts.cert,
          key: opts.key,
          headers: {
            ...(opts.headers as Record<string, string>),
            accept: 'application/json',
            ...headers,
            ...(body
              ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }
              : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (d: Buffer) => chunks.push(d));
          res.on('error', reject);
          res.on('end', () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, wire: Buffer.concat(chunks) }),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const get = (path: string, acceptEncoding?: string) =>
    request('GET', path, acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding });
  const write = async (method: string, path: string, obj: unknown) => {
    const a = await request(method, path, {}, JSON.stringify(obj));
    if (a.status >= 300 && a.status !== 409) throw new Error(`${method} ${path}: ${a.status} ${a.wire}`);
    return a;
  };
  return { get, write };
}

type Probe = Awaited<ReturnType<typeof probe>>;

const cmPath = (name = '') => `/api/v1/namespaces/${NS}/configmaps${name ? `/${name}` : ''}`;

/**
 * A ConfigMap whose GET body (as the server writes it, newline included) is exactly `bytes` long:
 * padded, measured uncompressed, re-padded by the difference until it fits (a new resourceVersion
 * can change the length by a digit, hence the loop).
 */
async function sizedConfigMap(p: Probe, name: string, bytes: number): Promise<string> {
  await p.write('POST', cmPath(), { metadata: { name }, data: { pad: 'x'.repeat(bytes / 2) } });
  for (let i = 0; i < 8; i++) {
    const got = await p.get(cmPath(name));
    if (got.wire.length === bytes) return got.wire.toString('utf8');
    const obj = JSON.parse(got.wire.toString('utf8'));
    obj.data.pad = 'x'.repeat(obj.data.pad.length + bytes - got.wire.length);
    await p.write('PUT', cmPath(name), obj);
  }
  throw new Error(`ConfigMap ${name} could not be sized to ${bytes} bytes`);
}

/** Registers the suite; `target` gives the server's admin kubeconfig once beforeAll has run. */
export function gzipWireSuite(target: () => { kubeconfig: string; cluster: string }): void {
  let p: Probe;
  let client: ClusterClient;
  const bodies: Record<string, string> = {};
  beforeAll(async () => {
    const t = target();
    p = await probe(t.kubeconfig);
    client = ClusterClient.fromKubeconfig(t.kubeconfig, { cluster: t.cluster });
    await p.write('POST', '/api/v1/namespaces', { metadata: { name: NS } });
    for (const [name, size] of [
      ['below', THRESHOLD - 1],
      ['at', THRESHOLD],
      ['above', THRESHOLD + 1],
    ] as const)
      bodies[name] = await sizedConfigMap(p, name, size);
    // About 4 KB each, varied: a list of them is well over the threshold, a page of 10 well under it.
    for (let i = 0; i < 60; i++)
      await p.write('POST', cmPath(), {
        metadata: { name: `item-${String(i).padStart(2, '0')}`, labels: { set: 'items' } },
        data: { text: `${i}:`.repeat(1300 + i) },
      });
  }, 120_000);
  afterAll(async () => {
    await client?.close();
  });

  const uncompressed = (a: Answer, body: string) => {
    expect(a.status).toBe(200);
    expect(a.headers['content-encoding']).toBeUndefined();
    expect(a.wire.toString('utf8')).toBe(body);
    // Go's net/http gives a length only to a body that fits its 2 KiB buffer: these are chunked.
    expect(a.headers['content-length']).toBeUndefined();
    expect(a.headers['transfer-encoding']).toBe('chunked');
  };

  it('sends a body of at most 128 KiB as it is, even when asked for gzip', async () => {
    uncompressed(await p.get(cmPath('below'), 'gzip'), bodies.below as string);
    uncompressed(await p.get(cmPath('at'), 'gzip'), bodies.at as string);
  });

  it('compresses a body of 128 KiB + 1 when asked: Content-Encoding gzip, Vary, a length when it is small', async () => {
    const a = await p.get(cmPath('above'), 'gzip');
    expect(a.status).toBe(200);
    expect(a.headers['content-encoding']).toBe('gzip');
    expect(a.headers.vary).toContain('Accept-Encoding');
    expect(a.headers['content-type']).toBe('application/json');
    // Compressed to well under 2 KiB, which Go's server frames with a Content-Length.
    expect(a.wire.length).toBeLessThan(2048);
    expect(a.headers['content-length']).toBe(String(a.wire.length));
    expect(gunzipSync(a.wire).toString('utf8')).toBe(bodies.above);
  });

  it('compresses only for the token gzip in Accept-Encoding, as the server splits it', async () => {
    uncompressed(await p.get(cmPath('above')), bodies.above as string);
    uncompressed(await p.get(cmPath('above'), 'deflate'), bodies.above as string);
    // A q-value makes the token `gzip;q=1.0`, which the server does not recognise.
    uncompressed(await p.get(cmPath('above'), 'gzip;q=1.0'), bodies.above as string);
    const listed = await p.get(cmPath('above'), 'deflate, br,  gzip ');
    expect(listed.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(listed.wire).toString('utf8')).toBe(bodies.above);
  });

  it('compresses a list above the threshold and not a page below it', async () => {
    const all = await p.get(`${cmPath()}?labelSelector=set%3Ditems`, 'gzip');
    expect(all.headers['content-encoding']).toBe('gzip');
    expect(all.wire.length).toBeGreaterThan(2048);
    expect(all.headers['content-length']).toBeUndefined();
    expect(JSON.parse(gunzipSync(all.wire).toString('utf8')).items).toHaveLength(60);
    const page = await p.get(`${cmPath()}?labelSelector=set%3Ditems&limit=10`, 'gzip');
    expect(page.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(page.wire.toString('utf8')).items).toHaveLength(10);
  });

  it('never compresses a watch', async () => {
    const w = await p.get(`${cmPath()}?watch=1&timeoutSeconds=1&labelSelector=set%3Ditems`, 'gzip');
    expect(w.status).toBe(200);
    expect(w.headers['content-encoding']).toBeUndefined();
    const events = w.wire.toString('utf8').trim().split('\n');
    expect(events.length).toBe(60);
    expect(w.wire.length).toBeGreaterThan(THRESHOLD);
  });

  it("the raw reader's pages decode to the same items with gzip as without, fewer bytes on the wire", async () => {
    const read = async (gzip: boolean, pageSize: number) => {
      const reader = new RawReader(client, { gzip });
      const items: unknown[] = [];
      await reader.list(
        'list configmaps',
        cmPath(),
        { labelSelector: 'set=items' },
        (page) => items.push(...page),
        {
          pageSize,
        },
      );
      return { items, stats: reader.stats };
    };
    const plain = await read(false, 40);
    const gzip = await read(true, 40);
    expect(plain.items).toHaveLength(60);
    expect(gzip.items).toEqual(plain.items);
    expect(plain.stats.wireBytes).toBe(plain.stats.decodedBytes);
    expect(gzip.stats.decodedBytes).toBe(plain.stats.decodedBytes);
    // The first page (40 items, ~165 KB) went compressed; the last (20 items, ~80 KB) as it is.
    expect(gzip.stats.wireBytes).toBeLessThan(plain.stats.decodedBytes / 2);
    expect(gzip.stats.wireBytes).toBeGreaterThan(plain.stats.decodedBytes / 4);
  });
}
