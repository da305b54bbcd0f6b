/**
 * The generic registry (apiserver pkg/registry/generic/registry/store.go in miniature): get, list,
 * create, update, patch and delete for any resource, with per-resource strategies for defaulting,
 * admission and validation. The HTTP layer maps requests onto these functions; controllers use them too.
 */

import yaml from 'yaml';
import { rfc3339 } from './clock.js';
import {
  ApiError,
  alreadyExists,
  badRequest,
  conflict,
  type FieldError,
  fieldInvalid,
  GoLiteral,
  invalid,
  notFound,
  successStatus,
  unsupportedMediaType,
} from './errors.js';
import { clone, deepEqual, isObject, type Json, type JsonObject } from './json.js';
import { decodeContinueToken } from './list-options.js';
import { orderTop, recordManagedFields, validateName } from './objects.js';
import { continueExpired, encodeContinue } from './pagination.js';
import {
  APPLY_PATCH,
  applyJsonPatch,
  applyMergePatch,
  applyStrategicMergePatch,
  JSON_PATCH,
  MERGE_PATCH,
  STRATEGIC_MERGE_PATCH,
} from './patch.js';
import { UNBOUND } from './pod-requests.js';
import { checkDecodable, checkPatchedDecodable, validateQuantities } from './quantities.js';
import { collectionId, type ResourceDef } from './registry.js';
import { parseFieldSelector, parseLabelSelector } from './selectors.js';
import type { Scope } from './state.js';
import { lowerBound } from './store.js';

export const objectKey = (namespace: string | undefined, name: string): string =>
  namespace ? `${namespace}/${name}` : name;

const gr = (def: ResourceDef) => ({ group: def.group, resource: def.resource });

export function apiVersionOf(def: ResourceDef, version: string): string {
  return def.group ? `${def.group}/${version}` : version;
}

/** The object as served in `version` (custom resources change only apiVersion: conversion None). */
export function toVersion(def: ResourceDef, obj: Json, version: string): Json {
  const av = apiVersionOf(def, version);
  if (!isObject(obj) || obj.apiVersion === av) return obj;
  return { ...obj, apiVersion: av };
}

export function getObject(scope: Scope, name: string): Json {
  const obj = scope.cluster.store.get(collectionId(scope.def), objectKey(scope.namespace, name));
  if (obj === undefined) throw notFound(gr(scope.def), name);
  return toVersion(scope.def, obj, scope.version);
}

export interface ListQuery {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
}

