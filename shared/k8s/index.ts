/** fleetscope's cluster access layer: one import for handlers. */
export {
  type CallOptions,
  ClusterClient,
  type ClusterClientOptions,
  type ClusterClientStats,
  type ClusterLogger,
  DEFAULT_PAGE_SIZE,
  DEFAULT_TIMEOUT_MS,
  type ListAllOptions,
  type ListPage,
  type PageRequest,
  type PatchType,
  patchOptions,
} from './client.js';
export { ClusterConnector, type ClusterConnectorOptions, type ConnectorStats } from './connector.js';
export { ClusterAccessError, type FailureKind, KubeconfigError } from './errors.js';
export { type BuiltKubeConfig, buildKubeConfig, type KubeconfigInfo } from './kubeconfig.js';
export {
  describeKubeconfigRef,
  type KubeconfigRef,
  kubeconfigRefProblem,
  parseKubeconfigRef,
} from './kubeconfig-ref.js';
export {
  FileKubeconfigSource,
  type KubeconfigSource,
  KubeconfigSourceError,
  KubeconfigSources,
} from './kubeconfig-source.js';
export { redact, redactFields, registerSecret } from './redact.js';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry.js';
export { EksTokenError, type EksTokenProvider, noEksTokens } from './token-source.js';
