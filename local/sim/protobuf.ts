/**
 * Kubernetes' protobuf encoding (`application/vnd.kubernetes.protobuf`): the `k8s\x00` magic, then a
 * runtime.Unknown envelope carrying the TypeMeta and the object's bytes (apimachinery
 * pkg/runtime/serializer/protobuf). No maintained npm package has Kubernetes' generated protobuf types,
 * so protobufjs reads and writes them with minimal schemas.
 *  - Request bodies, which kubectl's typed clients send (`kubectl create namespace|configmap|
 *    deployment|...`, `kubectl auth can-i|whoami`), are decoded with the schema of kubectl-types.proto;
 *    the result is the JSON object the same request would have sent, and the rest of the simulator sees
 *    only that.
 *  - Answers: a core/v1 pod list whose Accept header prefers protobuf is encoded with the schema of
 *    pod-full.proto, which names (nearly) every field the simulator's pods carry (managedFields, volumes,
 *    mounts, affinity, images, conditions' times, IPs, container IDs...) with the upstream numbers, so a
 *    page weighs about what a real server's does (its protobuf is about 2/3 of its JSON) and a reader
 *    skips what it would skip there; an error of a request that prefers protobuf is a protobuf Status.
 *    Everything else is answered in JSON (handler.ts).
 */
import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';
import { rfc3339 } from './clock.js';
import { ApiError } from './errors.js';
import { isObject, type Json, type JsonObject } from './json.js';

export const PROTOBUF = 'application/vnd.kubernetes.protobuf';
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

/** A schema beside this module, parsed once (the CLI bundle copies both files beside its chunk). */
function schemaFile(file: string): () => protobuf.Root {
  let root: protobuf.Root | undefined;
  return () => {
    root ??= protobuf.parse(readFileSync(new URL(file, import.meta.url), 'utf8'), { keepCase: true }).root;
    return root;
  };
}
const podSchema = schemaFile('./pod-full.proto');
const schema = schemaFile('./kubectl-types.proto');

const unsupported = (what: string): ApiError =>
  new ApiError(
    415,
    'UnsupportedMediaType',
    `the simulator decodes protobuf only for the types kubectl sends as protobuf; ${what}: send it as application/json`,
    {},
  );

/** Decodes a protobuf request body into the JSON object it stands for (with apiVersion and kind). */
export function decodeProtobuf(body: Buffer): JsonObject {
  if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC))
    throw new ApiError(
      400,
      'BadRequest',
      'provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]',
      {},
    );
  let envelope: JsonObject;
  try {
    const unknown = schema().lookupType('sim.Unknown');
    envelope = unknown.toObject(unknown.decode(body.subarray(MAGIC.length)), {
      defaults: false,
      bytes: Buffer as never,
    });
  } catch (err) {
    throw new ApiError(
      400,
      'BadRequest',
      `the body of the request could not be decoded: ${(err as Error).message}`,
      {},
    );
  }
  const apiVersion = envelope.typeMeta?.apiVersion ?? '';
  const kind = envelope.typeMeta?.kind ?? '';
  const type = schema().lookup(`sim.${kind}`);
  if (!(type instanceof protobuf.Type) || !/^[A-Z]/.test(kind))
    throw unsupported(`kind ${JSON.stringify(kind)}`);
  let message: protobuf.Message;
  try {
    message = type.decode(envelope.raw ?? Buffer.alloc(0));
  } catch (err) {
    throw new ApiError(
      400,
      'BadRequest',
      `${kind} in version "${apiVersion}" cannot be handled as a ${kind}: ${(err as Error).message}`,
      {},
    );
  }
  const obj = type.toObject(message, { defaults: false, longs: Number, bytes: String });
  return { apiVersion, kind, ...(toJson(type, obj) as JsonObject) };
}

const isZero = (v: unknown) => v === '' || v === 0 || v === false;

