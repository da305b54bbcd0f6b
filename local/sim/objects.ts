/**
 * Shapes of built-in objects: Go struct field order (so responses read like a real server's),
 * canonical quantities, managedFields, and the name rules of apimachinery validation.
 */
import { canonicalizeQuantity, QuantityError } from '../../shared/kernel/quantity.js';
import { badRequest, type FieldError, fieldInvalid, fieldRequired } from './errors.js';
import { isObject, type Json, type JsonObject, orderKeys, sortKeysDeep } from './json.js';

export const META_ORDER = [
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
];

const CONTAINER_ORDER = [
  'name',
  'image',
  'command',
  'args',
  'workingDir',
  'ports',
  'envFrom',
  'env',
  'resources',
  'resizePolicy',
  'restartPolicy',
  'volumeMounts',
  'volumeDevices',
  'livenessProbe',
  'readinessProbe',
  'startupProbe',
  'lifecycle',
  'terminationMessagePath',
  'terminationMessagePolicy',
  'imagePullPolicy',
  'securityContext',
  'stdin',
  'stdinOnce',
  'tty',
];

export const POD_SPEC_ORDER = [
  'volumes',
  'initContainers',
  'containers',
  'ephemeralContainers',
  'restartPolicy',
  'terminationGracePeriodSeconds',
  'activeDeadlineSeconds',
  'dnsPolicy',
  'nodeSelector',
  'serviceAccountName',
  'serviceAccount',
  'automountServiceAccountToken',
  'nodeName',
  'hostNetwork',
  'hostPID',
  'hostIPC',
  'shareProcessNamespace',
  'securityContext',
  'imagePullSecrets',
  'hostname',
  'subdomain',
  'affinity',
  'schedulerName',
  'tolerations',
  'hostAliases',
  'priorityClassName',
  'priority',
  'dnsConfig',
  'readinessGates',
  'runtimeClassName',
  'enableServiceLinks',
  'preemptionPolicy',
  'overhead',
  'topologySpreadConstraints',
  'setHostnameAsFQDN',
  'os',
  'hostUsers',
  'schedulingGates',
  'resourceClaims',
  'resources',
];

export const POD_STATUS_ORDER = [
  'observedGeneration',
  'phase',
  'conditions',
  'message',
  'reason',
  'nominatedNodeName',
  'hostIP',
  'hostIPs',
  'podIP',
  'podIPs',
  'startTime',
  'initContainerStatuses',
  'containerStatuses',
  'qosClass',
  'ephemeralContainerStatuses',
  'resize',
  'resourceClaimStatuses',
];

export const NODE_STATUS_ORDER = [
  'capacity',
  'allocatable',
  'phase',
  'conditions',
  'addresses',
  'daemonEndpoints',
  'nodeInfo',
  'images',
  'volumesInUse',
  'volumesAttached',
  'config',
  'runtimeHandlers',
  'features',
];

export const NODE_INFO_ORDER = [
  'machineID',
  'systemUUID',
  'bootID',
  'kernelVersion',
  'osImage',
  'containerRuntimeVersion',
  'kubeletVersion',
  'kubeProxyVersion',
  'operatingSystem',
  'architecture',
];

export const CONDITION_ORDER = [
  'type',
  'status',
  'observedGeneration',
  'lastProbeTime',
  'lastHeartbeatTime',
  'lastTransitionTime',
  'reason',
  'message',
];

/** ObjectMeta's maps and lists are omitempty: a real server leaves an emptied one out. */
const OMITTED_WHEN_EMPTY = ['labels', 'annotations', 'finalizers', 'ownerReferences'];

export function orderMeta(meta: JsonObject): JsonObject {
  const out = orderKeys(meta, META_ORDER);
  for (const k of OMITTED_WHEN_EMPTY) {
    const v = out[k];
    if ((Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0)) delete out[k];
  }
  return out;
}

/** Top-level order of a built-in object: kind, apiVersion, metadata, then the type's own fields. */
export function orderTop(obj: JsonObject, rest: readonly string[] = ['spec', 'status']): JsonObject {
  const out = orderKeys(obj, ['kind', 'apiVersion', 'metadata', ...rest]);
  if (isObject(out.metadata)) out.metadata = orderMeta(out.metadata);
  return out;
}

/** Canonicalizes a ResourceList (sorted keys, canonical quantities); throws 400 on a bad quantity. */
export function canonicalResourceList(list: Json, kind: string): Json {
  if (!isObject(list)) return list;
  const out: JsonObject = {};
  for (const k of Object.keys(list).sort()) {
    const v = list[k];
    if (v === null || v === undefined) continue;
    try {
      out[k] = canonicalizeQuantity(typeof v === 'number' ? v : String(v).trim());
    } catch (err) {
      if (err instanceof QuantityError)
        throw badRequest(`${kind} in version "v1" cannot be handled as a ${kind}: ${err.reason}`);
      throw err;
    }
  }
  return out;
}

export function canonicalResources(res: Json, kind: string): Json {
  if (!isObject(res)) return res;
  const out: JsonObject = {};
  if (res.limits !== undefined && res.limits !== null) out.limits = canonicalResourceList(res.limits, kind);
  if (res.requests !== undefined && res.requests !== null)
    out.requests = canonicalResourceList(res.requests, kind);
  for (const k of Object.keys(res)) if (!(k in out) && k !== 'limits' && k !== 'requests') out[k] = res[k];
  return out;
}

