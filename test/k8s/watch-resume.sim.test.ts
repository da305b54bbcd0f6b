/** Taking a list up with a watch, over the simulator: the suite the real kube-apiserver passes (watch-resume.real.test.ts). */
import { afterAll, beforeAll, describe } from 'vitest';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import { watchResumeSuite } from './watch-resume-suite.js';

for (const kubernetesVersion of ['1.33.13', '1.36.2'])
  describe(`watch resume (simulator ${kubernetesVersion})`, () => {
    let sim: Simulator;
    beforeAll(async () => {
      sim = await startSimulator({
        clusters: [{ name: 'resume', nodes: 0, controllers: false, kubernetesVersion, seed: 3 }],
      });
    });
    afterAll(async () => {
      await sim?.stop();
    });
    watchResumeSuite(() => ({
      kubeconfig: sim.kubeconfig(),
      cluster: 'resume',
      pass: async (ms) => sim.clock.advance(ms),
      now: () => sim.clock.now(),
      minor: Number(kubernetesVersion.split('.')[1]),
    }));
  });
