import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startDemoFleet } from '../../local/demo-fleet.js';
import { nodescopeClock } from '../../shared/nodescope/clock.js';

describe('the demo fleet', () => {
  it('runs a node agent whose load differs widely between nodes, with a node-scoped VPA', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fleetscope-demo-'));
    const fleet = await startDemoFleet({
      clusters: 2,
      nodes: 6,
      kubeconfigPath: join(dir, 'k.yaml'),
      clockSpeedup: 1,
    });
    try {
      const c1 = fleet.sim.cluster('demo-1').store;
      const vpas = c1.list('verticalpodautoscalers.autoscaling.k8s.io');
      expect(
        vpas.map((v) => [
          v.metadata.name,
          v.metadata.annotations['fleetscope.io/scope'],
          v.spec.updatePolicy.updateMode,
        ]),
      ).toEqual([
        ['netd', 'node', 'Off'],
        ['node-agent', 'node', 'Auto'],
      ]);
      expect(c1.list('pods', 'monitoring').length).toBeGreaterThan(0);
      // nodescope's clock follows the clusters' simulated clock while the demo runs.
      expect(nodescopeClock()()).toBe(fleet.sim.clock.now());
    } finally {
      await fleet.stop();
      await rm(dir, { recursive: true, force: true });
    }
    // Stopping the demo hands nodescope back the wall clock itself.
    expect(nodescopeClock()).toBe(Date.now);
  });
});