export function orderContainer(c: JsonObject, kind = 'Pod'): JsonObject {
  const o = orderKeys(c, CONTAINER_ORDER);
  if (o.resources !== undefined) o.resources = canonicalResources(o.resources, kind);
  return o;
}

export function orderPodSpec(spec: JsonObject, kind = 'Pod'): JsonObject {
  const s = orderKeys(spec, POD_SPEC_ORDER);
  for (const f of ['initContainers', 'containers', 'ephemeralContainers']) {
    if (Array.isArray(s[f])) s[f] = s[f].map((c: JsonObject) => (isObject(c) ? orderContainer(c, kind) : c));
  }
  if (isObject(s.overhead)) s.overhead = canonicalResourceList(s.overhead, kind);
  if (isObject(s.resources)) s.resources = canonicalResources(s.resources, kind);
  return s;
}

/** The prefix of a User-Agent that becomes the managedFields manager ("kubectl-client-side-apply", "curl"). */
export function managerFromUserAgent(ua: string | undefined): string {
  if (!ua) return 'unknown';
  return ua.split('/')[0]?.trim().slice(0, 128) || 'unknown';
}

/** A FieldsV1 set describing the fields present in `v` (approximate for lists of scalars). */
export function fieldsV1(v: Json, listKey?: string): JsonObject {
  const out: JsonObject = {};
  if (!isObject(v)) return out;
  for (const [k, x] of Object.entries(v)) {
    if (x === undefined) continue;
    if (isObject(x)) {
      out[`f:${k}`] = { '.': {}, ...fieldsV1(x) };
      if (Object.keys(x).length === 0) out[`f:${k}`] = {};
    } else if (Array.isArray(x)) {
      const key = MERGE_KEY_FOR_FIELDS[k] ?? listKey;
      const entries: JsonObject = { '.': {} };
      for (const item of x) {
        if (isObject(item) && key && item[key] !== undefined) {
          entries[`k:${JSON.stringify({ [key]: item[key] })}`] = { '.': {}, ...fieldsV1(item) };
        } else if (!isObject(item)) {
          entries[`v:${JSON.stringify(item)}`] = {};
        }
      }
      out[`f:${k}`] = Object.keys(entries).length > 1 ? entries : {};
    } else {
      out[`f:${k}`] = {};
    }
  }
  return sortKeysDeep(out);
}

const MERGE_KEY_FOR_FIELDS: Record<string, string> = {
  containers: 'name',
  initContainers: 'name',
  volumes: 'name',
  env: 'name',
  conditions: 'type',
  addresses: 'type',
  ownerReferences: 'uid',
  volumeMounts: 'mountPath',
};

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Update' | 'Apply';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: JsonObject;
  subresource?: string;
}

/**
 * Records a write in managedFields: one entry per (manager, operation, subresource), its field set
 * replaced by the fields of the request body. Clients ignore the exact sets; they only need the shape.
 */
export function recordManagedFields(
  existing: Json,
  manager: string,
  apiVersion: string,
  time: string,
  body: Json,
  subresource?: string,
  operation: 'Update' | 'Apply' = 'Update',
): JsonObject[] {
  const entries: JsonObject[] = Array.isArray(existing) ? existing.filter((e) => isObject(e)) : [];
  const fields = isObject(body) ? bodyFields(body, subresource) : {};
  const entry: JsonObject = {
    manager,
    operation,
    apiVersion,
    time,
    fieldsType: 'FieldsV1',
    fieldsV1: fields,
  };
  if (subresource) entry.subresource = subresource;
  const idx = entries.findIndex(
    (e) =>
      e.manager === manager && e.operation === operation && (e.subresource ?? '') === (subresource ?? ''),
  );
  if (Object.keys(fields).length === 0) return entries;
  if (idx >= 0) entries[idx] = entry;
  else entries.push(entry);
  return entries;
}

function bodyFields(body: JsonObject, subresource?: string): JsonObject {
  const src: JsonObject = {};
  if (subresource === 'status') {
    if (body.status !== undefined) src.status = body.status;
  } else {
    for (const [k, v] of Object.entries(body)) {
      if (k === 'kind' || k === 'apiVersion' || k === 'status') continue;
      if (k === 'metadata' && isObject(v)) {
        const m: JsonObject = {};
        for (const mk of ['labels', 'annotations', 'ownerReferences', 'finalizers'])
          if (v[mk] !== undefined) m[mk] = v[mk];
        if (Object.keys(m).length) src.metadata = m;
        continue;
      }
      src[k] = v;
    }
  }
  return fieldsV1(src);
}

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

/** metadata.name checks (NameIsDNSSubdomain / NameIsDNSLabel), with apimachinery's messages. */
export function validateName(name: string | undefined, rule: 'subdomain' | 'label'): FieldError[] {
  if (!name) return [fieldRequired('metadata.name', 'name or generateName is required')];
  const errs: FieldError[] = [];
  if (rule === 'label') {
    if (name.length > 63)
      errs.push(fieldInvalid('metadata.name', name, 'must be no more than 63 characters'));
    if (!DNS1123_LABEL.test(name)) errs.push(fieldInvalid('metadata.name', name, LABEL_MSG));
  } else {
    if (name.length > 253)
      errs.push(fieldInvalid('metadata.name', name, 'must be no more than 253 characters'));
    if (!DNS1123_SUBDOMAIN.test(name)) errs.push(fieldInvalid('metadata.name', name, SUBDOMAIN_MSG));
  }
  return errs;
}

export const isDns1123Label = (s: string): boolean => s.length <= 63 && DNS1123_LABEL.test(s);
