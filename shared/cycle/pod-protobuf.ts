/**
 * A page of pods read from Kubernetes protobuf into the PodObject the views read (wire.ts), and only
 * that: one pass over the bytes that reads the fields a view uses and skips every other one (managed
 * fields, volumes, probes, env) by its length, building the objects a view reads directly. A page of
 * DaemonSet pods decodes in well under half the CPU of JSON.parse, and leaves little garbage.
 * Field numbers are those of the upstream generated.proto files (k8s.io/api core/v1, apimachinery
 * meta/v1), written out once as POD_SCHEMA (the simulator encodes its answers with it). What the
 * decoder gives equals what JSON gives, view for view: test/cycle/pod-protobuf-suite.ts, over the real
 * kube-apiserver (1.33, 1.36) and over the simulator.
 */
import protobuf from 'protobufjs';
import { unwrap } from '../k8s/protobuf.js';
import type { ListObject } from '../k8s/raw-reader.js';
import type {
  ContainerSpec,
  ContainerStatusLike,
  NodeSelectorRequirement,
  NodeSelectorTerm,
  ObjectMeta,
  PodObject,
  Quantities,
} from './wire.js';

export const POD_SCHEMA = `
syntax = "proto2";
package pod;
message Time { optional int64 seconds = 1; optional int32 nanos = 2; }
message Quantity { optional string string = 1; }
message ListMeta { optional string selfLink = 1; optional string resourceVersion = 2; optional string continue = 3; optional int64 remainingItemCount = 4; }
message OwnerReference { optional string kind = 1; optional string name = 3; optional string uid = 4; optional string apiVersion = 5; optional bool controller = 6; }
message ObjectMeta {
  optional string name = 1; optional string namespace = 3; optional string uid = 5; optional string resourceVersion = 6;
  optional int64 generation = 7; optional Time creationTimestamp = 8; optional Time deletionTimestamp = 9;
  map<string, string> labels = 11; map<string, string> annotations = 12; repeated OwnerReference ownerReferences = 13;
}
message ResourceRequirements { map<string, Quantity> limits = 1; map<string, Quantity> requests = 2; }
message Container { optional string name = 1; optional ResourceRequirements resources = 8; optional string restartPolicy = 24; }
message NodeSelectorRequirement { optional string key = 1; optional string operator = 2; repeated string values = 3; }
message NodeSelectorTerm { repeated NodeSelectorRequirement matchExpressions = 1; repeated NodeSelectorRequirement matchFields = 2; }
message NodeSelector { repeated NodeSelectorTerm nodeSelectorTerms = 1; }
message NodeAffinity { optional NodeSelector requiredDuringSchedulingIgnoredDuringExecution = 1; }
message Affinity { optional NodeAffinity nodeAffinity = 1; }
message PodSchedulingGate { optional string name = 1; }
message Toleration { optional string key = 1; optional string operator = 2; optional string value = 3; optional string effect = 4; optional int64 tolerationSeconds = 5; }
message PodSpec {
  repeated Container containers = 2; map<string, string> nodeSelector = 7; optional string nodeName = 10;
  optional Affinity affinity = 18; optional string schedulerName = 19;
  repeated Container initContainers = 20; repeated Toleration tolerations = 22; optional int32 priority = 25;
  optional string preemptionPolicy = 31; map<string, Quantity> overhead = 32;
  repeated PodSchedulingGate schedulingGates = 38; optional ResourceRequirements resources = 40;
}
message PodCondition { optional string type = 1; optional string status = 2; optional string reason = 5; optional string message = 6; optional int64 observedGeneration = 7; }
message ContainerStateTerminated { optional string reason = 3; optional Time startedAt = 5; optional Time finishedAt = 6; }
message ContainerState { optional ContainerStateTerminated terminated = 3; }
message ContainerStatus {
  optional string name = 1; optional ContainerState state = 2; optional ContainerState lastState = 3; optional int32 restartCount = 5;
  map<string, Quantity> allocatedResources = 10; optional ResourceRequirements resources = 11;
}
message PodStatus {
  optional string phase = 1; repeated PodCondition conditions = 2; optional Time startTime = 7; repeated ContainerStatus containerStatuses = 8;
  optional string qosClass = 9; repeated ContainerStatus initContainerStatuses = 10; optional string nominatedNodeName = 11;
  optional string resize = 14; map<string, Quantity> allocatedResources = 19; optional ResourceRequirements resources = 20;
}
message Pod { optional ObjectMeta metadata = 1; optional PodSpec spec = 2; optional PodStatus status = 3; }
message PodList { optional ListMeta metadata = 1; repeated Pod items = 2; }
`;

