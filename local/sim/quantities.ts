/**
 * Quantities on every write path (create, update, every patch type, /status, /resize) of every kind
 * that carries them, as the apiserver meets them: a malformed quantity fails decoding (400 `<Kind> in
 * version "v1" cannot be handled as a <Kind>: <ParseQuantity error>`, or for a patch 422 with the field
 * `patch`), a negative one fails validation (ValidateResourceQuantityValue: 422 with the quantity's
 * field path in the causes), as does a fraction of an integer resource or a request above its limit.
 */
import { canonicalizeQuantity, parseQuantity, QuantityError } from '../../shared/kernel/quantity.js';
import { ApiError, badRequest, type FieldError, fieldInvalid, invalid } from './errors.js';
import { isObject, type Json } from './json.js';

interface QuantityField {
  path: string;
  value: Json;
  resource: string;
}

/** The ResourceLists of an object: where each sits and how its keys are written in field paths. */
function resourceLists(collection: string, obj: Json): { path: string; list: Json; child?: boolean }[] {
  const out: { path: string; list: Json; child?: boolean }[] = [];
  const podSpec = (spec: Json, at: string) => {
    for (const kind of ['initContainers', 'containers', 'ephemeralContainers'])
      (Array.isArray(spec?.[kind]) ? spec[kind] : []).forEach((c: Json, i: number) => {
        for (const part of ['requests', 'limits'])
          out.push({ path: `${at}.${kind}[${i}].resources.${part}`, list: c?.resources?.[part] });
      });
    out.push({ path: `${at}.overhead`, list: spec?.overhead });
    for (const part of ['requests', 'limits'])
      out.push({ path: `${at}.resources.${part}`, list: spec?.resources?.[part] });
  };
  switch (collection) {
    case 'pods':
      podSpec(obj.spec, 'spec');
      break;
    case 'podtemplates':
      podSpec(obj.template?.spec, 'template.spec');
      break;
    case 'replicationcontrollers':
    case 'daemonsets.apps':
    case 'deployments.apps':
    case 'replicasets.apps':
    case 'statefulsets.apps':
      podSpec(obj.spec?.template?.spec, 'spec.template.spec');
      break;
    case 'nodes':
      // ValidateNode builds these paths with Child, not Key: status.capacity.cpu.
      out.push({ path: 'status.capacity', list: obj.status?.capacity, child: true });
      out.push({ path: 'status.allocatable', list: obj.status?.allocatable, child: true });
      break;
    case 'resourcequotas':
      for (const p of ['spec.hard', 'status.hard', 'status.used'])
        out.push({ path: p, list: p.split('.').reduce((o: Json, k) => o?.[k], obj) });
      break;
    case 'limitranges':
      (Array.isArray(obj.spec?.limits) ? obj.spec.limits : []).forEach((l: Json, i: number) => {
        for (const p of ['max', 'min', 'default', 'defaultRequest', 'maxLimitRequestRatio'])
          out.push({ path: `spec.limits[${i}].${p}`, list: l?.[p] });
      });
      break;
    case 'persistentvolumeclaims':
      for (const p of ['requests', 'limits'])
        out.push({ path: `spec.resources.${p}`, list: obj.spec?.resources?.[p] });
      out.push({ path: 'status.capacity', list: obj.status?.capacity });
      break;
    case 'persistentvolumes':
      out.push({ path: 'spec.capacity', list: obj.spec?.capacity });
      break;
  }
  return out.filter((l) => isObject(l.list));
}

function quantityFields(collection: string, obj: Json): QuantityField[] {
  return resourceLists(collection, obj).flatMap(({ path, list, child }) =>
    Object.entries(list)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => ({
        path: child ? `${path}.${k}` : `${path}[${k}]`,
        value: v,
        resource: k,
      })),
  );
}

/** The first malformed quantity's ParseQuantity error, if any. */
export function malformedQuantity(collection: string, obj: Json): string | undefined {
  if (!isObject(obj)) return undefined;
  for (const f of quantityFields(collection, obj)) {
    if (f.value === null) continue;
    try {
      parseQuantity(typeof f.value === 'number' ? f.value : String(f.value));
    } catch (err) {
      if (err instanceof QuantityError) return err.reason;
      throw err;
    }
  }
  return undefined;
}

