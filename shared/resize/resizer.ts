/**
 * The shared in-place resize mechanism: requests a resize through `pods/resize`, re-reads and retries on
 * 409, recognises a server without the subresource, and follows each resize through the kubelet's answer
 * (Deferred: wait, the kubelet retries by itself; Infeasible: record, back off, never retry the same
 * request). It keeps no state of its own between invocations: the caller stores one small ResizeRecord
 * per target and hands it back. Every request and every refusal comes out as a ResizeReport, which the
 * caller turns into an event and a metric.
 */
import { ClusterAccessError } from '../k8s/errors.js';
import { describeMemoryRefusals, memoryLimitRefusals } from './memory-refusal.js';
import { desiredDigest, planResize } from './patch.js';
import { observeResize } from './status.js';
import type {
  DesiredResources,
  PodLike,
  RefusalKind,
  ResizeObservation,
  ResizeRecord,
  ResizeReport,
} from './types.js';

/** The 1.36 resize admission's refusal of a resize the node's allocatable cannot hold (a 403). */
const NODE_CAPACITY = /node didn't have enough allocatable resources/;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

export interface BackoffPolicy {
  /** First wait after Infeasible before a different request may be made (doubles per refusal). */
  infeasibleMs: number;
  /** First wait after the apiserver refused (422, 403) or the kubelet failed to actuate. */
  rejectedMs: number;
  /** First wait after a transient failure (timeouts, 5xx after the client's own retries). */
  errorMs: number;
  /** Ceiling of every wait. */
  maxMs: number;
  /** While Deferred, a changed request replaces the pending one only after this long. */
  deferredChangeMs: number;
}

export const DEFAULT_BACKOFF: Readonly<BackoffPolicy> = Object.freeze({
  infeasibleMs: HOUR,
  rejectedMs: HOUR,
  errorMs: 5 * MINUTE,
  maxMs: 24 * HOUR,
  deferredChangeMs: 15 * MINUTE,
});

/** The two calls the mechanism makes. */
export interface ResizeApi {
  /** PATCH pods/{name}/resize with a strategic-merge patch; resolves to the updated pod. */
  patchResize(namespace: string, name: string, body: object): Promise<PodLike>;
  /** GET the pod; undefined when it does not exist. */
  readPod(namespace: string, name: string): Promise<PodLike | undefined>;
}

export interface ResizeTarget {
  pod: PodLike;
  desired: DesiredResources;
  /**
   * After a 409 the pod is read again and this gives what it should get now (the decision may depend on
   * the pod's current values, e.g. proportional limits). Default: the same desired resources.
   */
  recompute?: (fresh: PodLike) => DesiredResources | undefined;
}

export interface ResizeResult {
  /** What to store for the target until the next invocation (undefined: nothing to remember). */
  record?: ResizeRecord;
  report?: ResizeReport;
  /** HTTP requests made. */
  requests: number;
}

export interface ResizerOptions {
  now?: () => number;
  backoff?: Partial<BackoffPolicy>;
  /** Re-read-and-retry rounds after a 409 (default 2). */
  conflictRetries?: number;
}

const podKey = (pod: PodLike) => ({
  namespace: pod.metadata?.namespace ?? '',
  pod: pod.metadata?.name ?? '',
  podUid: pod.metadata?.uid ?? '',
  ...(pod.spec?.nodeName ? { node: pod.spec.nodeName } : {}),
});

type PodKey = ReturnType<typeof podKey>;

/** One call of {@link Resizer.resize}: the pod and desired resources as last read, and the requests made. */
interface Attempt {
  key: PodKey;
  now: number;
  /** The stored record, when it is this pod's. */
  previous?: ResizeRecord;
  pod: PodLike;
  desired: DesiredResources;
  requests: number;
}

export class Resizer {
  private readonly backoff: BackoffPolicy;
  private readonly now: () => number;
  private readonly conflictRetries: number;
  /** Set once the server has shown it has no pods/resize: no further request in this invocation. */
  unsupported: string | undefined;

  constructor(
    private readonly api: ResizeApi,
    opts: ResizerOptions = {},
  ) {
    this.backoff = { ...DEFAULT_BACKOFF, ...opts.backoff };
    this.now = opts.now ?? Date.now;
    this.conflictRetries = opts.conflictRetries ?? 2;
  }

  private wait(kind: 'infeasible' | 'rejected' | 'error', attempts: number): number {
    const base =
      kind === 'infeasible'
        ? this.backoff.infeasibleMs
        : kind === 'rejected'
          ? this.backoff.rejectedMs
          : this.backoff.errorMs;
    return Math.min(this.backoff.maxMs, base * 2 ** Math.max(0, attempts - 1));
  }

