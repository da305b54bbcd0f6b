/** Pods in protobuf on the real kube-apiserver: the judge of the field numbers (pod-protobuf-suite.ts). */
import { describeRealApiserver, SKEW_VERSIONS } from '../support/real-apiserver.js';
import { podProtobufSuite } from './pod-protobuf-suite.js';

describeRealApiserver(
  'pods read as protobuf',
  (server) => {
    podProtobufSuite(() => ({ kubeconfig: server.api().adminKubeconfig, cluster: 'real' }));
  },
  { versions: SKEW_VERSIONS },
);