/** The decoding failure of a request body (create or update) with a malformed quantity. */
export function checkDecodable(collection: string, kind: string, version: string, obj: Json): void {
  const reason = malformedQuantity(collection, obj);
  if (reason) throw badRequest(`${kind} in version "${version}" cannot be handled as a ${kind}: ${reason}`);
}

// helper.IsIntegerResourceName: the standard integer resources, extended resources and object counts.
const isIntegerResource = (r: string) =>
  [
    'pods',
    'services',
    'replicationcontrollers',
    'resourcequotas',
    'secrets',
    'configmaps',
    'persistentvolumeclaims',
  ].includes(r) ||
  r.startsWith('count/') ||
  r.startsWith('services.') ||
  (r.includes('/') &&
    !r.startsWith('requests.') &&
    !r.startsWith('limits.') &&
    !r.startsWith('hugepages-') &&
    !r.startsWith('kubernetes.io/'));

/**
 * ValidateResourceQuantityValue for every quantity. A pod's create is validated by its own strategy
 * (`creating`), its updates (PUT, patches, /resize) here, values only: the strategy compares requests
 * and limits.
 */
export function validateQuantities(collection: string, obj: Json, creating = false): FieldError[] {
  if ((collection === 'pods' && creating) || !isObject(obj)) return [];
  const errs: FieldError[] = [];
  for (const f of quantityFields(collection, obj)) {
    let q: ReturnType<typeof parseQuantity>;
    try {
      q = parseQuantity(typeof f.value === 'number' ? f.value : String(f.value));
    } catch {
      continue;
    }
    const shown = canonicalizeQuantity(f.value);
    if (q.nanos < 0n) errs.push(fieldInvalid(f.path, shown, 'must be greater than or equal to 0'));
    else if (isIntegerResource(f.resource) && q.nanos % 1_000_000_000n !== 0n)
      errs.push(fieldInvalid(f.path, shown, 'must be an integer'));
  }
  // Requests above limits, for pod templates (the pod strategy checks pods).
  if (collection === 'pods') return errs;
  for (const { path, list } of resourceLists(collection, obj).filter((l) => l.path.endsWith('.requests'))) {
    const limits = resourceLists(collection, obj).find(
      (l) => l.path === path.replace(/requests$/, 'limits'),
    )?.list;
    for (const [k, v] of Object.entries(list)) {
      if (limits?.[k] === undefined) continue;
      try {
        if (parseQuantity(String(v)).nanos > parseQuantity(String(limits[k])).nanos)
          errs.push(
            fieldInvalid(
              path,
              canonicalizeQuantity(v as string),
              `must be less than or equal to ${k} limit of ${canonicalizeQuantity(limits[k])}`,
            ),
          );
      } catch {
        /* malformed: refused when decoding */
      }
    }
  }
  return errs;
}

/** Go's %+v of a decoded JSON value (map[k:v ...] with sorted keys, [a b] for slices). */
function goFormat(v: Json): string {
  if (Array.isArray(v)) return `[${v.map(goFormat).join(' ')}]`;
  if (isObject(v))
    return `map[${Object.keys(v)
      .sort()
      .map((k) => `${k}:${goFormat(v[k])}`)
      .join(' ')}]`;
  return v === null ? '<nil>' : String(v);
}

/**
 * A patch whose result has a malformed quantity: the patcher fails to decode the patched object and
 * answers NewInvalid(GroupKind{}, "", patch: Invalid value: <the patched JSON, or %+v of a strategic
 * merge patch>) (apiserver endpoints/handlers/patch.go).
 */
export function checkPatchedDecodable(
  collection: string,
  patched: Json,
  patch: Json,
  strategic: boolean,
): void {
  const reason = malformedQuantity(collection, patched);
  if (!reason) return;
  const shown = strategic ? goFormat(patch) : JSON.stringify(patched);
  const err = invalid('', '', '', [fieldInvalid('patch', shown, reason)]);
  throw new ApiError(422, 'Invalid', err.message, { causes: err.details?.causes });
}
