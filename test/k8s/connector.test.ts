/** ClusterConnector caching rules that need no server: TTL, reference checks, failures not cached. */
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { ClusterClient } from '../../shared/k8s/client.js';
import { ClusterConnector } from '../../shared/k8s/connector.js';
import { ClusterAccessError } from '../../shared/k8s/errors.js';
import type { KubeconfigSource } from '../../shared/k8s/kubeconfig-source.js';
import { testDir } from '../support/temp.js';
import { simpleKubeconfig } from './helpers.js';

function setup(text: () => string) {
  let now = 1_000_000;
  const loads: Array<{ fresh: boolean }> = [];
  const source: KubeconfigSource = {
    load: async (_ref, opts) => {
      loads.push({ fresh: opts?.fresh === true });
      return text();
    },
  };
  const connector = new ClusterConnector({
    source,
    secretPrefix: 'fleetscope/clusters/',
    ttlSeconds: 60,
    now: () => now,
  });
  const advance = (ms: number) => {
    now += ms;
  };
  return { connector, loads, advance };
}

const ref = { kind: 'secret' as const, secretId: 'fleetscope/clusters/a' };

describe('ClusterConnector', () => {
  it('reuses a client for the TTL, then rebuilds it from a fresh load', async () => {
    const { connector, loads, advance } = setup(() => simpleKubeconfig({ name: 'a' }));
    const [c1, c1b] = await Promise.all([connector.get('a', ref), connector.get('a', ref)]);
    expect(c1b).toBe(c1);
    advance(59_000);
    expect(await connector.get('a', ref)).toBe(c1);
    advance(1_000);
    const c2 = await connector.get('a', ref);
    expect(c2).not.toBe(c1);
    expect(loads).toHaveLength(2);
  });

  it('reloads bypassing the source cache after invalidation', async () => {
    const { connector, loads } = setup(() => simpleKubeconfig({ name: 'a' }));
    const c1 = await connector.get('a', ref);
    connector.invalidate('a');
    expect(connector.isCached('a')).toBe(false);
    expect(await connector.get('a', ref)).not.toBe(c1);
    expect(loads.map((l) => l.fresh)).toEqual([false, true]);
  });

  it('refuses references outside the secret prefix before loading anything', async () => {
    const { connector, loads } = setup(() => simpleKubeconfig({}));
    const e = (await connector
      .get('a', { kind: 'secret', secretId: 'prod/db-password' })
      .catch((x) => x)) as ClusterAccessError;
    expect(e).toBeInstanceOf(ClusterAccessError);
    expect(e.message).toContain('not under the configured prefix "fleetscope/clusters/"');
    expect(loads).toHaveLength(0);
  });

  it('does not cache a kubeconfig that fails validation', async () => {
    let text = 'not: [valid';
    const { connector, loads } = setup(() => text);
    await expect(connector.get('a', ref)).rejects.toThrow(/not valid YAML/);
    text = simpleKubeconfig({ name: 'a' });
    await expect(connector.get('a', ref)).resolves.toBeInstanceOf(ClusterClient);
    expect(loads).toHaveLength(2);
  });

  it('names the reference when the source fails', async () => {
    const dir = testDir('conn-');
    const connector = new ClusterConnector({ secretPrefix: 'fleetscope/clusters/', ttlSeconds: 60 });
    const e = (await connector
      .get('a', { kind: 'file', path: path.join(dir, 'missing.yaml') })
      .catch((x) => x)) as ClusterAccessError;
    expect(e).toMatchObject({ kind: 'credentials', operation: 'load kubeconfig', cluster: 'a' });
    expect(e.message).toContain('missing.yaml" does not exist');
  });

  it('names a missing kubeconfig file once', async () => {
    const file = path.join(testDir('conn-'), 'missing.yaml');
    const connector = new ClusterConnector({ secretPrefix: 'fleetscope/clusters/', ttlSeconds: 60 });
    const e = (await connector
      .get('demo-1', { kind: 'file', path: file, context: 'demo-1' })
      .catch((x) => x)) as ClusterAccessError;
    expect(e.message).toBe(
      `cluster "demo-1": load kubeconfig failed: kubeconfig file "${file}" does not exist`,
    );
  });
});

describe('ClusterClient', () => {
  it('refuses a hand-built KubeConfig that skips TLS verification', () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'https://x', skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    expect(() => new ClusterClient('c', kc)).toThrow(/insecure-skip-tls-verify/);
  });
});