export interface ListResult {
  items: Json[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

/** The revision a list reads at, and the key it starts after (resourceVersion semantics of ListOptions). */
/** Where a list reads: at which resourceVersion (absent: the latest) and after which key (a continue token). */
interface ListPosition {
  atRv?: number;
  start?: string;
}

function listPosition(scope: Scope, q: ListQuery): ListPosition {
  const store = scope.cluster.store;
  if (q.continue) {
    // storage.ValidateListOptions: the token is decoded before the resourceVersion is looked at.
    const token = decodeContinueToken(q.continue);
    if (q.resourceVersion && q.resourceVersion !== '0')
      throw badRequest('specifying resource version is not allowed when using continue');
    if (token.rv === -1) return { start: token.start };
    if (token.rv < store.compactedRv) throw continueExpired(token.start);
    return { atRv: token.rv, start: token.start };
  }
  const rvs = q.resourceVersion;
  if (rvs === undefined || rvs === '' || rvs === '0') return {};
  const n = Number(rvs);
  if (!Number.isInteger(n) || n < 0) throw badRequest(`invalid resource version: ${rvs}`);
  const exact = q.resourceVersionMatch === 'Exact' || (!q.resourceVersionMatch && q.limit && q.limit > 0);
  if (n > store.currentRv())
    throw new ApiError(
      504,
      'Timeout',
      `Timeout: Too large resource version: ${n}, current: ${store.currentRv()}`,
      {
        causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
        retryAfterSeconds: 1,
      },
    );
  if (!exact) return {};
  store.checkNotCompacted(n);
  return { atRv: n };
}

/**
 * The sorted keys a list scans, and where in them the namespace (and the continue token's position)
 * starts and ends. spec.nodeName is indexed: a kubelet-style query does not scan every pod in the cluster.
 */
function keyRange(
  scope: Scope,
  viewKeys: readonly string[],
  nodeName: string | undefined,
  pos: ListPosition,
): { keys: readonly string[]; prefix: string; from: number; to: number } {
  const { def, cluster } = scope;
  const prefix = scope.namespace ? `${scope.namespace}/` : '';
  let keys = viewKeys;
  if (nodeName !== undefined && pos.atRv === undefined && def.resource === 'pods' && !def.group) {
    // Unbound pods (`spec.nodeName=`, a scheduler's query) are indexed under UNBOUND.
    keys = [...cluster.store.collection(collectionId(def)).indexed(nodeName || UNBOUND)].sort();
  }
  const startKey = pos.start !== undefined ? prefix + pos.start : prefix;
  const to = prefix
    ? lowerBound(keys, prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1))
    : keys.length;
  return { keys, prefix, from: lowerBound(keys, startKey), to };
}

export function listObjects(
  scope: Scope,
  q: ListQuery,
  extraFields: Record<string, string> = {},
): ListResult {
  const { cluster, def } = scope;
  const store = cluster.store;
  const pos = listPosition(scope, q);
  const atRv = pos.atRv ?? store.currentRv();
  const labelMatch = parseLabelSelector(q.labelSelector);
  const fields = parseFieldSelector(
    q.fieldSelector,
    def.resource,
    def.custom ? 'meta' : 'builtin',
    extraFields,
  );
  const hasSelector = !!(q.labelSelector?.trim() || q.fieldSelector?.trim());
  const view = store.view(collectionId(def), pos.atRv);
  const { keys, prefix, from, to: endIdx } = keyRange(scope, view.keys, fields.nodeName, pos);
  const limit = q.limit && q.limit > 0 ? q.limit : Number.POSITIVE_INFINITY;
  const items: Json[] = [];
  let i = from;
  let lastIdx = -1;
  for (; i < endIdx; i++) {
    const k = keys[i] as string;
    const obj = view.get(k);
    if (obj === undefined) continue;
    if (!labelMatch(obj.metadata?.labels) || !fields.match(obj)) continue;
    items.push(toVersion(def, obj, scope.version));
    if (items.length >= limit) {
      lastIdx = i;
      break;
    }
  }
  const result: ListResult = { items, resourceVersion: String(atRv) };
  if (lastIdx >= 0 && lastIdx + 1 < endIdx) {
    const lastKey = keys[lastIdx] as string;
    result.continue = encodeContinue(atRv, lastKey.slice(prefix.length));
    if (!hasSelector) result.remainingItemCount = endIdx - lastIdx - 1;
  }
  return result;
}

function checkTypeMeta(body: JsonObject, scope: Scope): void {
  const { def, version } = scope;
  const av = apiVersionOf(def, version);
  if (body.kind !== undefined && body.kind !== def.kind && !(def.custom && body.kind === '')) {
    throw badRequest(
      `the object provided is unrecognized (must be of type ${def.kind}): couldn't get version/kind; json parse error: kind ${JSON.stringify(body.kind)} is not ${def.kind}`,
    );
  }
  if (body.apiVersion !== undefined && body.apiVersion !== av) {
    throw badRequest(
      `the API version in the data (${body.apiVersion}) does not match the expected API version (${av})`,
    );
  }
}

const SERVER_FIELDS = [
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'generation',
  'selfLink',
];

export function createObject(scope: Scope, body: Json): Json {
  const { cluster, def } = scope;
  checkObjectBody(scope, body);
  checkDecodable(collectionId(def), def.kind, scope.version, body);
  const obj = newObject(scope, body);
  const meta: JsonObject = obj.metadata;
  const coll = collectionId(def);
  if (!meta.name && typeof meta.generateName === 'string' && meta.generateName) {
    const generated = generatedName(scope, meta.namespace, meta.generateName);
    if (generated) meta.name = generated;
  }
  if (def.namespaced && def.resource !== 'namespaces' && !scope.internal)
    cluster.requireNamespace(meta.namespace);
  const admitted = admitNew(scope, obj);
  const key = objectKey(admitted.metadata.namespace, admitted.metadata.name);
  if (cluster.store.get(coll, key) !== undefined) throw alreadyExists(gr(def), admitted.metadata.name);
  stampNew(scope, admitted.metadata, key, body);
  const stored = normalize(scope, admitted);
  if (scope.dryRun) {
    stored.metadata = { ...stored.metadata, resourceVersion: '' };
    return toVersion(def, stored, scope.version);
  }
  cluster.store.put(coll, key, stored);
  return toVersion(def, stored, scope.version);
}

/** A request body must be an object of the resource's kind (kind and apiVersion, when given, match). */
function checkObjectBody(scope: Scope, body: Json): asserts body is JsonObject {
  const { def } = scope;
  if (!isObject(body))
    throw badRequest(
      `${def.kind} in version "${scope.version}" cannot be handled as a ${def.kind}: json: cannot unmarshal ${Array.isArray(body) ? 'array' : typeof body} into Go value of type struct`,
    );
  checkTypeMeta(body, scope);
}

/** The body as a new object of the storage version: server-set fields dropped, the URL's namespace (or none). */
function newObject(scope: Scope, body: JsonObject): JsonObject {
  const { def } = scope;
  const obj: JsonObject = clone(body);
  obj.kind = def.kind;
  obj.apiVersion = apiVersionOf(def, def.custom ? scope.version : def.storageVersion);
  const meta: JsonObject = isObject(obj.metadata) ? obj.metadata : {};
  obj.metadata = meta;
  for (const f of SERVER_FIELDS) delete meta[f];
  delete meta.managedFields;
  if (def.namespaced) {
    if (meta.namespace && scope.namespace && meta.namespace !== scope.namespace)
      throw badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    meta.namespace = scope.namespace ?? meta.namespace;
    if (!meta.namespace)
      throw badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
  } else {
    delete meta.namespace;
  }
  return obj;
}

/** generateName plus a suffix no object of the collection has (20 tries; none found leaves the name unset). */
function generatedName(scope: Scope, namespace: string | undefined, prefix: string): string | undefined {
  const { cluster } = scope;
  const coll = collectionId(scope.def);
  for (let attempt = 0; attempt < 20; attempt++) {
    const candidate = prefix + cluster.suffix(coll, prefix, String(attempt));
    if (!cluster.store.get(coll, objectKey(namespace, candidate))) return candidate;
  }
  return undefined;
}

/** The strategy's preparation and admission, then every validation; all field errors in one Invalid. */
function admitNew(scope: Scope, obj: JsonObject): JsonObject {
  const { def } = scope;
  const strategy = scope.cluster.strategy(def);
  const meta = obj.metadata;
  strategy.prepareCreate?.(obj, scope);
  let admitted: JsonObject = obj;
  const errs: FieldError[] = [];
  if (strategy.nameRule !== 'none') errs.push(...validateName(meta.name, strategy.nameRule ?? 'subdomain'));
  if (errs.length === 0 && strategy.admit) admitted = strategy.admit(obj, scope);
  errs.push(...(strategy.validateCreate?.(admitted, scope) ?? []));
  errs.push(...validateQuantities(collectionId(def), admitted, true));
  if (errs.length) throw invalid(def.kind, def.group, meta.name ?? '', errs);
  return admitted;
}

/** What the server sets on a new object: uid, creation time, generation 1, the creator's managed fields. */
function stampNew(scope: Scope, m: JsonObject, key: string, body: Json): void {
  const { cluster, def } = scope;
  const now = rfc3339(cluster.clock.now());
  m.uid = cluster.newUid(collectionId(def), key);
  // Placeholder so that the field keeps its place (after uid, or sorted for custom resources).
  m.resourceVersion = '';
  m.creationTimestamp = now;
  if (cluster.hasGeneration(def)) m.generation = 1;
  m.managedFields = recordManagedFields([], scope.manager, apiVersionOf(def, scope.version), now, body);
  // A request that sets no field owns nothing: the server then writes no managedFields at all (03c).
  if (m.managedFields.length === 0) delete m.managedFields;
}

function normalize(scope: Scope, obj: JsonObject): JsonObject {
  const s = scope.cluster.strategy(scope.def);
  return s.normalize ? s.normalize(obj) : orderTop(obj);
}

/** Fields compared for a generation bump: everything but metadata, and status when it is a subresource. */
function specPart(def: ResourceDef, obj: Json, version: string): JsonObject {
  const { metadata: _m, status, kind: _k, apiVersion: _a, ...rest } = obj;
  return hasStatusSub(def, version) ? rest : { ...rest, status };
}

const withoutVolatile = (obj: Json): Json => {
  const { resourceVersion: _r, managedFields: _m, ...meta } = obj.metadata ?? {};
  return { ...obj, metadata: meta };
};

export interface UpdateOptions {
  /** The request body as sent (for managedFields), when `obj` is the result of a patch. */
  sent?: Json;
  operation?: 'Update' | 'Apply';
}

export function updateObject(scope: Scope, name: string, body: Json, opts: UpdateOptions = {}): Json {
  const { cluster, def } = scope;
  const meta = checkUpdateBody(scope, name, body, opts);
  const coll = collectionId(def);
  const key = objectKey(scope.namespace, name);
  const existing = cluster.store.get(coll, key);
  if (existing === undefined) {
    if (def.allowCreateOnUpdate && !scope.subresource)
      return createObject(scope, { ...body, metadata: { ...meta, name } });
    throw notFound(gr(def), name);
  }
  checkResourceVersion(scope, name, meta, existing);
  const next = updatedObject(scope, body, meta, existing);
  const strategy = cluster.strategy(def);
  const errs = [
    ...(strategy.validateUpdate?.(next, existing, scope) ?? []),
    ...validateQuantities(coll, next),
  ];
  if (errs.length) throw invalid(def.kind, def.group, name, errs);
  const normalized = normalize(scope, next);
  if (deepEqual(withoutVolatile(normalized), withoutVolatile(existing)))
    return toVersion(def, existing, scope.version);
  const stored = normalize(scope, {
    ...normalized,
    metadata: updatedMetadata(scope, normalized, existing, opts.sent ?? body, opts.operation),
  });
  if (scope.dryRun) return toVersion(def, stored, scope.version);
  if (stored.metadata.deletionTimestamp && !stored.metadata.finalizers?.length) {
    cluster.store.delete(coll, key);
    return toVersion(def, stored, scope.version);
  }
  cluster.store.put(coll, key, stored);
  return toVersion(def, stored, scope.version);
}

/** The body must be an object of this kind, decodable, for the name and namespace of the URL; its metadata. */
function checkUpdateBody(scope: Scope, name: string, body: Json, opts: UpdateOptions): JsonObject {
  const { def } = scope;
  checkObjectBody(scope, body);
  if (opts.sent === undefined) checkDecodable(collectionId(def), def.kind, scope.version, body);
  const meta: JsonObject = isObject(body.metadata) ? body.metadata : {};
  if (meta.name !== undefined && meta.name !== name)
    throw badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${name})`);
  if (def.namespaced && meta.namespace && meta.namespace !== scope.namespace)
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  return meta;
}

/** Optimistic concurrency: a stale resourceVersion conflicts; none at all is refused unless the kind allows it. */
function checkResourceVersion(scope: Scope, name: string, meta: JsonObject, existing: Json): void {
  const { def } = scope;
  const rv = meta.resourceVersion;
  if (rv !== undefined && rv !== '' && rv !== existing.metadata.resourceVersion)
    throw conflict(gr(def), name);
  // The registry names the resource where a kind belongs (apiserver store.go, "TODO: The Invalid error
  // should have a field for Resource"): `clusterproperties.about.k8s.io "x" is invalid: ...`.
  if ((rv === undefined || rv === '') && !def.allowUnconditionalUpdate)
    throw invalid(def.resource, def.group, name, [
      fieldInvalid('metadata.resourceVersion', new GoLiteral('0x0'), 'must be specified for an update'),
    ]);
}

/** Metadata the server owns, kept from the stored object whatever the body says. */
const SERVER_OWNED_METADATA = [
  'name',
  'namespace',
  'uid',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'generation',
  'managedFields',
];

/**
 * The body as the update the strategy makes of it: server-owned metadata kept, and status changed
 * only through /status (and only status there), then admitted.
 */
function updatedObject(scope: Scope, body: JsonObject, meta: JsonObject, existing: Json): JsonObject {
  const { def } = scope;
  const strategy = scope.cluster.strategy(def);
  let next: JsonObject = clone(body);
  next.kind = def.kind;
  next.apiVersion = existing.apiVersion;
  const m: JsonObject = { ...meta };
  for (const f of SERVER_OWNED_METADATA)
    if (existing.metadata[f] !== undefined) m[f] = existing.metadata[f];
    else delete m[f];
  m.resourceVersion = existing.metadata.resourceVersion;
  next.metadata = m;
  if (scope.subresource === 'status') {
    if (strategy.prepareStatusUpdate) strategy.prepareStatusUpdate(next, existing, scope);
    else next = { ...clone(existing), status: next.status };
  } else if (strategy.prepareUpdate) {
    strategy.prepareUpdate(next, existing, scope);
  } else if (hasStatusSub(def, scope.version)) {
    // The main resource cannot change status when /status exists.
    next.status = clone(existing.status);
    if (next.status === undefined) delete next.status;
  }
  if (strategy.admit) next = strategy.admit(next, scope, existing);
  return next;
}

/** The metadata of a real change: generation bumped when the spec changed, the manager's fields recorded. */
function updatedMetadata(
  scope: Scope,
  stored: Json,
  existing: Json,
  sent: Json,
  operation: UpdateOptions['operation'],
): JsonObject {
  const { cluster, def } = scope;
  const sm: JsonObject = { ...stored.metadata };
  if (
    cluster.hasGeneration(def) &&
    !deepEqual(specPart(def, stored, scope.version), specPart(def, existing, scope.version))
  )
    sm.generation = (existing.metadata.generation ?? 0) + 1;
  sm.managedFields = recordManagedFields(
    existing.metadata.managedFields,
    scope.manager,
    apiVersionOf(def, scope.version),
    rfc3339(cluster.clock.now()),
    sent,
    scope.subresource,
    operation,
  );
  if (sm.managedFields.length === 0) delete sm.managedFields;
  return sm;
}

function hasStatusSub(def: ResourceDef, version: string): boolean {
  return def.custom
    ? !!def.custom.versions[version]?.status
    : def.subresources.some((s) => s.name === 'status');
}

export const PATCH_TYPES_BUILTIN = [JSON_PATCH, MERGE_PATCH, APPLY_PATCH, STRATEGIC_MERGE_PATCH];
export const PATCH_TYPES_CUSTOM = [JSON_PATCH, MERGE_PATCH, APPLY_PATCH];

export function parsePatchBody(contentType: string, raw: string): Json {
  try {
    return contentType === APPLY_PATCH ? yaml.parse(raw) : JSON.parse(raw);
  } catch (err) {
    throw badRequest(`error decoding patch: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Applies a PATCH to the current object and returns the would-be new object (the caller updates). */
export function patchedObject(
  scope: Scope,
  name: string,
  contentType: string,
  patch: Json,
  fieldManager?: string,
): { obj: Json; existing: Json | undefined } {
  const { def } = scope;
  checkPatchRequest(def, contentType, fieldManager);
  const coll = collectionId(def);
  const existing = scope.cluster.store.get(coll, objectKey(scope.namespace, name));
  if (existing === undefined) {
    if (contentType === APPLY_PATCH) return { obj: patch, existing: undefined };
    throw notFound(gr(def), name);
  }
  const obj = applyPatch(def, toVersion(def, existing, scope.version), contentType, patch);
  if (!isObject(obj)) throw badRequest('the patch did not produce an object');
  checkPatchedDecodable(coll, obj, patch, contentType === STRATEGIC_MERGE_PATCH);
  // The patch applies to the current object, so its resourceVersion is the current one unless the patch
  // set one (a precondition, whatever the patch type) or removed it (then unconditional where allowed).
  if (!isObject(obj.metadata)) obj.metadata = {};
  return { obj, existing };
}

/** A patch type the resource takes (no strategic merge for custom resources); apply needs a field manager. */
function checkPatchRequest(def: ResourceDef, contentType: string, fieldManager: string | undefined): void {
  const allowed = def.custom ? PATCH_TYPES_CUSTOM : PATCH_TYPES_BUILTIN;
  if (!allowed.includes(contentType)) throw unsupportedMediaType(allowed);
  if (contentType === APPLY_PATCH && !fieldManager)
    throw new ApiError(
      422,
      'Invalid',
      'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
      {
        group: 'meta.k8s.io',
        kind: 'PatchOptions',
        causes: [
          {
            reason: 'FieldValueRequired',
            message: 'Required value: is required for apply patch',
            field: 'fieldManager',
          },
        ],
      },
    );
}

function applyPatch(def: ResourceDef, current: Json, contentType: string, patch: Json): Json {
  switch (contentType) {
    case JSON_PATCH:
      return applyJsonPatch(current, patch);
    case MERGE_PATCH:
      if (!isObject(patch))
        throw badRequest('json: cannot unmarshal array into Go value of type map[string]interface {}');
      return applyMergePatch(current, patch);
    case APPLY_PATCH:
      // Server-side apply approximated as a merge of the applied configuration (no field ownership).
      return def.custom ? applyMergePatch(current, patch) : applyStrategicMergePatch(current, patch);
    default:
      return applyStrategicMergePatch(current, patch);
  }
}

export function patchObject(
  scope: Scope,
  name: string,
  contentType: string,
  patch: Json,
  fieldManager?: string,
): Json {
  const { obj, existing } = patchedObject(scope, name, contentType, patch, fieldManager);
  const operation = contentType === APPLY_PATCH ? 'Apply' : 'Update';
  if (existing === undefined) return createObject({ ...scope, manager: fieldManager ?? scope.manager }, obj);
  return updateObject({ ...scope, manager: fieldManager ?? scope.manager }, name, obj, {
    sent: patch,
    operation,
  });
}

export interface DeleteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
  gracePeriodSeconds?: number;
  propagationPolicy?: string;
}

