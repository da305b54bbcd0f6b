/**
 * The quiet end of a resumed watch counts quiet on the wire, not time the reader spent handling what
 * came: an event whose handling outlasts the quiet window (a page handler's work, a major GC pause on a
 * large heap) must not end the read while the next event is already on its way. The server runs in
 * another process, so it keeps writing while this one is busy, as a real apiserver does.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { stat } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createCertificates } from '../../local/sim/certs.js';
import { kubeconfigYaml } from '../../local/sim/kubeconfig.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import { RawReader } from '../../shared/k8s/raw-reader.js';

/** A watch endpoint: one event, then a second 30 ms later; the stream stays open until its timeout. */
const SERVER = `
const https = require('node:https');
const ev = (name, rv) => JSON.stringify({ type: 'ADDED', object: { metadata: { name, resourceVersion: rv } } }) + '\\n';
https.createServer({ key: process.env.KEY, cert: process.env.CERT }, (req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write(ev('a', '11'));
  setTimeout(() => res.write(ev('b', '12')), 30);
  setTimeout(() => res.end(), 4000);
}).listen(0, '127.0.0.1', function () { process.send(this.address().port); });
`;

const QUIET_MS = 300;

let child: ChildProcess;
let client: ClusterClient;

beforeAll(async () => {
  const certs = await createCertificates(['127.0.0.1']);
  child = fork('-e', [SERVER], {
    execArgv: [],
    env: { ...process.env, KEY: certs.keyPem, CERT: certs.certPem },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve) => child.once('message', (m) => resolve(Number(m))));
  const kubeconfig = kubeconfigYaml([
    { name: 'quiet', server: `https://127.0.0.1:${port}`, caPem: certs.caPem, token: 't' },
  ]);
  client = ClusterClient.fromKubeconfig(kubeconfig, { cluster: 'quiet' });
}, 60_000);
afterAll(async () => {
  await client?.close();
  child?.kill();
});

/** Keeps this process busy past the quiet window (what a GC pause or a long handler does). */
const busy = () => {
  const until = performance.now() + QUIET_MS + 100;
  while (performance.now() < until) {}
};

/** Watches the two events; `onFirst` runs when the first is handled. */
async function watchTwo(onFirst: () => void) {
  const seen: string[] = [];
  const w = await new RawReader(client).watch<{ metadata?: { name?: string; resourceVersion?: string } }>(
    'watch things',
    '/api/v1/things',
    {},
    (_type, o) => {
      seen.push(o.metadata?.name ?? '');
      if (seen.length === 1) onFirst();
    },
    { from: '10', until: '12', timeoutSeconds: 5, quietMs: QUIET_MS },
  );
  return { seen, w };
}

it('an event handled for longer than the quiet window does not end the read before the next one', async () => {
  const { seen, w } = await watchTwo(busy);
  expect(seen).toEqual(['a', 'b']);
  expect(w).toMatchObject({ rv: '12', end: 'reached' });
});

it('nor does other work of the process (another list, a GC pause) that outlasts the quiet window', async () => {
  // An I/O callback (here a file read's) that runs long: the quiet timer falls due meanwhile.
  const { seen, w } = await watchTwo(() => stat(import.meta.filename, busy));
  expect(seen).toEqual(['a', 'b']);
  expect(w).toMatchObject({ rv: '12', end: 'reached' });
});
