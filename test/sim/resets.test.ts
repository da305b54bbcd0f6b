/**
 * The simulator survives its clients, as kube-apiserver does: a connection reset during the TLS
 * handshake, in the middle of a request's body, of a list's pages (gzip, protobuf) or of a watch never
 * ends the process, never disturbs another client's request, and is not an "internal error" (nobody is
 * left to answer). And a request sent on a kept-alive connection while the server was busy is served:
 * kube-apiserver keeps an idle connection 90 s (IdleTimeout in k8s.io/apiserver secure_serving.go), Node's
 * default is 5 s, and a simulator busy serving a 5,000-node list for longer than that closed connections
 * whose next request was already on the wire: the client read ECONNRESET (issue 33's bench crash).
 */
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CLUSTER, clusterSpec } from '../../bench/spec.js';
import { type SimCluster, type Simulator, startSimulator } from '../../local/sim/index.js';
import { raw } from './helpers.js';

let sim: Simulator;
let cluster: SimCluster;
const errors = vi.spyOn(console, 'error');

beforeAll(async () => {
  // 40 nodes x 10 DaemonSets: a page of 400 pods is well over the 128 KiB gzip threshold.
  sim = await startSimulator({ clusters: [{ ...clusterSpec(), nodes: 40 }] });
  cluster = sim.cluster(CLUSTER);
});
afterAll(async () => {
  await sim?.stop();
  errors.mockRestore();
});
afterEach(() => {
  // A client gone is nobody's internal error: nothing to log, nothing to answer.
  expect(errors).not.toHaveBeenCalled();
  errors.mockClear();
});

const url = () => new URL(cluster.server);

/** A TLS connection over a TCP socket of our own, so that the test can reset it (RST, not FIN). */
function connection(): { tcp: net.Socket; tls: tls.TLSSocket } {
  const tcp = net.connect(Number(url().port), url().hostname);
  return { tcp, tls: tls.connect({ socket: tcp, ca: cluster.caData, servername: 'localhost' }) };
}

/**
 * A request whose connection is reset once `after` says so (bytes of the response read), or, with a
 * body, once half of it is sent. Resolves when the reset is done.
 */
function resetDuring(
  path: string,
  o: { headers?: Record<string, string>; after?: number; method?: string; body?: Buffer; fin?: boolean } = {},
): Promise<'reset' | 'ended'> {
  return new Promise((resolve) => {
    let tcp!: net.Socket;
    const req = https.request(
      new URL(path, cluster.server),
      {
        method: o.method ?? 'GET',
        headers: { authorization: `Bearer ${cluster.token}`, ...o.headers },
        createConnection: () => {
          const c = connection();
          tcp = c.tcp;
          return c.tls;
        },
      } as https.RequestOptions,
      (res) => {
        let got = 0;
        res.on('data', (d: Buffer) => {
          got += d.length;
          if (got < (o.after ?? 1)) return;
          if (o.fin) tcp.destroy();
          else tcp.resetAndDestroy();
          resolve('reset');
        });
        res.on('error', () => {});
        res.on('end', () => resolve('ended'));
      },
    );
    req.on('error', () => {});
    if (!o.body) return void req.end();
    req.write(o.body.subarray(0, o.body.length / 2));
    setTimeout(() => {
      tcp.resetAndDestroy();
      resolve('reset');
    }, 50);
  });
}

/** Another client's watch of pods, open through the resets: what it saw. */
function watchPods(): { events: string[]; close: () => void } {
  const events: string[] = [];
  const req = https.request(
    new URL('/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=60', cluster.server),
    { ca: cluster.caData, headers: { authorization: `Bearer ${cluster.token}` }, agent: false },
    (res) => {
      let rest = '';
      res.on('data', (d: Buffer) => {
        rest += d.toString('utf8');
        for (let nl = rest.indexOf('\n'); nl >= 0; nl = rest.indexOf('\n')) {
          const ev = JSON.parse(rest.slice(0, nl)) as {
            type: string;
            object: { metadata: { name: string } };
          };
          events.push(`${ev.type} ${ev.object.metadata.name}`);
          rest = rest.slice(nl + 1);
        }
      });
      res.on('error', () => {});
    },
  );
  req.on('error', () => {});
  req.end();
  return { events, close: () => req.destroy() };
}