export function deleteObject(scope: Scope, name: string, opts: DeleteOptions = {}): Json {
  const { cluster, def } = scope;
  const coll = collectionId(def);
  const key = objectKey(scope.namespace, name);
  const existing = cluster.store.get(coll, key);
  if (existing === undefined) throw notFound(gr(def), name);
  checkDeletePreconditions(scope, name, existing, opts);
  const now = rfc3339(cluster.clock.now());
  if (scope.dryRun)
    return def.returnDeletedObject
      ? toVersion(def, existing, scope.version)
      : successStatus(gr(def), name, existing.metadata.uid);
  const keep = cluster.strategy(def).onDelete?.(existing, scope);
  if (keep !== undefined) {
    cluster.store.put(coll, key, keep);
    return toVersion(def, keep, scope.version);
  }
  if (existing.metadata.finalizers?.length) {
    // Finalizers hold it: marked for deletion (once), and the finalizers' owners remove it.
    if (existing.metadata.deletionTimestamp) return toVersion(def, existing, scope.version);
    const marked = {
      ...existing,
      metadata: { ...existing.metadata, deletionTimestamp: now, deletionGracePeriodSeconds: 0 },
    };
    cluster.store.put(
      coll,
      key,
      orderTop(
        marked,
        Object.keys(existing).filter((k) => !['kind', 'apiVersion', 'metadata'].includes(k)),
      ),
    );
    return toVersion(def, cluster.store.get(coll, key), scope.version);
  }
  cluster.store.delete(coll, key);
  return deletedAnswer(scope, name, existing, now, opts);
}

