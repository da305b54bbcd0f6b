/**
 * Request bodies in Kubernetes' protobuf encoding (`application/vnd.kubernetes.protobuf`), which kubectl's
 * typed clients send (`kubectl create namespace|configmap|deployment|...`, `kubectl auth can-i|whoami`):
 * the `k8s\x00` magic, then a runtime.Unknown envelope carrying the TypeMeta and the object's bytes
 * (apimachinery pkg/runtime/serializer/protobuf). No maintained npm package has Kubernetes' generated
 * protobuf types, so protobufjs decodes them with the minimal schema of kubectl-types.proto; the result
 * is the JSON object the same request would have sent, and the rest of the simulator sees only that.
 */
import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';
import { rfc3339 } from './clock.js';
import { ApiError } from './errors.js';
import { isObject, type Json, type JsonObject } from './json.js';

export const PROTOBUF = 'application/vnd.kubernetes.protobuf';
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

let root: protobuf.Root | undefined;
const schema = (): protobuf.Root => {
  root ??= protobuf.parse(readFileSync(new URL('./kubectl-types.proto', import.meta.url), 'utf8'), {
    keepCase: true,
  }).root;
  return root;
};

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
