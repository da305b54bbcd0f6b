/**
 * The Events a real cluster records about pods (`kubectl get events`), derived from the changes the
 * simulated controllers and kubelets make, so the event recorder needs no hook inside them:
 * - daemonset-controller: SuccessfulCreate "Created pod: <name>" on the DaemonSet;
 * - default-scheduler: Scheduled "Successfully assigned <ns>/<pod> to <node>"; and, told by the
 *   scheduler, FailedScheduling (the FitError message) and Preempted on a victim;
 * - kubelet: Pulled/Created/Started per container when the pod starts, Killing when it is deleted,
 *   the admission failure (OutOfcpu, OutOfmemory) as a Warning, and the resize outcomes of 1.33+
 *   kubelets: ResizeStarted, ResizeCompleted (Normal), ResizeDeferred, ResizeInfeasible (Warning), with
 *   the message of kubelet/events PodResize*Msg: `Pod resize <outcome>: {"containers":[...],"generation":N}`.
 * Events are core/v1 Events as the client-go recorder writes them (name `<object>.<hex time>`, count 1).
 */
import { rfc3339 } from './clock.js';
import { isObject, type Json, type JsonObject } from './json.js';
import { orderTop } from './objects.js';
import type { SimState, Strategy } from './state.js';
import type { StoreEvent } from './store.js';

/** Go field order of a core/v1 Event after its metadata. */
const EVENT_FIELDS = [
  'involvedObject',
  'reason',
  'message',
  'source',
  'firstTimestamp',
  'lastTimestamp',
  'count',
  'type',
  'eventTime',
  'series',
  'action',
  'related',
  'reportingComponent',
  'reportingInstance',
];

/**
 * What a real server writes for a core/v1 Event's fields the writer left out: they are not omitempty
 * (the times are structs, which omitempty never leaves out), so they come back empty.
 */
const EVENT_UNSET = {
  source: {},
  firstTimestamp: null,
  lastTimestamp: null,
  eventTime: null,
  reportingComponent: '',
  reportingInstance: '',
};

/** core/v1 Events written through the API, as a real server stores them. */
export function eventStrategy(): Strategy {
  return {
    nameRule: 'subdomain',
    normalize: (e) => orderTop({ ...EVENT_UNSET, ...e }, EVENT_FIELDS),
  };
}

const SCHEDULER = { component: 'default-scheduler' };

interface Source {
  component: string;
  host?: string;
}

const condition = (pod: Json, type: string) =>
  (pod?.status?.conditions ?? []).find((c: Json) => c?.type === type) as Json | undefined;

const running = (pod: Json) => pod?.status?.phase === 'Running';

/** kubelet/events podResizeMessage: the spec's resources per container, the generation, an error. */
function resizeSummary(pod: Json, error?: string): string {
  const entry = (c: Json) => {
    const r = c.resources ?? {};
    const resources: JsonObject = {};
    if (isObject(r.limits)) resources.limits = r.limits;
    if (isObject(r.requests)) resources.requests = r.requests;
    return { name: c.name, resources };
  };
  const out: JsonObject = {};
  const init = (pod.spec?.initContainers ?? []).map(entry);
  if (init.length) out.initContainers = init;
  out.containers = (pod.spec?.containers ?? []).map(entry);
  out.generation = pod.metadata?.generation ?? 0;
  if (error) out.error = error;
  return JSON.stringify(out);
}

export class EventRecorder {
  private seq = 0;

  constructor(private readonly cluster: SimState) {}

  onEvent(ev: StoreEvent): void {
    if (ev.collection !== 'pods') return;
    if (ev.type === 'DELETED') {
      this.deleted(ev.prev);
      return;
    }
    const pod = ev.object;
    const prev = ev.type === 'ADDED' ? undefined : ev.prev;
    if (!prev) this.created(pod);
    const { namespace, name } = pod.metadata;
    if (pod.spec?.nodeName && !prev?.spec?.nodeName)
      this.record(
        pod,
        SCHEDULER,
        'Normal',
        'Scheduled',
        `Successfully assigned ${namespace}/${name} to ${pod.spec.nodeName}`,
      );
    if (running(pod) && !running(prev)) this.started(pod);
    const reason = pod.status?.reason;
    if (pod.status?.phase === 'Failed' && /^OutOf/.test(reason ?? '') && prev?.status?.reason !== reason)
      this.byKubelet(pod, 'Warning', reason, pod.status.message ?? '');
    if (this.cluster.features.resizeConditions) this.resize(pod, prev);
  }

