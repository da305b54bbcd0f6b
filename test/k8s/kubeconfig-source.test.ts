import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretsManagerKubeconfigSource } from '../../shared/fleet/secrets-kubeconfig-source.js';
import { FileKubeconfigSource, KubeconfigSourceError } from '../../shared/k8s/kubeconfig-source.js';
import { testDir } from '../support/temp.js';

describe('FileKubeconfigSource', () => {
  it('caches for the TTL and re-reads when asked for a fresh copy', async () => {
    const dir = testDir('kcs-');
    const file = path.join(dir, 'config');
    writeFileSync(file, 'v1');
    let now = 0;
    const src = new FileKubeconfigSource({ ttlSeconds: 60, now: () => now });
    const ref = { kind: 'file' as const, path: file };
    expect(await src.load(ref)).toBe('v1');
    writeFileSync(file, 'v2');
    expect(await src.load(ref)).toBe('v1');
    expect(await src.load(ref, { fresh: true })).toBe('v2');
    writeFileSync(file, 'v3');
    now += 61_000;
    expect(await src.load(ref)).toBe('v3');
  });

  it('names a missing file', async () => {
    const src = new FileKubeconfigSource();
    await expect(src.load({ kind: 'file', path: '/nonexistent/kubeconfig' })).rejects.toThrow(
      'kubeconfig file "/nonexistent/kubeconfig" does not exist',
    );
  });
});

/**
 * A stand-in for the Secrets Manager endpoint (JSON 1.1 protocol), reached the way a LocalStack or
 * other emulator would be: through AWS_ENDPOINT_URL.
 */
describe('SecretsManagerKubeconfigSource', () => {
  let server: Server;
  let calls = 0;
  const secrets = new Map<string, string>([['fleetscope/clusters/a', 'kubeconfig-a-v1']]);
  const saved: Record<string, string | undefined> = {};
  const envVars = {
    AWS_ACCESS_KEY_ID: 'AKIDTEST',
    AWS_SECRET_ACCESS_KEY: 'test-secret',
    AWS_REGION: 'us-east-1',
  };

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        calls++;
        const target = req.headers['x-amz-target'];
        const { SecretId } = JSON.parse(body) as { SecretId: string };
        res.setHeader('content-type', 'application/x-amz-json-1.1');
        const value = secrets.get(SecretId);
        if (target !== 'secretsmanager.GetSecretValue' || value === undefined) {
          res.statusCode = 400;
          res.end(
            JSON.stringify({
              __type: 'ResourceNotFoundException',
              message: "Secrets Manager can't find the specified secret.",
            }),
          );
          return;
        }
        res.end(
          JSON.stringify({
            ARN: `arn:aws:secretsmanager:us-east-1:123456789012:secret:${SecretId}`,
            Name: SecretId,
            SecretString: value,
          }),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    for (const [k, v] of Object.entries({ ...envVars, AWS_ENDPOINT_URL: `http://127.0.0.1:${port}` })) {
      saved[k] = process.env[k];
      process.env[k] = v;
    }
  });

  afterAll(async () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await new Promise<void>((r) => server.close(() => r()));
  });

  it('reads through Powertools with maxAge = TTL, honouring AWS_ENDPOINT_URL; fresh bypasses the cache', async () => {
    const src = new SecretsManagerKubeconfigSource({ ttlSeconds: 300, secretPrefix: 'fleetscope/clusters/' });
    const ref = { kind: 'secret' as const, secretId: 'fleetscope/clusters/a' };
    calls = 0;
    expect(await src.load(ref)).toBe('kubeconfig-a-v1');
    secrets.set('fleetscope/clusters/a', 'kubeconfig-a-v2');
    expect(await src.load(ref)).toBe('kubeconfig-a-v1');
    expect(calls).toBe(1);
    expect(await src.load(ref, { fresh: true })).toBe('kubeconfig-a-v2');
    expect(calls).toBe(2);
  });

  it('names a missing secret and refuses ids outside the prefix', async () => {
    const src = new SecretsManagerKubeconfigSource({ ttlSeconds: 0, secretPrefix: 'fleetscope/clusters/' });
    const missing = src.load({ kind: 'secret', secretId: 'fleetscope/clusters/nope' });
    await expect(missing).rejects.toBeInstanceOf(KubeconfigSourceError);
    await expect(missing).rejects.toThrow('secret "fleetscope/clusters/nope" does not exist');
    await expect(src.load({ kind: 'secret', secretId: 'other/secret' })).rejects.toThrow(
      'is not under the configured prefix "fleetscope/clusters/"',
    );
  });
});
