/**
 * `Status` failures exactly as apimachinery's errors package builds them (NewNotFound, NewConflict,
 * NewInvalid, ...), thrown as ApiError and written by the HTTP layer.
 */
import type { JsonObject } from './json.js';

export interface StatusCause {
  /** Absent in an internal error's cause (NewInternalError). */
  reason?: string;
  /** Absent where the server gives only a reason (a resize refused for NodeCapacity). */
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
    readonly statusMetadata: JsonObject = {},
  ) {
    super(message);
  }

  toStatus(): JsonObject {
    const s: JsonObject = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: this.statusMetadata,
      status: 'Failure',
      message: this.message,
      reason: this.reason,
    };
    if (this.details) s.details = compactDetails(this.details);
    s.code = this.code;
    return s;
  }
}

/** A plain-text failure (aggregator 404/503, APF 429): not a JSON Status. */
export class PlainError extends Error {
  constructor(
    readonly code: number,
    readonly text: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(text.trim());
  }
}

function compactDetails(d: StatusDetails): StatusDetails {
  const out: StatusDetails = {};
  if (d.name) out.name = d.name;
  if (d.group) out.group = d.group;
  if (d.kind) out.kind = d.kind;
  if (d.uid) out.uid = d.uid;
  if (d.causes?.length) out.causes = d.causes;
  if (d.retryAfterSeconds) out.retryAfterSeconds = d.retryAfterSeconds;
  return out;
}

/** A group-qualified resource for messages: `pods`, `daemonsets.apps`, `clusterproperties.about.k8s.io`. */
export interface GroupResource {
  group: string;
  resource: string;
}

const qualified = (gr: GroupResource): string => (gr.group ? `${gr.resource}.${gr.group}` : gr.resource);

export const notFound = (gr: GroupResource, name: string): ApiError =>
  new ApiError(404, 'NotFound', `${qualified(gr)} "${name}" not found`, {
    name,
    group: gr.group,
    kind: gr.resource,
  });

export const alreadyExists = (gr: GroupResource, name: string): ApiError =>
  new ApiError(409, 'AlreadyExists', `${qualified(gr)} "${name}" already exists`, {
    name,
    group: gr.group,
    kind: gr.resource,
  });

export const conflict = (gr: GroupResource, name: string, detail?: string): ApiError =>
  new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualified(gr)} "${name}": ${
      detail ?? 'the object has been modified; please apply your changes to the latest version and try again'
    }`,
    { name, group: gr.group, kind: gr.resource },
  );

export const forbidden = (gr: GroupResource, name: string, why: string): ApiError =>
  new ApiError(403, 'Forbidden', `${qualified(gr)} "${name}" is forbidden: ${why}`, {
    name,
    group: gr.group,
    kind: gr.resource,
  });

export const badRequest = (message: string): ApiError => new ApiError(400, 'BadRequest', message);

export const methodNotAllowed = (message: string): ApiError =>
  new ApiError(405, 'MethodNotAllowed', message, {});

export const unsupportedMediaType = (accepted: string[]): ApiError =>
  new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
    {},
  );

export const internalError = (message: string): ApiError =>
  new ApiError(500, 'InternalError', `Internal error occurred: ${message}`, {
    causes: [{ reason: 'UnexpectedServerError', message }],
  });

export const notFoundGeneric = (): ApiError =>
  new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});

/** One field.Error. Its message is built as field.Error.ErrorBody() does. */
export interface FieldError {
  type:
    | 'FieldValueInvalid'
    | 'FieldValueForbidden'
    | 'FieldValueRequired'
    | 'FieldValueNotSupported'
    | 'FieldValueTooLong'
    | 'FieldValueTooMany'
    | 'FieldValueDuplicate'
    | 'FieldValueNotFound'
    | 'FieldValueTypeInvalid';
  field: string;
  detail?: string;
  value?: unknown;
  hasValue?: boolean;
}

/** A value printed verbatim in a field error (Go's %#v of a non-simple type, e.g. uint64 0 -> 0x0). */
export class GoLiteral {
  constructor(readonly text: string) {}
}

/** Go's rendering of a bad value inside field errors: strings quoted (%q), simple types as %v. */
export function goValue(v: unknown): string {
  if (v instanceof GoLiteral) return v.text;
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (v === null || v === undefined) return 'null';
  return JSON.stringify(v);
}

export function fieldErrorBody(e: FieldError): string {
  switch (e.type) {
    case 'FieldValueRequired':
      return e.detail ? `Required value: ${e.detail}` : 'Required value';
    case 'FieldValueForbidden':
      return e.detail ? `Forbidden: ${e.detail}` : 'Forbidden';
    case 'FieldValueTooLong':
      return `Too long: ${e.detail}`;
    case 'FieldValueTooMany':
      return `Too many: ${e.detail}`;
    case 'FieldValueNotSupported':
      return `Unsupported value: ${goValue(e.value)}${e.detail ? `: ${e.detail}` : ''}`;
    case 'FieldValueDuplicate':
      return `Duplicate value: ${goValue(e.value)}`;
    case 'FieldValueNotFound':
      return `Not found: ${goValue(e.value)}`;
    default:
      return `Invalid value: ${goValue(e.value)}${e.detail ? `: ${e.detail}` : ''}`;
  }
}

export const fieldInvalid = (field: string, value: unknown, detail: string): FieldError => ({
  type: 'FieldValueInvalid',
  field,
  value,
  detail,
});
export const fieldForbidden = (field: string, detail: string): FieldError => ({
  type: 'FieldValueForbidden',
  field,
  detail,
});
export const fieldRequired = (field: string, detail = ''): FieldError => ({
  type: 'FieldValueRequired',
  field,
  detail,
});
export const fieldNotSupported = (field: string, value: unknown, supported: string[]): FieldError => ({
  type: 'FieldValueNotSupported',
  field,
  value,
  detail: `supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`,
});

/**
 * errors.NewInvalid: 422 with `<Kind>[.<group>] "<name>" is invalid: <errors>`; several errors are
 * joined as `[a, b]` like utilerrors.NewAggregate.
 */
export function invalid(kind: string, group: string, name: string, errs: FieldError[]): ApiError {
  const parts = errs.map((e) => `${e.field}: ${fieldErrorBody(e)}`);
  const list = parts.length === 1 ? (parts[0] as string) : `[${parts.join(', ')}]`;
  const qualifiedKind = group ? `${kind}.${group}` : kind;
  return new ApiError(422, 'Invalid', `${qualifiedKind} "${name}" is invalid: ${list}`, {
    name,
    group,
    kind,
    causes: errs.map((e) => ({ reason: e.type, message: fieldErrorBody(e), field: e.field })),
  });
}

/** The generic `Status` of a successful delete for resources that do not return the object. */
export function successStatus(gr: GroupResource, name: string, uid: string): JsonObject {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    details: compactDetails({ name, group: gr.group, kind: gr.resource, uid }),
  };
}

const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Expired',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/** A Status for an injected or generic failure code, with the reason apimachinery pairs with it. */
export function statusForCode(code: number, message?: string, retryAfterSeconds?: number): ApiError {
  const reason = REASONS[code] ?? (code >= 500 ? 'InternalError' : 'BadRequest');
  const text =
    message ??
    (code === 503
      ? 'the server is currently unable to handle the request'
      : code === 504
        ? 'the server was unable to return a response in the time allotted, but may still be processing the request'
        : code === 500
          ? 'an error on the server ("simulated fault") has prevented the request from succeeding'
          : `simulated fault (${code})`);
  return new ApiError(code, reason, text, retryAfterSeconds ? { retryAfterSeconds } : {});
}