function checkDeletePreconditions(scope: Scope, name: string, existing: Json, opts: DeleteOptions): void {
  const pre = opts.preconditions;
  if (pre?.uid && pre.uid !== existing.metadata.uid)
    throw conflict(
      gr(scope.def),
      name,
      `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${existing.metadata.uid}`,
    );
  if (pre?.resourceVersion && pre.resourceVersion !== existing.metadata.resourceVersion)
    throw conflict(
      gr(scope.def),
      name,
      `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${existing.metadata.resourceVersion}`,
    );
}

/** What a delete answers once the object is gone: a Status, or the object as a real server shows it leaving. */
function deletedAnswer(scope: Scope, name: string, existing: Json, now: string, opts: DeleteOptions): Json {
  const { def } = scope;
  if (!def.returnDeletedObject) return successStatus(gr(def), name, existing.metadata.uid);
  if (def.resource === 'pods' && !def.group) {
    // Deleted at once (as if the kubelet confirmed immediately); the answer is the graceful-deletion one.
    const grace = opts.gracePeriodSeconds ?? existing.spec?.terminationGracePeriodSeconds ?? 30;
    return {
      ...existing,
      metadata: { ...existing.metadata, deletionTimestamp: now, deletionGracePeriodSeconds: grace },
    };
  }
  if (def.resource === 'namespaces' && !def.group) {
    // The namespace controller empties it right away; the answer shows it terminating, as a real server does.
    return {
      ...existing,
      metadata: { ...existing.metadata, deletionTimestamp: now },
      status: { phase: 'Terminating' },
    };
  }
  return toVersion(def, existing, scope.version);
}

export function deleteCollection(scope: Scope, q: ListQuery, opts: DeleteOptions = {}): ListResult {
  const listed = listObjects(scope, { labelSelector: q.labelSelector, fieldSelector: q.fieldSelector });
  const items: Json[] = [];
  for (const obj of listed.items) {
    const ns = obj.metadata.namespace as string | undefined;
    items.push(deleteObject({ ...scope, namespace: ns }, obj.metadata.name, opts));
  }
  return { items, resourceVersion: String(scope.cluster.store.currentRv()) };
}