/** The JSON form of a decoded message: Go's encoding of the same struct (omitempty, Time, Quantity...). */
function toJson(type: protobuf.Type, obj: JsonObject): Json {
  switch (type.name) {
    case 'Time':
      return obj.seconds || obj.nanos
        ? rfc3339((obj.seconds ?? 0) * 1000 + Math.floor((obj.nanos ?? 0) / 1e6))
        : null;
    case 'Quantity':
      return obj.string ?? '0';
    case 'IntOrString':
      return obj.type === 1 ? (obj.strVal ?? '') : (obj.intVal ?? 0);
  }
  const out: JsonObject = {};
  for (const field of type.fieldsArray) {
    const v = obj[field.name];
    if (v === undefined || v === null) continue;
    field.resolve();
    const sub = field.resolvedType instanceof protobuf.Type ? field.resolvedType : undefined;
    const one = (x: Json) => (sub && isObject(x) ? toJson(sub, x) : x);
    if (field.map) {
      const m = Object.fromEntries(Object.entries(v as JsonObject).map(([k, x]) => [k, one(x)]));
      if (Object.keys(m).length) out[field.name] = m;
    } else if (field.repeated) {
      if ((v as Json[]).length) out[field.name] = (v as Json[]).map(one);
    } else if (sub) {
      out[field.name] = one(v);
    } else if (!isZero(v) || field.options?.['(keep)']) {
      out[field.name] = v;
    }
  }
  return out;
}

// ---- answers ----

/** meta/v1 Status, field numbers of apimachinery's generated.proto (names are the JSON names). */
const STATUS_SCHEMA = `
syntax = "proto2";
package status;
message ListMeta { optional string selfLink = 1; optional string resourceVersion = 2; optional string continue = 3; optional int64 remainingItemCount = 4; }
message StatusCause { optional string reason = 1; optional string message = 2; optional string field = 3; }
message StatusDetails { optional string name = 1; optional string group = 2; optional string kind = 3; repeated StatusCause causes = 4; optional int32 retryAfterSeconds = 5; optional string uid = 6; }
message Status { optional ListMeta metadata = 1; optional string status = 2; optional string message = 3; optional string reason = 4; optional StatusDetails details = 5; optional int32 code = 6; }
`;

let statusRoot: protobuf.Root | undefined;
const statusType = (): protobuf.Type => {
  statusRoot ??= protobuf.parse(STATUS_SCHEMA, { keepCase: true }).root;
  return statusRoot.lookupType('status.Status');
};