  /** The scheduler found no node (or preempts for this pod, which binds at once here). */
  failedScheduling(pod: Json, message: string): void {
    this.record(pod, SCHEDULER, 'Warning', 'FailedScheduling', message);
  }

  /** kube-scheduler's preemption: "Preempted by pod <preemptor UID> on node <node>" on the victim. */
  preempted(victim: Json, preemptor: Json, node: string): void {
    const message = `Preempted by pod ${preemptor.metadata.uid} on node ${node}`;
    this.record(victim, SCHEDULER, 'Normal', 'Preempted', message);
  }

  private byKubelet(pod: Json, type: string, reason: string, message: string, fieldPath?: string): void {
    this.record(pod, { component: 'kubelet', host: pod.spec?.nodeName }, type, reason, message, fieldPath);
  }

  private created(pod: Json): void {
    const owner = (pod.metadata?.ownerReferences ?? []).find(
      (o: Json) => o.kind === 'DaemonSet' && o.controller,
    );
    const ds = owner && this.cluster.store.get('daemonsets.apps', `${pod.metadata.namespace}/${owner.name}`);
    if (ds)
      this.record(
        ds,
        { component: 'daemonset-controller' },
        'Normal',
        'SuccessfulCreate',
        `Created pod: ${pod.metadata.name}`,
      );
  }

  private started(pod: Json): void {
    for (const c of pod.spec?.containers ?? []) {
      const at = `spec.containers{${c.name}}`;
      this.byKubelet(pod, 'Normal', 'Pulled', `Container image "${c.image}" already present on machine`, at);
      this.byKubelet(pod, 'Normal', 'Created', `Created container: ${c.name}`, at);
      this.byKubelet(pod, 'Normal', 'Started', `Started container ${c.name}`, at);
    }
  }

  private deleted(pod: Json): void {
    if (!running(pod) || !pod.spec?.nodeName) return;
    for (const c of pod.spec.containers ?? [])
      this.byKubelet(pod, 'Normal', 'Killing', `Stopping container ${c.name}`, `spec.containers{${c.name}}`);
  }

  /** The kubelet's resize events, on the transitions of PodResizePending and PodResizeInProgress. */
  private resize(pod: Json, prev: Json): void {
    const pending = condition(pod, 'PodResizePending');
    const before = condition(prev, 'PodResizePending');
    const { reason, message } = pending ?? {};
    if (pending && (reason !== before?.reason || message !== before?.message))
      this.byKubelet(
        pod,
        'Warning',
        `Resize${reason}`,
        `Pod resize ${reason}: ${resizeSummary(pod, message)}`,
      );
    const progress = condition(pod, 'PodResizeInProgress');
    const wasInProgress = condition(prev, 'PodResizeInProgress');
    if (progress && !wasInProgress)
      this.byKubelet(pod, 'Normal', 'ResizeStarted', `Pod resize started: ${resizeSummary(pod)}`);
    if (!progress && wasInProgress && !pending)
      this.byKubelet(pod, 'Normal', 'ResizeCompleted', `Pod resize completed: ${resizeSummary(pod)}`);
  }

  private record(
    obj: Json,
    source: Source,
    type: string,
    reason: string,
    message: string,
    fieldPath?: string,
  ): void {
    const now = this.cluster.clock.now();
    const ns = obj.metadata.namespace ?? 'default';
    // client-go's recorder: "<name>.<hex of the time in ns>"; a counter keeps names unique at one instant.
    const name = `${obj.metadata.name}.${(BigInt(now) * 1_000_000n + BigInt(this.seq++ % 1_000_000)).toString(16)}`;
    const involvedObject: JsonObject = {
      kind: obj.kind,
      namespace: ns,
      name: obj.metadata.name,
      uid: obj.metadata.uid,
      apiVersion: obj.apiVersion,
      resourceVersion: obj.metadata.resourceVersion,
    };
    if (fieldPath) involvedObject.fieldPath = fieldPath;
    const t = rfc3339(now);
    this.cluster.internalWrite('events', `${ns}/${name}`, {
      kind: 'Event',
      apiVersion: 'v1',
      metadata: { name, namespace: ns },
      involvedObject,
      reason,
      message,
      source: source.host
        ? { component: source.component, host: source.host }
        : { component: source.component },
      firstTimestamp: t,
      lastTimestamp: t,
      count: 1,
      type,
      eventTime: null,
      reportingComponent: source.component,
      reportingInstance: source.host ?? '',
    });
  }
}
