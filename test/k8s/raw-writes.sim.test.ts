/**
 * RawReader's writes keep the kept-alive connection usable: a DELETE with a body (DeleteOptions) is
 * framed with its length, so the server does not read the body as the next request.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSimulator } from '../../local/sim/index.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import { RawReader } from '../../shared/k8s/raw-reader.js';

let sim: Awaited<ReturnType<typeof startSimulator>>;
let client: ClusterClient;
beforeAll(async () => {
  sim = await startSimulator({ clusters: [{ name: 'raw', nodes: 1 }] });
  client = ClusterClient.fromKubeconfig(sim.kubeconfig(), { cluster: 'raw', context: 'raw' });
});
afterAll(async () => {
  await client?.close();
  await sim?.stop();
});

it('a DELETE with DeleteOptions, then more requests on the same connection', async () => {
  const raw = new RawReader(client);
  const path = '/api/v1/namespaces/default/configmaps';
  for (const name of ['a', 'b'])
    await raw.send('create', 'POST', path, { metadata: { name }, data: { k: 'v' } });
  await raw.send('delete', 'DELETE', `${path}/a`, { gracePeriodSeconds: 0, preconditions: {} });
  await raw.send('delete', 'DELETE', `${path}/b`, { gracePeriodSeconds: 0 });
  const left = await raw.get<{ items: { metadata: { name: string } }[] }>('list', path);
  expect(left.items.map((c) => c.metadata.name)).toEqual(['kube-root-ca.crt']);
});
