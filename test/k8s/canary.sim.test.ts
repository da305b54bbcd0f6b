/**
 * CANARY: a unique string is planted as the user's token, as fake client-key-data and as AWS
 * credentials; every failure path runs with all output captured; the canary (and any minted token)
 * must appear in no output, no error message, no stack and no inspected error.
 */
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCertificates } from '../../local/sim/certs.js';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import { ClusterClient, type ClusterLogger } from '../../shared/k8s/client.js';
import { ClusterConnector } from '../../shared/k8s/connector.js';
import { FileKubeconfigSource } from '../../shared/k8s/kubeconfig-source.js';
import { EksTokenMinter } from '../../shared/platform/eks-token.js';
import { testDir } from '../support/temp.js';
import { captureOutput, FAKE_CA_B64, simpleKubeconfig } from './helpers.js';

const CANARY = `CANARY${randomUUID().replace(/-/g, '')}`;
let sim: Simulator;

beforeAll(async () => {
  sim = await startSimulator({ clusters: [{ name: 'alpha', nodes: 2 }] });
});
afterAll(async () => {
  await sim?.stop();
});

/** A logger that writes every line to the console (captured), like the real one would. */
const consoleLogger: ClusterLogger = {
  warn: (message, fields) => console.warn(JSON.stringify({ level: 'WARN', message, ...fields })),
  debug: (message, fields) => console.debug(JSON.stringify({ level: 'DEBUG', message, ...fields })),
};

function forms(secret: string): string[] {
  return [
    secret,
    Buffer.from(secret).toString('base64').replace(/=+$/, ''),
    Buffer.from(secret).toString('base64url'),
    encodeURIComponent(secret),
  ];
}

