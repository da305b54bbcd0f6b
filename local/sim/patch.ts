/**
 * The three patch types of PATCH: JSON Patch (RFC 6902, through fast-json-patch), JSON merge patch
 * (RFC 7386) and strategic merge patch (lists of objects merged by their patchMergeKey, e.g.
 * containers by name; the $patch, $setElementOrder, $deleteFromPrimitiveList and $retainKeys
 * directives). Merge keys follow the Go struct tags of the built-in types the simulator serves.
 */
import fastJsonPatch from 'fast-json-patch';
import { ApiError, badRequest } from './errors.js';
import { clone, isObject, type Json, type JsonObject } from './json.js';

export const JSON_PATCH = 'application/json-patch+json';
export const MERGE_PATCH = 'application/merge-patch+json';
export const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';
export const APPLY_PATCH = 'application/apply-patch+yaml';

export function applyJsonPatch(doc: Json, ops: Json): Json {
  if (!Array.isArray(ops))
    throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  try {
    return fastJsonPatch.applyPatch(clone(doc), ops, true, true).newDocument;
  } catch {
    // NewGenericServerResponse(422, ...) drops the patch library's message: this is all a client sees.
    throw new ApiError(422, 'Invalid', 'the server rejected our request due to an error in our request', {});
  }
}

/** RFC 7386: objects merge recursively, null deletes, anything else (arrays included) replaces. */
export function applyMergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch)) return clone(patch);
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}

/** patchMergeKey by field name, for the built-in types served (core/v1 Pod, Node, apps/v1 DaemonSet...). */
const MERGE_KEYS: Record<string, string> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  env: 'name',
  ports: 'containerPort',
  conditions: 'type',
  addresses: 'type',
  ownerReferences: 'uid',
  imagePullSecrets: 'name',
  hostAliases: 'ip',
  resourceClaims: 'name',
  topologySpreadConstraints: 'topologyKey',
  secrets: 'name',
};
/** Lists of scalars with patchStrategy "merge". */
const MERGED_SCALAR_LISTS = new Set(['finalizers']);

/** Strategic merge patch for built-in types. */
export function applyStrategicMergePatch(target: Json, patch: Json): Json {
  if (!isObject(patch))
    throw badRequest('json: cannot unmarshal array into Go value of type map[string]interface {}');
  return smpObject(isObject(target) ? target : {}, patch);
}

function smpObject(target: JsonObject, patch: JsonObject): JsonObject {
  if (patch.$patch === 'replace') {
    const { $patch: _, ...rest } = patch;
    return stripDirectives(rest);
  }
  if (patch.$patch === 'delete') return {};
  const out: JsonObject = { ...target };
  const retain = patch.$retainKeys;
  for (const [k, v] of Object.entries(patch)) {
    if (k === '$patch' || k === '$retainKeys' || k.startsWith('$setElementOrder/')) continue;
    if (k.startsWith('$deleteFromPrimitiveList/')) {
      const field = k.slice('$deleteFromPrimitiveList/'.length);
      if (Array.isArray(out[field]) && Array.isArray(v))
        out[field] = out[field].filter((x: Json) => !v.includes(x));
      continue;
    }
    if (v === null) {
      delete out[k];
      continue;
    }
    const cur = out[k];
    if (Array.isArray(v)) out[k] = smpList(k, Array.isArray(cur) ? cur : [], v);
    else if (isObject(v)) out[k] = smpObject(isObject(cur) ? cur : {}, v);
    else out[k] = v;
  }
  if (Array.isArray(retain)) for (const k of Object.keys(out)) if (!retain.includes(k)) delete out[k];
  return out;
}

function smpList(field: string, cur: Json[], patch: Json[]): Json[] {
  if (MERGED_SCALAR_LISTS.has(field)) {
    const out = [...cur];
    for (const v of patch) if (!out.includes(v)) out.push(v);
    return out;
  }
  const key = MERGE_KEYS[field];
  if (!key || !patch.every((p) => isObject(p))) return patch.map(stripDirectives);
  if (patch.some((p) => p.$patch === 'replace'))
    return patch.filter((p) => p.$patch !== 'replace').map(stripDirectives);
  const out = [...cur];
  for (const p of patch) {
    const idx = out.findIndex((c) => isObject(c) && c[key] === p[key]);
    if (p.$patch === 'delete') {
      if (idx >= 0) out.splice(idx, 1);
    } else if (idx >= 0) {
      out[idx] = smpObject(out[idx], p);
    } else {
      out.push(smpObject({}, p));
    }
  }
  return out;
}

function stripDirectives(v: Json): Json {
  if (Array.isArray(v)) return v.map(stripDirectives);
  if (!isObject(v)) return v;
  const out: JsonObject = {};
  for (const [k, x] of Object.entries(v)) if (!k.startsWith('$')) out[k] = stripDirectives(x);
  return out;
}