const until = async (ok: () => boolean, ms = 5_000) => {
  const end = Date.now() + ms;
  while (!ok() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  expect(ok()).toBe(true);
};

describe('simulator: connections reset by their clients', () => {
  const stages: [string, () => Promise<unknown>][] = [
    [
      'the TLS handshake',
      async () => {
        const tcp = net.connect(Number(url().port), url().hostname);
        await new Promise((r) => tcp.once('connect', r));
        // The first bytes of a ClientHello, then RST.
        tcp.write(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]));
        await new Promise((r) => setTimeout(r, 30));
        tcp.resetAndDestroy();
      },
    ],
    [
      'the TLS handshake, just completed',
      () =>
        new Promise<void>((resolve) => {
          const c = connection();
          c.tls.once('secureConnect', () => {
            c.tcp.resetAndDestroy();
            resolve();
          });
          c.tls.on('error', () => resolve());
        }),
    ],
    [
      "a request's body",
      () =>
        resetDuring('/api/v1/namespaces/default/configmaps', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': '4000' },
          body: Buffer.from(`{"metadata":{"name":"x"},"data":{"a":"${'y'.repeat(3_950)}"}}`),
        }),
    ],
    [
      "a simulator endpoint's body",
      () =>
        resetDuring('/_sim/clock', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': '400' },
          body: Buffer.from(`{"advanceMs":0${' '.repeat(385)}}`),
        }),
    ],
    [
      'a list page, gzip-compressed',
      () => resetDuring('/api/v1/pods?limit=400', { headers: { 'accept-encoding': 'gzip' }, after: 2_000 }),
    ],
    [
      'a list page, in protobuf',
      () =>
        resetDuring('/api/v1/pods?limit=400', {
          headers: { accept: 'application/vnd.kubernetes.protobuf', 'accept-encoding': 'gzip' },
          after: 2_000,
        }),
    ],
    ['a list page, in JSON uncompressed', () => resetDuring('/api/v1/pods?limit=400', { after: 20_000 })],
    ['a watch stream', () => resetDuring('/api/v1/pods?watch=true&timeoutSeconds=30', { after: 5_000 })],
    [
      'a watch stream, closed by its client (FIN, not RST)',
      () => resetDuring('/api/v1/pods?watch=true&timeoutSeconds=30', { after: 5_000, fin: true }),
    ],
    [
      "a list's second page (continue), gzip-compressed",
      async () => {
        const first = await raw(cluster, 'GET', '/api/v1/pods?limit=100');
        const token = encodeURIComponent(first.json.metadata.continue);
        return resetDuring(`/api/v1/pods?limit=300&continue=${token}`, {
          headers: { 'accept-encoding': 'gzip' },
          after: 2_000,
        });
      },
    ],
  ];
  it.each(stages)(
    'a reset during %s ends neither the simulator nor another client’s watch',
    async (_s, reset) => {
      const other = watchPods();
      try {
        await new Promise((r) => setTimeout(r, 50));
        // Each reset happened before the answer ended (a stage that ends first would test nothing).
        for (let i = 0; i < 3; i++) expect(await reset()).not.toBe('ended');
        const name = `after-${Math.random().toString(36).slice(2, 8)}`;
        const made = await raw(cluster, 'POST', '/api/v1/namespaces/default/configmaps', {
          body: { metadata: { name } },
        });
        expect(made.status).toBe(201);
        // The other client's watch was not disturbed, and the server answers lists in full.
        await until(() => other.events.includes(`ADDED ${name}`));
        const pods = await raw(cluster, 'GET', '/api/v1/pods');
        expect(pods.json.items.length).toBeGreaterThanOrEqual(350);
      } finally {
        other.close();
      }
    },
  );
});

describe('simulator: a kept-alive connection while the server was busy', () => {
  it('serves a request sent on an idle kept-alive connection while the server was busy for 6 s', async () => {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: cluster.caData });
    const get = () =>
      new Promise<number>((resolve, reject) => {
        const req = https.request(
          new URL('/api/v1/namespaces/default/configmaps', cluster.server),
          { agent, headers: { authorization: `Bearer ${cluster.token}` } },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end();
      });
    try {
      expect(await get()).toBe(200);
      // The next request goes out on the kept-alive socket, then the process (server and client
      // alike) is busy for 6 s, as the simulator is while it serves a 5,000-node list.
      const next = get();
      await new Promise((r) => setImmediate(r));
      const end = Date.now() + 6_000;
      while (Date.now() < end);
      expect(await next).toBe(200);
    } finally {
      agent.destroy();
    }
  }, 20_000);
});