let root: protobuf.Root | undefined;
/** The schema, for the simulator's encoder and the tests (the decoder below reads the same numbers). */
export function podSchema(): protobuf.Root {
  root ??= protobuf.parse(POD_SCHEMA, { keepCase: true }).root;
  return root;
}

type Reader = protobuf.Reader;
type PodSpec = NonNullable<PodObject['spec']>;
type PodStatus = NonNullable<PodObject['status']>;
type Condition = NonNullable<PodStatus['conditions']>[number];
type Toleration = NonNullable<PodSpec['tolerations']>[number];
type Terminated = NonNullable<NonNullable<ContainerStatusLike['state']>['terminated']>;

const LEN = 2;
/** A repeated field's next element (the list made at the first). */
const push = <T>(list: T[] | undefined, item: T): T[] => {
  if (!list) return [item];
  list.push(item);
  return list;
};
/** Where the length-delimited field that starts here ends. */
const end = (r: Reader) => r.uint32() + r.pos;
/** The field's wire type is the schema's; a field of another (or unknown) is skipped, as protobuf readers do. */
const isLen = (tag: number) => (tag & 7) === LEN;
const isVarint = (tag: number) => (tag & 7) === 0;

/** A page of pods (a PodList in its envelope) as the JSON list a view reads. */
export function podListFromProtobuf(body: Uint8Array): ListObject<PodObject> {
  const { kind, raw } = unwrap(body);
  if (kind !== 'PodList') throw new Error(`a ${kind || 'message'} where a PodList was expected`);
  const r = protobuf.Reader.create(raw);
  const items: PodObject[] = [];
  const metadata: { resourceVersion?: string; continue?: string } = {};
  while (r.pos < r.len) {
    const tag = r.uint32();
    if (tag >>> 3 === 1 && isLen(tag)) {
      const e = end(r);
      while (r.pos < e) {
        const t = r.uint32();
        const f = t >>> 3;
        if (f === 2 && isLen(t)) metadata.resourceVersion = r.string() || undefined;
        else if (f === 3 && isLen(t)) metadata.continue = r.string() || undefined;
        else r.skipType(t & 7);
      }
    } else if (tag >>> 3 === 2 && isLen(tag)) items.push(pod(r, end(r)));
    else r.skipType(tag & 7);
  }
  return { items, metadata };
}

function pod(r: Reader, e: number): PodObject {
  const out: PodObject = {};
  while (r.pos < e) {
    const tag = r.uint32();
    const f = tag >>> 3;
    if (f === 1 && isLen(tag)) out.metadata = objectMeta(r, end(r));
    else if (f === 2 && isLen(tag)) out.spec = podSpec(r, end(r));
    else if (f === 3 && isLen(tag)) out.status = podStatus(r, end(r));
    else r.skipType(tag & 7);
  }
  return out;
}

// Go writes every non-pointer field, zero or not, where JSON leaves a zero `omitempty` field out: a
// zero string or number of such a field reads as absent; a pointer field (priority, controller,
// tolerationSeconds, a container's restartPolicy, resources) is present exactly when written.
const str = (r: Reader) => r.string() || undefined;
/**
 * The texts many pods share (namespaces, node and container names, phases, condition types, map keys)
 * as one string each: the views keep them, and a fresh copy per pod is that many more objects for
 * every garbage collection to copy and mark (JSON.parse shares short strings the same way).
 */
const shared = (r: Reader) => intern(r.string());
const named = (r: Reader) => intern(r.string()) || undefined;
const interned = new Map<string, string>();
function intern(s: string): string {
  // A long text (an annotation's JSON) is rarely shared and dear to hash: kept as it came.
  if (s.length > 64) return s;
  const known = interned.get(s);
  if (known !== undefined) return known;
  if (interned.size >= 50_000) interned.clear();
  interned.set(s, s);
  return s;
}
const int = (r: Reader) => Number(r.int64()) || undefined;

