/**
 * RawReader's bodies: a response arrives in many TLS chunks and is decoded through the reader's reused
 * scratch buffer, so multi-byte characters split between chunks, a smaller response after a larger one
 * and error bodies must all come out exactly as sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import { ClusterAccessError } from '../../shared/k8s/errors.js';
import { RawReader } from '../../shared/k8s/raw-reader.js';

const CONFIGMAPS = '/api/v1/namespaces/default/configmaps';

describe('RawReader response bodies', () => {
  let sim: Simulator;
  let client: ClusterClient;
  beforeAll(async () => {
    sim = await startSimulator({ clusters: [{ name: 'raw', nodes: 1, seed: 3 }] });
    client = ClusterClient.fromKubeconfig(sim.kubeconfig(), { cluster: 'raw', context: 'raw' });
  });
  afterAll(async () => {
    await client?.close();
    await sim?.stop();
  });

  const configMap = (name: string, text: string) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name },
    data: { text },
  });

  it('decodes many-chunk responses, multi-byte characters across chunks, and smaller ones after them', async () => {
    const raw = new RawReader(client);
    // 2-, 3- and 4-byte UTF-8 characters, ~180 KB: many TLS records, characters cut between them.
    const big = 'ü€😀'.repeat(20_000);
    const small = 'ø';
    await raw.send('create', 'POST', CONFIGMAPS, configMap('big', big));
    await raw.send('create', 'POST', CONFIGMAPS, configMap('small', small));
    const before = { ...raw.stats };
    const gotBig = await raw.get<{ data: { text: string } }>('get', `${CONFIGMAPS}/big`);
    expect(gotBig.data.text).toBe(big);
    expect(raw.stats.decodedBytes - before.decodedBytes).toBeGreaterThan(Buffer.byteLength(big));
    // Over 128 KiB: the server compressed it (the emoji text repeats, so it shrinks a lot).
    expect(raw.stats.wireBytes - before.wireBytes).toBeLessThan(Buffer.byteLength(big) / 10);
    // The scratch buffer still holds the larger body: the smaller one must not pick any of it up.
    const gotSmall = await raw.get<{ data: { text: string } }>('get', `${CONFIGMAPS}/small`);
    expect(gotSmall.data.text).toBe(small);
    const pages: string[] = [];
    await raw.list<{ metadata: { name: string }; data: { text: string } }>(
      'list',
      CONFIGMAPS,
      {},
      (items) => {
        for (const cm of items) if (cm.data?.text) pages.push(`${cm.metadata.name}=${cm.data.text.length}`);
      },
      { pageSize: 1 },
    );
    expect(pages.sort()).toEqual([`big=${big.length}`, 'small=1']);
  });

  it('still reads error bodies (status and reason) after large responses', async () => {
    const raw = new RawReader(client);
    await raw.get('get', `${CONFIGMAPS}/big`);
    const err = await raw.get('get', `${CONFIGMAPS}/missing`).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClusterAccessError);
    expect((err as ClusterAccessError).status).toBe(404);
    expect((err as ClusterAccessError).detail).toContain('missing');
  });
});
