/**
 * Capping and limits (upstream pkg/utils/vpa/capping.go and limit_and_request_scaling.go, spec §5).
 *
 * Amounts are millicores for CPU and bytes for memory. The comparison-only steps work on plain numbers;
 * the proportional steps use bigint because upstream multiplies int64 milli-values in big.Int and
 * floors the quotient, which can pass 2^53 long before it passes 2^63.
 */
import type { ResourceName, Resources } from '../model/types.js';
import { RESOURCE_NAMES } from '../model/types.js';

export type ControlledValues = 'RequestsAndLimits' | 'RequestsOnly';
export type ScalingMode = 'Auto' | 'Off';

/** A container's entry of spec.resourcePolicy.containerPolicies (already matched by name or "*"). */
export interface ContainerResourcePolicy {
  mode?: ScalingMode;
  minAllowed?: Resources;
  maxAllowed?: Resources;
  controlledResources?: readonly ResourceName[];
  controlledValues?: ControlledValues;
}

export interface BoundedResources {
  target: Resources;
  lowerBound: Resources;
  upperBound: Resources;
}

/** GetContainerResourcePolicy: the policy named for the container, else the "*" policy. */
export function getContainerResourcePolicy<P extends { containerName?: string }>(
  containerName: string,
  policies: readonly P[] | undefined,
): P | undefined {
  if (!policies) return undefined;
  return (
    policies.find((p) => p.containerName === containerName) ?? policies.find((p) => p.containerName === '*')
  );
}

function capOne(
  values: Resources,
  min: Resources | undefined,
  max: Resources | undefined,
  annotations: string[] | undefined,
  minAction = 'capped to minAllowed',
  maxAction = 'capped to maxAllowed',
): Resources {
  const out: Resources = { ...values };
  for (const r of RESOURCE_NAMES) {
    let v = out[r];
    if (v === undefined) continue;
    // Zero or missing bounds are ignored; the minimum applies first, so a maximum below it wins.
    const lo = min?.[r];
    if (lo !== undefined && lo !== 0 && v < lo) {
      v = lo;
      annotations?.push(`${r} ${minAction}`);
    }
    const hi = max?.[r];
    if (hi !== undefined && hi !== 0 && v > hi) {
      v = hi;
      annotations?.push(`${r} ${maxAction}`);
    }
    out[r] = v;
  }
  return out;
}

/** minAllowed then maxAllowed on one resource list; annotations name what was capped. */
export function capToMinMax(
  values: Resources,
  minAllowed: Resources | undefined,
  maxAllowed: Resources | undefined,
  annotations?: string[],
): Resources {
  return capOne(values, minAllowed, maxAllowed, annotations);
}

/**
 * ApplyVPAPolicy, the recommender's capping post-processor (spec §5.1): the policy's minAllowed and
 * maxAllowed on target, lower and upper bound (not the uncapped target). A resource missing from the
 * policy's maxAllowed is taken from the global --container-recommendation-max-allowed-* value.
 */
export function applyVpaPolicy(
  rec: BoundedResources,
  policy: ContainerResourcePolicy | undefined,
  globalMaxAllowed: Resources = {},
): BoundedResources {
  const minAllowed = policy?.minAllowed;
  let maxAllowed: Resources | undefined = policy?.maxAllowed;
  if (!maxAllowed) maxAllowed = globalMaxAllowed;
  else {
    maxAllowed = { ...maxAllowed };
    for (const r of RESOURCE_NAMES)
      if (!(r in maxAllowed) && globalMaxAllowed[r] !== undefined) maxAllowed[r] = globalMaxAllowed[r];
  }
  return {
    target: capToMinMax(rec.target, minAllowed, maxAllowed),
    lowerBound: capToMinMax(rec.lowerBound, minAllowed, maxAllowed),
    upperBound: capToMinMax(rec.upperBound, minAllowed, maxAllowed),
  };
}

/**
 * capRecommendationToContainerLimit, for controlledValues RequestsOnly (admission and updater): a value
 * above the container's current limit is lowered to it. `limits` should come from
 * status.containerStatuses[].resources when the kubelet reports it, else from the pod spec.
 */
