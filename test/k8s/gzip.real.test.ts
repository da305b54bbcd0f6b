/** Response compression on the real kube-apiserver: the judge of what the simulator does (gzip.sim.test.ts). */
import { describeRealApiserver } from '../support/real-apiserver.js';
import { gzipWireSuite } from './gzip-wire.js';

describeRealApiserver('response compression', (server) => {
  gzipWireSuite(() => ({ kubeconfig: server.api().adminKubeconfig, cluster: 'real' }));
});
