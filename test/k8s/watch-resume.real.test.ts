/** Taking a list up with a watch, on the real kube-apiserver: the judge of what the simulator does (watch-resume.sim.test.ts). */
import { setTimeout as sleep } from 'node:timers/promises';
import { describeRealApiserver, SKEW_VERSIONS } from '../support/real-apiserver.js';
import { watchResumeSuite } from './watch-resume-suite.js';

describeRealApiserver(
  'watch resume',
  (server, version) => {
    // A real server's watch cache ages its history on wall time: the 410 case waits out what is left
    // of it once the other cases ran.
    watchResumeSuite(
      () => ({
        kubeconfig: server.api().adminKubeconfig,
        cluster: 'real',
        pass: (ms) => sleep(ms),
        now: () => Date.now(),
        minor: Number(server.api().version.split('.')[1]),
      }),
      { expiry: version !== '1.33' },
    );
  },
  { versions: SKEW_VERSIONS },
);