export function capToContainerLimits(
  values: Resources,
  limits: Resources,
  annotations?: string[],
): Resources {
  const out: Resources = { ...values };
  for (const r of RESOURCE_NAMES) {
    const limit = limits[r];
    const v = out[r];
    if (limit !== undefined && v !== undefined && v > limit) {
      out[r] = limit;
      annotations?.push(`${r} capped to container limit`);
    }
  }
  return out;
}

/** The integer amounts of a container's current resources, bigint as Quantity milli/unit values. */
export interface ContainerResources {
  requests?: Resources;
  limits?: Resources;
}

const MAX_INT64 = (1n << 63n) - 1n;

/** scaleQuantityProportionally{CPU,Mem}: floor(scaled × result / base) or MaxInt64 with capped = true. */
function scaleProportionally(
  scaled: bigint,
  base: bigint,
  result: bigint,
): { value: bigint; capped: boolean } {
  const v = (scaled * result) / base;
  if (v > MAX_INT64 || v < -MAX_INT64 - 1n) return { value: MAX_INT64, capped: true };
  return { value: v, capped: false };
}

const present = (q: bigint | undefined): q is bigint => q !== undefined && q !== 0n;

/**
 * getProportionalResourceLimit (spec §5.2.3): the limit that keeps the original limit/request ratio for
 * the recommended request. Amounts are millicores (CPU) or bytes (memory); for CPU the product is taken
 * in millicores, for memory in bytes, both floored. The default limit (LimitRange) stands in for a
 * missing limit. Returns no limit when there is no limit or no recommendation.
 */
export function proportionalLimit(
  resource: ResourceName,
  originalLimit: bigint | undefined,
  originalRequest: bigint | undefined,
  recommendedRequest: bigint | undefined,
  defaultLimit?: bigint,
): { limit?: bigint; annotation?: string } {
  let limit = originalLimit;
  if (!present(limit) && defaultLimit !== undefined) limit = defaultLimit;
  if (!present(limit)) return { annotation: `${resource}: limit NOT set since originalLimit is nil or 0` };
  if (!present(recommendedRequest))
    return { annotation: `${resource}: limit NOT set since recommendedRequest is nil or 0` };
  // A limit without a request: Kubernetes treats them as equal, so the limit follows the request.
  if (!present(originalRequest)) return { limit: recommendedRequest };
  if (originalRequest === limit) return { limit: recommendedRequest };
  const { value, capped } = scaleProportionally(limit, originalRequest, recommendedRequest);
  return capped
    ? {
        limit: value,
        annotation: `${resource}: failed to keep limit to request ratio; capping limit to int64`,
      }
    : { limit: value };
}

/**
 * proportionalLimit on plain amounts (what recommend() has): the same results, in number arithmetic
 * while the product limit × recommended stays within 2^53 (where the quotient is exact in float64),
 * and through the bigint version otherwise.
 */
export function proportionalLimitOfAmounts(
  resource: ResourceName,
  originalLimit: number | undefined,
  originalRequest: number | undefined,
  recommendedRequest: number,
): { limit?: number; annotation?: string } {
  if (
    (originalLimit === undefined || Number.isSafeInteger(originalLimit)) &&
    (originalRequest === undefined || Number.isSafeInteger(originalRequest)) &&
    Number.isSafeInteger(recommendedRequest)
  ) {
    if (originalLimit === undefined || originalLimit === 0)
      return { annotation: `${resource}: limit NOT set since originalLimit is nil or 0` };
    if (recommendedRequest === 0)
      return { annotation: `${resource}: limit NOT set since recommendedRequest is nil or 0` };
    if (originalRequest === undefined || originalRequest === 0 || originalRequest === originalLimit)
      return { limit: recommendedRequest };
    const product = originalLimit * recommendedRequest;
    if (product <= Number.MAX_SAFE_INTEGER && product >= -Number.MAX_SAFE_INTEGER)
      // The quotient truncated as bigint / truncates: exact, the numerator being a multiple of request
      // (+ 0: a zero quotient is 0, never -0).
      return { limit: (product - (product % originalRequest)) / originalRequest + 0 };
  }
  const big = (v: number | undefined) => (v === undefined ? undefined : BigInt(v));
  const p = proportionalLimit(resource, big(originalLimit), big(originalRequest), BigInt(recommendedRequest));
  const out: { limit?: number; annotation?: string } = {};
  if (p.limit !== undefined) out.limit = Number(p.limit);
  if (p.annotation !== undefined) out.annotation = p.annotation;
  return out;
}

