/**
 * Kubernetes' protobuf encoding of built-in types (`application/vnd.kubernetes.protobuf`): the `k8s\0`
 * magic, then a runtime.Unknown envelope whose `raw` holds the object's message
 * (apimachinery pkg/runtime/serializer/protobuf). kube-apiserver encodes a built-in type's list about a
 * third smaller than JSON and far cheaper for itself; a reader that knows the few fields it needs skips
 * the rest (managed fields, volumes, probes) by their length instead of parsing them. Errors come back
 * as a protobuf Status, read here into the JSON text the error mapping reads.
 * Field numbers are those of the upstream generated.proto files; names are their JSON names.
 */
import protobuf from 'protobufjs';

export const PROTOBUF_MEDIA = 'application/vnd.kubernetes.protobuf';
/** What a reader that decodes protobuf asks for: protobuf where the server has it, else JSON. */
export const PROTOBUF_OR_JSON = `${PROTOBUF_MEDIA}, application/json;q=0.9`;

const MAGIC = [0x6b, 0x38, 0x73, 0x00];

// int64 fields as JavaScript numbers (generations, seconds: far below 2^53), not Long objects.
protobuf.util.Long = undefined as never;
protobuf.configure();

const ENVELOPE = `
syntax = "proto2";
package k8s;
message TypeMeta { optional string apiVersion = 1; optional string kind = 2; }
message Unknown { optional TypeMeta typeMeta = 1; optional bytes raw = 2; optional string contentEncoding = 3; optional string contentType = 4; }
message ListMeta { optional string selfLink = 1; optional string resourceVersion = 2; optional string continue = 3; optional int64 remainingItemCount = 4; }
message StatusCause { optional string reason = 1; optional string message = 2; optional string field = 3; }
message StatusDetails { optional string name = 1; optional string group = 2; optional string kind = 3; repeated StatusCause causes = 4; optional int32 retryAfterSeconds = 5; optional string uid = 6; }
message Status { optional ListMeta metadata = 1; optional string status = 2; optional string message = 3; optional string reason = 4; optional StatusDetails details = 5; optional int32 code = 6; }
`;

let envelope: protobuf.Root | undefined;
const envelopeRoot = () => {
  envelope ??= protobuf.parse(ENVELOPE, { keepCase: true }).root;
  return envelope;
};

/** Whether a response's content type is Kubernetes protobuf. */
export function isProtobuf(contentType: string | undefined): boolean {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() === PROTOBUF_MEDIA;
}

/** The envelope's kind and the object's message bytes; throws on a body that is not one. */
export function unwrap(body: Uint8Array): { kind: string; raw: Uint8Array } {
  if (body.length < MAGIC.length || MAGIC.some((b, i) => body[i] !== b))
    throw new Error('the body is not Kubernetes protobuf (no k8s\\0 prefix)');
  const Unknown = envelopeRoot().lookupType('k8s.Unknown');
  const u = Unknown.decode(body.subarray(MAGIC.length)) as unknown as {
    typeMeta?: { kind?: string };
    raw?: Uint8Array;
    contentEncoding?: string;
  };
  if (u.contentEncoding)
    throw new Error(`the object is encoded as "${u.contentEncoding}", which is not read`);
  return { kind: u.typeMeta?.kind ?? '', raw: u.raw ?? new Uint8Array(0) };
}

/** A protobuf Status as the JSON text the server would have sent (for the error mapping). */
export function statusText(body: Uint8Array): string {
  try {
    const { kind, raw } = unwrap(body);
    if (kind !== 'Status')
      return JSON.stringify({ message: `a ${kind || 'message'} where a Status was expected` });
    const Status = envelopeRoot().lookupType('k8s.Status');
    const s = Status.toObject(Status.decode(raw), { defaults: false, longs: Number });
    return JSON.stringify({ kind: 'Status', apiVersion: 'v1', ...s });
  } catch (err) {
    return JSON.stringify({ message: `an error body that does not decode (${(err as Error).message})` });
  }
}
