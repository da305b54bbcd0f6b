/**
 * `fleetscope sim --apiserver KUBECONFIG` as a process against a real kube-apiserver: it registers the
 * simulated nodes, Ready and untainted, runs a DaemonSet's pods on them, and stops cleanly on SIGTERM.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { SIMULATED_NODE_LABEL } from '../../local/sim/real/index.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import { type CliRun, startFleetscope } from '../support/cli.js';
import { describeRealApiserver } from '../support/real-apiserver.js';
import { testDir } from '../support/temp.js';

describeRealApiserver(
  'fleetscope sim --apiserver',
  (server) => {
    it('runs simulated nodes for the server until SIGTERM', async () => {
      const file = path.join(testDir('sim-apiserver-'), 'kubeconfig.yaml');
      writeFileSync(file, server.api().adminKubeconfig, { mode: 0o600 });
      const sim = await startFleetscope(['sim', '--apiserver', file, '--nodes', '2'], (o) =>
        o.includes('Ctrl-C stops'),
      );
      const client = ClusterClient.fromKubeconfig(server.api().adminKubeconfig, { cluster: 'cli' });
      let ended: CliRun;
      try {
        expect(sim.out()).toMatch(/2 simulated node\(s\) on https:\/\/127\.0\.0\.1:\d+ \(v1\.36\.\d+\)/);
        expect(sim.out()).toMatch(
          /metrics\.k8s\.io: APIService v1beta1\.metrics\.k8s\.io -> 127\.0\.0\.1:\d+/,
        );
        expect(sim.out()).not.toContain('BEGIN');
        const nodes = await client.core.listNode({ labelSelector: `${SIMULATED_NODE_LABEL}=true` });
        expect(nodes.items).toHaveLength(2);
        await client.apps.createNamespacedDaemonSet({
          namespace: 'default',
          body: {
            metadata: { name: 'd' },
            spec: {
              selector: { matchLabels: { app: 'd' } },
              template: {
                metadata: { labels: { app: 'd' } },
                spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] },
              },
            },
          },
        });
        // The background passes (one a second) create, bind and start the pods.
        await waitFor(
          async () =>
            (
              await client.core.listNamespacedPod({ namespace: 'default', labelSelector: 'app=d' })
            ).items.filter((p) => p.status?.phase === 'Running').length === 2,
          () => `the DaemonSet's pods did not run: ${sim.out()}`,
        );
      } finally {
        ended = await sim.stop('SIGTERM');
        await client.close();
      }
      expect(ended.code, ended.err).toBe(0);
      expect(ended.out).toContain('stopped (SIGTERM)');
      expect(`${ended.out}${ended.err}`).not.toContain('BEGIN');
    }, 120_000);
  },
  { versions: ['1.36'] },
);

/** Polls a condition of another process (real time: the process runs on its own). */
async function waitFor(ok: () => boolean | Promise<boolean>, why: () => string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(why());
}