  /**
   * Follows up on an earlier request from the pod's current status: Completed once the spec runs,
   * Deferred or Infeasible when the kubelet says so (reported once, on the transition). A record of
   * another pod (the DaemonSet controller recreated it) is dropped.
   */
  observe(pod: PodLike, record: ResizeRecord | undefined): { record?: ResizeRecord; report?: ResizeReport } {
    if (!record) return {};
    if (record.podUid !== pod.metadata?.uid) return {};
    const now = this.now();
    const obs = observeResize(pod);
    const key = podKey(pod);
    if (record.state === 'requested' || record.state === 'deferred') {
      switch (obs.state) {
        case 'none':
          return {
            report: { kind: 'resized', outcome: 'Completed', ...key, containers: [], at: now },
          };
        case 'deferred':
          if (record.state === 'deferred') return { record };
          return {
            record: { ...record, state: 'deferred', since: now, message: obs.message },
            report: this.refusal('Deferred', obs.message ?? 'the node cannot fit it now', key, now),
          };
        case 'infeasible':
        case 'error': {
          const attempts = record.attempts + 1;
          const kind = obs.state === 'infeasible' ? 'infeasible' : 'rejected';
          const nextAttemptAt = now + this.wait(kind, attempts);
          return {
            record: {
              ...record,
              state: obs.state === 'infeasible' ? 'infeasible' : 'rejected',
              since: now,
              attempts,
              nextAttemptAt,
              message: obs.message,
            },
            report: this.refusal(
              obs.state === 'infeasible' ? 'Infeasible' : 'ActuationError',
              refusalMessage(obs),
              key,
              now,
              nextAttemptAt,
            ),
          };
        }
        default:
          return { record };
      }
    }
    return { record };
  }

  /**
   * Whether a request for `desired` may be made now. A request the kubelet is still working on or has
   * deferred is not repeated; after Infeasible or a refusal only a different request is made, and only
   * once the back-off has passed.
   */
  mayRequest(
    pod: PodLike,
    desired: DesiredResources,
    record: ResizeRecord | undefined,
  ): { ok: true } | { ok: false; why: string } {
    if (this.unsupported) return { ok: false, why: this.unsupported };
    if (!record || record.podUid !== pod.metadata?.uid) return { ok: true };
    const now = this.now();
    const same = record.desired === desiredDigest(desired);
    switch (record.state) {
      case 'requested':
        return same ? { ok: false, why: 'the same resize is in progress' } : { ok: true };
      case 'deferred':
        if (same) return { ok: false, why: 'deferred by the kubelet, which retries it by itself' };
        return now - record.since >= this.backoff.deferredChangeMs
          ? { ok: true }
          : { ok: false, why: 'deferred by the kubelet; a different request waits a while' };
      case 'infeasible':
      case 'rejected':
        if (same) return { ok: false, why: `the same resize was refused (${record.state})` };
        if (record.nextAttemptAt !== undefined && now < record.nextAttemptAt)
          return {
            ok: false,
            why: `backing off after ${record.state} until ${new Date(record.nextAttemptAt).toISOString()}`,
          };
        return { ok: true };
      case 'error':
        if (record.nextAttemptAt !== undefined && now < record.nextAttemptAt)
          return {
            ok: false,
            why: `backing off after an error until ${new Date(record.nextAttemptAt).toISOString()}`,
          };
        return { ok: true };
    }
  }

  /**
   * Requests the resize (when mayRequest allows it; the caller asks first). On 409 the pod is read again
   * and the request rebuilt for it; on 404 a read tells a missing pod from a missing subresource.
   */
  async resize(target: ResizeTarget, record: ResizeRecord | undefined): Promise<ResizeResult> {
    const key = podKey(target.pod);
    const now = this.now();
    if (this.unsupported)
      return { record, report: this.refusal('Unsupported', this.unsupported, key, now), requests: 0 };
    const a: Attempt = {
      key,
      now,
      previous: record && record.podUid === key.podUid ? record : undefined,
      pod: target.pod,
      desired: target.desired,
      requests: 0,
    };
    for (let round = 0; ; round++) {
      const planned = planResize(a.pod, a.desired);
      if (planned.kind === 'noop') return { record: a.previous, requests: a.requests };
      if (planned.kind === 'invalid')
        return this.refused(a, 'Invalid', planned.message, 'rejected', planned.changes);
      const { plan } = planned;
      try {
        a.requests++;
        const updated = await this.api.patchResize(key.namespace, key.pod, plan.body);
        return this.requested(a, updated, plan.changes);
      } catch (err) {
        if (!(err instanceof ClusterAccessError)) throw err;
        if (err.status !== 409 || round >= this.conflictRetries) return this.failed(a, err, plan.changes);
        const settled = await this.rebuildAfterConflict(a, target);
        if (settled) return settled;
      }
    }
  }