function objectMeta(r: Reader, e: number): ObjectMeta {
  const m: ObjectMeta = {};
  while (r.pos < e) {
    const tag = r.uint32();
    const f = tag >>> 3;
    if (f === 1 && isLen(tag)) m.name = str(r);
    else if (f === 3 && isLen(tag)) m.namespace = named(r);
    else if (f === 5 && isLen(tag)) m.uid = str(r);
    else if (f === 6 && isLen(tag)) m.resourceVersion = str(r);
    else if (f === 7 && isVarint(tag)) m.generation = int(r);
    else if (f === 8 && isLen(tag)) m.creationTimestamp = time(r, end(r));
    else if (f === 9 && isLen(tag)) m.deletionTimestamp = time(r, end(r));
    else if (f === 11 && isLen(tag)) m.labels = entry(r, end(r), m.labels ?? {});
    else if (f === 12 && isLen(tag)) m.annotations = entry(r, end(r), m.annotations ?? {});
    else if (f === 13 && isLen(tag)) m.ownerReferences = push(m.ownerReferences, ownerReference(r, end(r)));
    else r.skipType(tag & 7);
  }
  return m;
}

function ownerReference(r: Reader, e: number): NonNullable<ObjectMeta['ownerReferences']>[number] {
  const o: NonNullable<ObjectMeta['ownerReferences']>[number] = {};
  while (r.pos < e) {
    const tag = r.uint32();
    const f = tag >>> 3;
    if (f === 1 && isLen(tag)) o.kind = named(r);
    else if (f === 3 && isLen(tag)) o.name = named(r);
    else if (f === 4 && isLen(tag)) o.uid = named(r);
    else if (f === 6 && isVarint(tag)) o.controller = r.bool();
    else r.skipType(tag & 7);
  }
  return o;
}

/**
 * metav1.Time, in whole seconds. Go's zero time is written as an empty message (time_proto.go marshals
 * nothing for it) where JSON writes null: it reads as absent, as does a message without seconds.
 */
function time(r: Reader, e: number): string | undefined {
  let seconds: number | undefined;
  while (r.pos < e) {
    const tag = r.uint32();
    if (tag >>> 3 === 1 && isVarint(tag)) seconds = Number(r.int64());
    else r.skipType(tag & 7);
  }
  if (seconds === undefined) return undefined;
  // A list's pods were mostly created and started in bursts: the last text is often the next one.
  if (seconds !== lastTime.seconds)
    lastTime = { seconds, text: new Date(seconds * 1000).toISOString().replace('.000Z', 'Z') };
  return lastTime.text;
}
let lastTime = { seconds: Number.NaN, text: '' };

/** One map<string, string> entry (key 1, value 2) into `into`. */
function entry(r: Reader, e: number, into: Record<string, string>): Record<string, string> {
  let key = '';
  let value = '';
  while (r.pos < e) {
    const tag = r.uint32();
    if (tag >>> 3 === 1 && isLen(tag)) key = shared(r);
    else if (tag >>> 3 === 2 && isLen(tag)) value = shared(r);
    else r.skipType(tag & 7);
  }
  into[key] = value;
  return into;
}

/** One map<string, Quantity> entry into `into`. */
function quantityEntry(r: Reader, e: number, into: Quantities): Quantities {
  let key = '';
  let value = '0';
  while (r.pos < e) {
    const tag = r.uint32();
    if (tag >>> 3 === 1 && isLen(tag)) key = shared(r);
    else if (tag >>> 3 === 2 && isLen(tag)) {
      const qe = end(r);
      while (r.pos < qe) {
        const t = r.uint32();
        if (t >>> 3 === 1 && isLen(t)) value = r.string() || '0';
        else r.skipType(t & 7);
      }
    } else r.skipType(tag & 7);
  }
  into[key] = value;
  return into;
}

function requirements(r: Reader, e: number): { requests?: Quantities; limits?: Quantities } {
  const out: { requests?: Quantities; limits?: Quantities } = {};
  while (r.pos < e) {
    const tag = r.uint32();
    const f = tag >>> 3;
    if (f === 1 && isLen(tag)) out.limits = quantityEntry(r, end(r), out.limits ?? {});
    else if (f === 2 && isLen(tag)) out.requests = quantityEntry(r, end(r), out.requests ?? {});
    else r.skipType(tag & 7);
  }
  return out;
}

