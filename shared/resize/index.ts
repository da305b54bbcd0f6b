/**
 * The shared in-place resize mechanism (KEP-1287 pods/resize), used by node-scoped recommendations and,
 * later, by balloon pods. See README.md beside this file.
 */
export { clusterResizeApi, hasResizeSubresource } from './api.js';
export { describeMemoryRefusals, type MemoryLimitRefusal, memoryLimitRefusals } from './memory-refusal.js';
export { desiredDigest, type PlanResult, planResize, type ResizePlan } from './patch.js';
export { rawResizeApi } from './raw-api.js';
export { resizeEventDetail, resizeMetricName } from './report.js';
export {
  type BackoffPolicy,
  DEFAULT_BACKOFF,
  type ResizeApi,
  type ResizeResult,
  Resizer,
  type ResizerOptions,
  type ResizeTarget,
} from './resizer.js';
export { actuated, observeResize, pairOf, type QosClass, qosClassOf, resourcesOf } from './status.js';
export type * from './types.js';