/** A media range of an Accept header: its type, whether it names a representation (`as=`), its q. */
function mediaRanges(accept: string): { media: string; as: boolean; q: number }[] {
  return accept.split(',').map((part) => {
    const [media = '', ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    const n = q === undefined ? 1 : Number(q.slice(2));
    return { media, as: params.some((p) => p.startsWith('as=')), q: Number.isFinite(n) ? n : 0 };
  });
}

/**
 * Whether an Accept header picks protobuf where the simulator could answer protobuf or JSON, as
 * apimachinery's negotiation does: the highest q wins, the first listed among equals. Media ranges that
 * name a representation (`as=Table`, ...) count as JSON's (the simulator has those only as JSON), so
 * a Table asked for first is still a Table.
 */
export function prefersProtobuf(accept: string | undefined): boolean {
  if (!accept) return false;
  let best: { media: string; as: boolean; q: number } | undefined;
  for (const r of mediaRanges(accept)) {
    if (r.q <= 0) continue;
    const served =
      r.media === PROTOBUF ||
      r.media === 'application/json' ||
      r.media === '*/*' ||
      r.media === 'application/*';
    if (served && (!best || r.q > best.q)) best = r;
  }
  return best?.media === PROTOBUF && !best.as;
}

const SCALAR: Record<string, string> = {
  string: 'string',
  bool: 'boolean',
  int32: 'number',
  int64: 'number',
  uint32: 'number',
  uint64: 'number',
  double: 'number',
  float: 'number',
};

/**
 * The message a JSON value stands for, walking the schema's fields (the inverse of toJson): a field the
 * schema does not name is left out, one the JSON does not carry is not written. Quantities are their
 * string, times whole seconds (Go's metav1.Time carries no more in protobuf), maps stay maps (in key
 * order, as Go writes them), int64s numbers, a FieldsV1 the JSON text of its object, an IntOrString its
 * number or string. A field marked (inline) is a Go struct embedded in its parent: it reads the parent's
 * JSON object itself (a volume's `projected` is its volumeSource's).
 */
function fromJson(type: protobuf.Type, v: Json): Json {
  switch (type.name) {
    case 'FieldsV1':
      return isObject(v) ? { Raw: Buffer.from(JSON.stringify(v)) } : undefined;
    case 'IntOrString':
      if (typeof v === 'number') return { type: 0, intVal: v };
      return typeof v === 'string' ? { type: 1, strVal: v } : undefined;
    case 'Time': {
      const ms = typeof v === 'string' ? Date.parse(v) : Number.NaN;
      return Number.isFinite(ms) ? { seconds: Math.floor(ms / 1000) } : undefined;
    }
    case 'Quantity':
      return typeof v === 'string' || typeof v === 'number' ? { string: String(v) } : undefined;
  }
  if (!isObject(v)) return undefined;
  const out: JsonObject = {};
  for (const field of type.fieldsArray) {
    const x = field.options?.['(inline)'] ? v : v[field.name];
    if (x === undefined) continue;
    field.resolve();
    // A null Time (a condition's lastProbeTime) is a zero metav1.Time: Go writes it as an empty message.
    if (x === null) {
      if (field.resolvedType?.name === 'Time' && !field.repeated && !field.map) out[field.name] = {};
      continue;
    }
    const sub = field.resolvedType instanceof protobuf.Type ? field.resolvedType : undefined;
    const one = (y: Json): Json => {
      if (sub) return fromJson(sub, y);
      return typeof y === SCALAR[field.type] ? y : undefined;
    };
    if (field.map) {
      if (!isObject(x)) continue;
      const m: JsonObject = {};
      for (const k of Object.keys(x).sort()) {
        const y = one(x[k]);
        if (y !== undefined) m[k] = y;
      }
      out[field.name] = m;
    } else if (field.repeated) {
      if (Array.isArray(x)) out[field.name] = x.map(one).filter((y) => y !== undefined);
    } else {
      const y = one(x);
      if (y !== undefined) out[field.name] = y;
    }
  }
  return out;
}

/** `k8s\x00`, then the Unknown envelope around a message (contentEncoding and contentType empty, as Go writes them). */
function envelope(apiVersion: string, kind: string, raw: Uint8Array): Buffer {
  const unknown = schema().lookupType('sim.Unknown');
  const body = unknown
    .encode({ typeMeta: { apiVersion, kind }, raw, contentEncoding: '', contentType: '' })
    .finish();
  return Buffer.concat([MAGIC, body]);
}

/**
 * A core/v1 PodList in protobuf: the list's metadata (resourceVersion, continue, remainingItemCount as in
 * the JSON answer) and its pods, each with the fields pod-full.proto names (every one they carry, or nearly).
 */
export function encodePodList(metadata: JsonObject, items: Json[]): Buffer {
  const root = podSchema();
  const podList = root.lookupType('simpod.PodList');
  const pod = root.lookupType('simpod.Pod');
  const listMeta = root.lookupType('simpod.ListMeta');
  const message = { metadata: fromJson(listMeta, metadata), items: items.map((p) => fromJson(pod, p)) };
  return envelope('v1', 'PodList', podList.encode(message).finish());
}

/** A Status (the JSON ApiError.toStatus gives) in protobuf, as kube-apiserver answers a protobuf request's error. */
export function encodeStatus(status: JsonObject): Buffer {
  const type = statusType();
  return envelope('v1', 'Status', type.encode(fromJson(type, status) as JsonObject).finish());
}