function container(r: Reader, e: number): ContainerSpec {
  const c: ContainerSpec = { name: '' };
  while (r.pos < e) {
    const tag = r.uint32();
    const f = tag >>> 3;
    if (f === 1 && isLen(tag)) c.name = shared(r);
    else if (f === 8 && isLen(tag)) c.resources = requirements(r, end(r));
    else if (f === 24 && isLen(tag)) c.restartPolicy = named(r);
    else r.skipType(tag & 7);
  }
  return c;
}

function toleration(r: Reader, e: number): Toleration {
  const t = {} as Toleration & { tolerationSeconds?: number };
  while (r.pos < e) {
    const tag = r.uint32();
    const f = tag >>> 3;
    if (f === 1 && isLen(tag)) t.key = named(r) as string;
    else if (f === 2 && isLen(tag)) t.operator = named(r) as Toleration['operator'];
    else if (f === 3 && isLen(tag)) t.value = named(r);
    else if (f === 4 && isLen(tag)) t.effect = named(r) as Toleration['effect'];
    else if (f === 5 && isVarint(tag)) t.tolerationSeconds = Number(r.int64());
    else r.skipType(tag & 7);
  }
  return t;
}

function podSpec(r: Reader, e: number): PodSpec {
  const s: PodSpec = {};
  while (r.pos < e) {
    const tag = r.uint32();
    const f = tag >>> 3;
    if (f === 2 && isLen(tag)) s.containers = push(s.containers, container(r, end(r)));
    else if (f === 7 && isLen(tag)) s.nodeSelector = entry(r, end(r), s.nodeSelector ?? {});
    else if (f === 10 && isLen(tag)) s.nodeName = named(r);
    else if (f === 20 && isLen(tag)) s.initContainers = push(s.initContainers, container(r, end(r)));
    else if (f === 18 && isLen(tag)) s.affinity = affinity(r, end(r));
    else if (f === 19 && isLen(tag)) s.schedulerName = named(r);
    else if (f === 22 && isLen(tag)) s.tolerations = push(s.tolerations, toleration(r, end(r)));
    else if (f === 25 && isVarint(tag)) s.priority = r.int32();
    else if (f === 31 && isLen(tag)) s.preemptionPolicy = named(r);
    else if (f === 38 && isLen(tag)) s.schedulingGates = push(s.schedulingGates, { name: nameOf(r, end(r)) });
    else if (f === 32 && isLen(tag)) s.overhead = quantityEntry(r, end(r), s.overhead ?? {});
    else if (f === 40 && isLen(tag)) s.resources = requirements(r, end(r));
    else r.skipType(tag & 7);
  }
  return s;
}

/** A message whose field 1 is a string (a scheduling gate's name). */
function nameOf(r: Reader, e: number): string | undefined {
  let name: string | undefined;
  while (r.pos < e) {
    const tag = r.uint32();
    if (tag >>> 3 === 1 && isLen(tag)) name = named(r);
    else r.skipType(tag & 7);
  }
  return name;
}

/** Only the required node affinity is read (where a pod may land); the rest is skipped. */
function affinity(r: Reader, e: number): PodSpec['affinity'] {
  let terms: NodeSelectorTerm[] | undefined;
  const into = (fe: number, each: (fe2: number) => void) => {
    while (r.pos < fe) {
      const tag = r.uint32();
      if (tag >>> 3 === 1 && isLen(tag)) each(end(r));
      else r.skipType(tag & 7);
    }
  };
  // Affinity.nodeAffinity(1) -> NodeAffinity.required(1) -> NodeSelector.nodeSelectorTerms(1, repeated)
  into(e, (a) => into(a, (n) => into(n, (t) => (terms = push(terms, selectorTerm(r, t))))));
  return terms
    ? { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } }
    : {};
}

function selectorTerm(r: Reader, e: number): NodeSelectorTerm {
  const t: NodeSelectorTerm = {};
  while (r.pos < e) {
    const tag = r.uint32();
    const f = tag >>> 3;
    if (f === 1 && isLen(tag)) t.matchExpressions = push(t.matchExpressions, requirement(r, end(r)));
    else if (f === 2 && isLen(tag)) t.matchFields = push(t.matchFields, requirement(r, end(r)));
    else r.skipType(tag & 7);
  }
  return t;
}

