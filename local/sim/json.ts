/**
 * JSON helpers. Objects arrive from the wire as arbitrary JSON and are checked at run time, so the
 * simulator types them loosely through one alias instead of scattering `any`.
 */
// biome-ignore lint/suspicious/noExplicitAny: decoded request bodies and stored objects are arbitrary JSON
export type Json = any;
export type JsonObject = Record<string, Json>;

export const isObject = (v: unknown): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export function clone<T>(v: T): T {
  return v === undefined ? v : structuredClone(v);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    if (a.length !== bb.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], bb[i])) return false;
    return true;
  }
  const ao = a as JsonObject;
  const bo = b as JsonObject;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  if (ak.length !== bk.length) return false;
  for (const k of ak) if (!deepEqual(ao[k], bo[k])) return false;
  return true;
}

/** Recursively sorts object keys, as Go writes map[string]interface{} (custom resources). */
export function sortKeysDeep<T>(v: T): T {
  if (Array.isArray(v)) return v.map(sortKeysDeep) as T;
  if (!isObject(v)) return v;
  const out: JsonObject = {};
  for (const k of Object.keys(v).sort()) if (v[k] !== undefined) out[k] = sortKeysDeep(v[k]);
  return out as T;
}

/** Re-creates an object with its keys in the given order (Go struct field order); unknown keys go last. */
export function orderKeys(obj: JsonObject, order: readonly string[]): JsonObject {
  const out: JsonObject = {};
  for (const k of order) if (obj[k] !== undefined) out[k] = obj[k];
  for (const k of Object.keys(obj)) if (!(k in out) && obj[k] !== undefined) out[k] = obj[k];
  return out;
}

/** Drops keys whose value is undefined (Go's omitempty for pointers), shallowly. */
export function compact(obj: JsonObject): JsonObject {
  for (const k of Object.keys(obj)) if (obj[k] === undefined) delete obj[k];
  return obj;
}

/** Reads a dotted path such as `.spec.value` (the subset of JSONPath used by printer columns). */
export function getPath(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const part of path.replace(/^\./, '').split('.')) {
    if (part === '') continue;
    const m = /^([^[\]]+)(?:\[(\d+)\])?$/.exec(part);
    if (!m || !isObject(cur)) return undefined;
    cur = cur[m[1] as string];
    if (m[2] !== undefined) cur = Array.isArray(cur) ? cur[Number(m[2])] : undefined;
  }
  return cur;
}