/**
 * GetBoundaryRequest: the request that, scaled by the original limit/request ratio, puts the limit at
 * boundaryLimit. Undefined when there is no boundary (no limit, or no boundary value).
 */
export function boundaryRequest(
  originalRequest: bigint | undefined,
  originalLimit: bigint | undefined,
  boundaryLimit: bigint | undefined,
  defaultLimit: bigint | undefined,
): bigint | undefined {
  let limit = originalLimit;
  if (!present(limit) && defaultLimit !== undefined) limit = defaultLimit;
  if (!present(limit)) return undefined;
  if (boundaryLimit === undefined) return undefined;
  if (!present(originalRequest)) return boundaryLimit;
  return scaleProportionally(originalRequest, limit, boundaryLimit).value;
}

/** A LimitRange item of type Container (the lowest max and highest min across objects already chosen). */
export interface ContainerLimitRange {
  min?: Resources;
  max?: Resources;
  default?: Resources;
}

const big = (v: number | undefined): bigint | undefined => (v === undefined ? undefined : BigInt(v));

/**
 * applyContainerLimitRange (admission and updater, spec §5.2.2): the request is kept where the
 * proportionally scaled limit stays within the LimitRange, and at least the LimitRange minimum itself.
 */
export function applyContainerLimitRange(
  values: Resources,
  container: ContainerResources,
  limitRange: ContainerLimitRange | undefined,
  annotations?: string[],
): Resources {
  if (!limitRange) return { ...values };
  const boundary = (which: Resources | undefined): Resources | undefined => {
    if (!which) return undefined;
    const out: Resources = {};
    for (const r of RESOURCE_NAMES) {
      const b = boundaryRequest(
        big(container.requests?.[r]),
        big(container.limits?.[r]),
        big(which[r]),
        big(limitRange.default?.[r]),
      );
      if (b !== undefined) out[r] = Number(b);
    }
    return out;
  };
  const maxAllowed = boundary(limitRange.max);
  let minAllowed = boundary(limitRange.min);
  if (limitRange.min) {
    // Both the limit and the request must be at least the LimitRange minimum.
    minAllowed = { ...minAllowed };
    for (const r of RESOURCE_NAMES) {
      const m = limitRange.min[r];
      const current = minAllowed[r];
      if (m !== undefined && (current === undefined || m > current)) minAllowed[r] = m;
    }
  }
  return capOne(
    values,
    minAllowed,
    maxAllowed,
    annotations,
    'capped to fit Min in container LimitRange',
    'capped to fit Max in container LimitRange',
  );
}

/**
 * What the admission controller and the updater make of a recommendation for one container (spec §5.2):
 * LimitRange, then minAllowed/maxAllowed (no global max here), then, for RequestsOnly, the container's
 * current limits. Annotations come from the target.
 */
export function capForContainer(
  rec: BoundedResources,
  policy: ContainerResourcePolicy | undefined,
  current: ContainerResources,
  limitRange?: ContainerLimitRange,
): BoundedResources & { annotations: string[] } {
  const annotations: string[] = [];
  const process = (values: Resources, notes: string[] | undefined): Resources => {
    let v = applyContainerLimitRange(values, current, limitRange, notes);
    v = capToMinMax(v, policy?.minAllowed, policy?.maxAllowed, notes);
    if (policy?.controlledValues === 'RequestsOnly' && current.limits)
      v = capToContainerLimits(v, current.limits, notes);
    return v;
  };
  return {
    target: process(rec.target, annotations),
    lowerBound: process(rec.lowerBound, undefined),
    upperBound: process(rec.upperBound, undefined),
    annotations,
  };
}