function requirement(r: Reader, e: number): NodeSelectorRequirement {
  const q: NodeSelectorRequirement = {};
  while (r.pos < e) {
    const tag = r.uint32();
    const f = tag >>> 3;
    if (f === 1 && isLen(tag)) q.key = named(r);
    else if (f === 2 && isLen(tag)) q.operator = named(r);
    else if (f === 3 && isLen(tag)) q.values = push(q.values, shared(r));
    else r.skipType(tag & 7);
  }
  return q;
}

function condition(r: Reader, e: number): Condition {
  const c: Condition = { type: '', status: '' };
  while (r.pos < e) {
    const tag = r.uint32();
    const f = tag >>> 3;
    if (f === 1 && isLen(tag)) c.type = shared(r);
    else if (f === 2 && isLen(tag)) c.status = shared(r);
    else if (f === 5 && isLen(tag)) c.reason = named(r);
    else if (f === 6 && isLen(tag)) c.message = str(r);
    else if (f === 7 && isVarint(tag)) c.observedGeneration = int(r);
    else r.skipType(tag & 7);
  }
  return c;
}

/** A ContainerState: only a termination is read (an OOM kill's times). */
function state(r: Reader, e: number): ContainerStatusLike['state'] {
  let terminated: Terminated | undefined;
  while (r.pos < e) {
    const tag = r.uint32();
    if (tag >>> 3 === 3 && isLen(tag)) {
      const te = end(r);
      terminated = {};
      while (r.pos < te) {
        const t = r.uint32();
        const f = t >>> 3;
        if (f === 3 && isLen(t)) terminated.reason = named(r);
        else if (f === 5 && isLen(t)) terminated.startedAt = time(r, end(r));
        else if (f === 6 && isLen(t)) terminated.finishedAt = time(r, end(r));
        else r.skipType(t & 7);
      }
    } else r.skipType(tag & 7);
  }
  return terminated ? { terminated } : undefined;
}

function containerStatus(r: Reader, e: number): ContainerStatusLike {
  const s: ContainerStatusLike = { name: '' };
  while (r.pos < e) {
    const tag = r.uint32();
    const f = tag >>> 3;
    if (f === 1 && isLen(tag)) s.name = shared(r);
    else if (f === 2 && isLen(tag)) s.state = state(r, end(r));
    else if (f === 3 && isLen(tag)) s.lastState = state(r, end(r));
    else if (f === 5 && isVarint(tag)) s.restartCount = r.int32();
    else if (f === 10 && isLen(tag))
      s.allocatedResources = quantityEntry(r, end(r), s.allocatedResources ?? {});
    else if (f === 11 && isLen(tag)) s.resources = requirements(r, end(r));
    else r.skipType(tag & 7);
  }
  return s;
}

function podStatus(r: Reader, e: number): PodStatus {
  const s: PodStatus = {};
  while (r.pos < e) {
    const tag = r.uint32();
    const f = tag >>> 3;
    if (f === 1 && isLen(tag)) s.phase = named(r);
    else if (f === 2 && isLen(tag)) s.conditions = push(s.conditions, condition(r, end(r)));
    else if (f === 7 && isLen(tag)) s.startTime = time(r, end(r));
    else if (f === 8 && isLen(tag))
      s.containerStatuses = push(s.containerStatuses, containerStatus(r, end(r)));
    else if (f === 9 && isLen(tag)) s.qosClass = named(r);
    else if (f === 10 && isLen(tag))
      s.initContainerStatuses = push(s.initContainerStatuses, containerStatus(r, end(r)));
    else if (f === 11 && isLen(tag)) s.nominatedNodeName = named(r);
    else if (f === 14 && isLen(tag)) s.resize = str(r);
    else if (f === 19 && isLen(tag))
      s.allocatedResources = quantityEntry(r, end(r), s.allocatedResources ?? {});
    else if (f === 20 && isLen(tag)) s.resources = requirements(r, end(r));
    else r.skipType(tag & 7);
  }
  return s;
}