describe('no credential ever reaches output or errors', () => {
  it('holds for 401, timeouts, TLS failures, invalid kubeconfigs and EKS minting', async () => {
    const a = sim.cluster('alpha');
    const caData = Buffer.from(a.caData).toString('base64');
    const dir = testDir('canary-');
    const errors: unknown[] = [];
    const mintedTokens: string[] = [];
    const record = async (p: Promise<unknown>) => {
      try {
        await p;
        errors.push(new Error('expected a failure'));
      } catch (e) {
        errors.push(e);
      }
    };
    const clientOpts = { timeoutMs: 300, retry: { baseDelayMs: 5, maxDelayMs: 10 }, logger: consoleLogger };

    const { output } = await captureOutput(async () => {
      // 1. 401 with the canary as token, through the connector (logs the invalidation)
      const file = path.join(dir, 'kubeconfig');
      writeFileSync(
        file,
        simpleKubeconfig({ name: 'alpha', server: a.server, caData, user: { token: CANARY } }),
      );
      const connector = new ClusterConnector({
        source: new FileKubeconfigSource(),
        secretPrefix: 'fleetscope/clusters/',
        ttlSeconds: 300,
        client: clientOpts,
        logger: consoleLogger,
      });
      const client = await connector.get('alpha', { kind: 'file', path: file });
      await record(client.call('list nodes', () => client.core.listNode()));

      // 2. timeout (hang) with the canary token
      const hangId = sim.faults.inject({ cluster: 'alpha', fault: { type: 'hang' } });
      const c2 = ClusterClient.fromKubeconfig(
        simpleKubeconfig({ name: 'alpha', server: a.server, caData, user: { token: CANARY } }),
        { cluster: 'alpha', ...clientOpts },
      );
      await record(c2.call('list nodes', () => c2.core.listNode()));
      // a request outside call() still times out (default signal)
      await record(c2.core.listNode());
      sim.faults.clear(hangId);

      // 3. a 500 storm and a reset, with retries logged
      sim.faults.inject({
        cluster: 'alpha',
        match: { kind: 'nodes' },
        fault: { type: 'status', code: 500 },
        times: 3,
      });
      await record(c2.call('list nodes', () => c2.core.listNode(), { retry: { maxAttempts: 2 } }));
      sim.faults.clear();

      // 4. TLS failure: a CA that did not sign the server's certificate
      const other = await createCertificates();
      const c4 = ClusterClient.fromKubeconfig(
        simpleKubeconfig({
          name: 'alpha',
          server: a.server,
          caData: Buffer.from(other.caPem).toString('base64'),
          user: { token: CANARY },
        }),
        { cluster: 'alpha', ...clientOpts },
      );
      await record(c4.call('list nodes', () => c4.core.listNode()));

      // 5. invalid kubeconfigs carrying the canary: fake key data, broken YAML, unknown context
      const bad = [
        simpleKubeconfig({
          server: a.server,
          user: { 'client-certificate-data': FAKE_CA_B64, 'client-key-data': CANARY },
        }),
        simpleKubeconfig({ server: a.server, user: { token: CANARY, 'client-key-data': CANARY } }),
        `users:\n- name: u\n  user:\n    token: "${CANARY}\n  x: [\n`,
        `${CANARY}: [unclosed`,
        simpleKubeconfig({ server: a.server, user: { token: CANARY } }).replace(
          /current-context: .*/,
          'current-context: nope',
        ),
        simpleKubeconfig({
          server: a.server,
          user: { token: CANARY },
          clusterExtra: { 'insecure-skip-tls-verify': true },
        }),
        simpleKubeconfig({
          server: a.server,
          user: { exec: { command: 'kubelogin', args: ['--token', CANARY] } },
        }),
      ];
      for (const text of bad) {
        await record(
          Promise.resolve().then(() =>
            ClusterClient.fromKubeconfig(text, { cluster: 'alpha', ...clientOpts }),
          ),
        );
        const f = path.join(dir, `bad-${randomUUID()}.yaml`);
        writeFileSync(f, text);
        await record(connector.get('alpha-bad', { kind: 'file', path: f }));
      }

      // 6. EKS minting with canary credentials: the minted token is rejected (401)
      const minter = new EksTokenMinter({
        credentials: { accessKeyId: `AKID${CANARY}`, secretAccessKey: CANARY, sessionToken: CANARY },
      });
      const eksProvider = {
        token: async (cluster: string, region: string) => {
          const t = await minter.token(cluster, region);
          mintedTokens.push(t);
          return t;
        },
        invalidate: (cluster?: string) => minter.invalidate(cluster),
      };
      const eksKubeconfig = simpleKubeconfig({
        name: 'alpha',
        server: a.server,
        caData,
        user: {
          exec: {
            command: 'aws',
            args: ['eks', 'get-token', '--cluster-name', 'alpha', '--region', 'us-east-1'],
          },
        },
      });
      const c6 = ClusterClient.fromKubeconfig(eksKubeconfig, {
        cluster: 'alpha',
        eksTokens: eksProvider,
        ...clientOpts,
      });
      await record(c6.call('list nodes', () => c6.core.listNode()));
      // and minting fails when the credential provider throws with the canary in its message
      const failing = new EksTokenMinter({
        credentials: async () => {
          throw new Error(`could not use secret ${CANARY}`);
        },
      });
      const c7 = ClusterClient.fromKubeconfig(eksKubeconfig, {
        cluster: 'alpha',
        eksTokens: failing,
        ...clientOpts,
      });
      await record(c7.call('list nodes', () => c7.core.listNode()));

      await connector.close();
      await Promise.all([c2, c4, c6, c7].map((c) => c.close()));
    });

    expect(errors.length).toBeGreaterThanOrEqual(20);
    // Every path above must really have failed: a call that succeeded left a placeholder.
    expect(errors.filter((e) => (e as Error).message === 'expected a failure')).toEqual([]);
    expect(mintedTokens.length).toBeGreaterThan(0);
    const haystacks = [
      output,
      ...errors.flatMap((e) => [
        String(e),
        (e as Error)?.message ?? '',
        (e as Error)?.stack ?? '',
        inspect(e, { depth: 10, showHidden: true }),
        JSON.stringify(e),
      ]),
    ];
    const needles = [
      ...forms(CANARY),
      ...mintedTokens,
      ...mintedTokens.map((t) => t.slice('k8s-aws-v1.'.length)),
    ];
    for (const h of haystacks)
      for (const n of needles)
        expect(h.includes(n), `leak of ${n.slice(0, 12)}… in: ${h.slice(0, 300)}`).toBe(false);
    // the failures were real and say what happened
    const messages = errors.map((e) => (e as Error).message);
    expect(messages.some((m) => m.includes('HTTP 401'))).toBe(true);
    expect(messages.some((m) => m.includes('timed out'))).toBe(true);
    expect(messages.some((m) => m.includes('TLS verification failed'))).toBe(true);
    expect(messages.some((m) => m.includes('not valid YAML'))).toBe(true);
    expect(messages.some((m) => m.includes('credentials for minting an EKS token'))).toBe(true);
    expect(output).toContain('retrying cluster API request');
  });
});
