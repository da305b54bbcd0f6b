/** Response compression over the simulator: the same suite the real kube-apiserver passes (gzip.real.test.ts). */
import { afterAll, beforeAll, describe } from 'vitest';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import { gzipWireSuite } from './gzip-wire.js';

describe('response compression (simulator)', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ clusters: [{ name: 'gzip', nodes: 1, seed: 3 }] });
  });
  afterAll(async () => {
    await sim?.stop();
  });
  gzipWireSuite(() => ({ kubeconfig: sim.kubeconfig(), cluster: 'gzip' }));
});