  /** The apiserver took the request: Requested, or Infeasible at once when the kubelet already said so. */
  private requested(a: Attempt, updated: PodLike, changes: ResizeReport['containers']): ResizeResult {
    const { key, now } = a;
    const obs = observeResize(updated);
    const base: ResizeRecord = {
      podUid: key.podUid,
      desired: desiredDigest(a.desired),
      state: 'requested',
      since: now,
      attempts: a.previous?.attempts ?? 0,
    };
    if (obs.state !== 'infeasible')
      return {
        record: base,
        report: { kind: 'resized', outcome: 'Requested', ...key, containers: changes, at: now },
        requests: a.requests,
      };
    const attempts = base.attempts + 1;
    const nextAttemptAt = now + this.wait('infeasible', attempts);
    const message = obs.message ?? 'the node can never fit it';
    return {
      record: { ...base, state: 'infeasible', attempts, nextAttemptAt, message: obs.message },
      report: { ...this.refusal('Infeasible', message, key, now, nextAttemptAt), containers: changes },
      requests: a.requests,
    };
  }

  /**
   * After a 409: the pod read again and what it should get now. Undefined when there is a new request to
   * make; a result when there is none (the pod is gone or replaced, or needs nothing any more).
   */
  private async rebuildAfterConflict(a: Attempt, target: ResizeTarget): Promise<ResizeResult | undefined> {
    const { key } = a;
    a.requests++;
    const fresh = await this.readOrUndefined(key.namespace, key.pod);
    if (!fresh || fresh.metadata?.uid !== key.podUid)
      return {
        report: this.refusal('Gone', 'the pod was deleted or replaced', key, a.now),
        requests: a.requests,
      };
    a.pod = fresh;
    const next = target.recompute ? target.recompute(fresh) : a.desired;
    if (!next) return { record: a.previous, requests: a.requests };
    a.desired = next;
    return undefined;
  }

  /** The apiserver refused the request: each status becomes its refusal, backed off as its kind wants. */
  private async failed(
    a: Attempt,
    err: ClusterAccessError,
    changes: ResizeReport['containers'],
  ): Promise<ResizeResult> {
    switch (err.status) {
      case 409:
        return this.refused(a, 'Conflict', err.detail, 'error', changes);
      case 404:
        return this.notFound(a, changes);
      case 422:
        return this.refused(a, 'Invalid', err.detail, 'rejected', changes);
      case 403:
        // From 1.36 the apiserver itself refuses a resize past the node's allocatable (cause
        // NodeCapacity): the node cannot hold it, as the kubelet's Infeasible says; not an RBAC refusal.
        return NODE_CAPACITY.test(err.detail)
          ? this.refused(a, 'Infeasible', err.detail, 'rejected', changes)
          : this.refused(a, 'Forbidden', err.detail, 'rejected', changes);
      default:
        return this.refused(a, 'Error', err.detail, 'error', changes);
    }
  }

  /** A 404 from pods/resize: the pod is gone, or (when it can still be read) the server has no such subresource. */
  private async notFound(a: Attempt, changes: ResizeReport['containers']): Promise<ResizeResult> {
    const { key, now } = a;
    a.requests++;
    const fresh = await this.readOrUndefined(key.namespace, key.pod);
    if (!fresh)
      return { report: this.refusal('Gone', 'the pod no longer exists', key, now), requests: a.requests };
    this.unsupported =
      'the API server has no pods/resize subresource (Kubernetes before 1.32, or InPlacePodVerticalScaling off): recommending only';
    return {
      record: a.previous,
      report: { ...this.refusal('Unsupported', this.unsupported, key, now), containers: changes },
      requests: a.requests,
    };
  }

  /** A refused request, recorded with its back-off so that the same request is not made again meanwhile. */
  private refused(
    a: Attempt,
    refusal: RefusalKind,
    message: string,
    state: 'rejected' | 'error',
    changes: ResizeReport['containers'],
  ): ResizeResult {
    const { key, now } = a;
    const attempts = (a.previous?.attempts ?? 0) + 1;
    const nextAttemptAt = now + this.wait(state, attempts);
    return {
      record: {
        podUid: key.podUid,
        desired: desiredDigest(a.desired),
        state,
        since: now,
        attempts,
        nextAttemptAt,
        message,
      },
      report: { ...this.refusal(refusal, message, key, now, nextAttemptAt), containers: changes },
      requests: a.requests,
    };
  }

  private async readOrUndefined(namespace: string, name: string): Promise<PodLike | undefined> {
    try {
      return await this.api.readPod(namespace, name);
    } catch (err) {
      if (err instanceof ClusterAccessError && err.status === 404) return undefined;
      throw err;
    }
  }

  private refusal(
    refusal: RefusalKind,
    message: string,
    key: PodKey,
    at: number,
    retryAfter?: number,
  ): Extract<ResizeReport, { kind: 'refused' }> {
    return {
      kind: 'refused',
      refusal,
      message,
      ...key,
      containers: [],
      ...(retryAfter !== undefined ? { retryAfter } : {}),
      at,
    };
  }
}

/** What a kubelet's refusal says, a memory-limit refusal in people's units (memory-refusal.ts). */
function refusalMessage(obs: ResizeObservation): string {
  if (obs.state === 'infeasible') return obs.message ?? 'the node can never fit it';
  const below = memoryLimitRefusals(obs.message);
  return below.length > 0 ? describeMemoryRefusals(below) : (obs.message ?? 'actuation failed');
}
