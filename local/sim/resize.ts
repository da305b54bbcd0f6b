/**
 * The pods/resize subresource on the apiserver side: dropNonResizeUpdates (only container resources,
 * and on 1.32 resizePolicy, are taken from the request; image changes and unknown containers are
 * silently dropped) and ValidatePodResize (QoS class may not change, requests/limits may not be removed,
 * only cpu and memory may change). What the kubelet then does is in kubelet.ts.
 */
import { parseQuantity } from '../../shared/kernel/quantity.js';
import { type FieldError, fieldForbidden, fieldInvalid } from './errors.js';
import { clone, deepEqual, isObject, type Json, type JsonObject } from './json.js';
import { canonicalResources } from './objects.js';
import { computeQos, defaultPodSpec, specDiff } from './pods.js';
import type { Features } from './state.js';

const CPU_MEM = ['cpu', 'memory'];

const isSidecar = (c: Json) => c?.restartPolicy === 'Always';

/** Rewrites `pod` (the request, defaulted) into old + the resize-relevant parts of the request. */
export function prepareResize(pod: JsonObject, old: Json, f: Features): void {
  const incoming = defaultPodSpec(pod.spec, { resizePolicy: f.defaultResizePolicy });
  const next = clone(old);
  for (const field of ['containers', 'initContainers']) {
    const olds: Json[] = next.spec[field] ?? [];
    for (const c of incoming[field] ?? []) {
      const idx = olds.findIndex((o) => o.name === c?.name);
      if (idx < 0) continue;
      // Sidecar (restartPolicy Always) init containers are resizable from 1.33; other init containers never.
      if (field === 'initContainers' && !(isSidecar(olds[idx]) && f.resizeConditions)) continue;
      const target = olds[idx] as JsonObject;
      target.resources = canonicalResources(c.resources ?? {}, 'Pod');
      if (c.resizePolicy !== undefined) target.resizePolicy = c.resizePolicy;
      else delete target.resizePolicy;
    }
  }
  const changed = ['containers', 'initContainers'].some((field) =>
    (next.spec[field] ?? []).some(
      (c: Json, i: number) => !deepEqual(c.resources, old.spec[field]?.[i]?.resources),
    ),
  );
  if (changed && !f.resizeConditions) next.status = { ...next.status, resize: 'Proposed' };
  // Like dropPodUpdates: everything else, metadata included, stays as stored.
  for (const k of Object.keys(pod)) delete pod[k];
  Object.assign(pod, next);
}

function removed(newList: Json, oldList: Json): boolean {
  if (!isObject(oldList)) return false;
  return CPU_MEM.some((r) => oldList[r] !== undefined && (!isObject(newList) || newList[r] === undefined));
}

/** Only cpu/memory may differ: copy the old cpu/memory back (and resizePolicy on 1.32) and compare. */
function onlyCpuMemoryChanged(pod: Json, old: Json, f: Features): FieldError[] {
  const munged = clone(pod.spec);
  for (const field of ['containers', 'initContainers']) {
    (munged[field] ?? []).forEach((c: JsonObject, i: number) => {
      const o = old.spec[field]?.[i];
      if (!o) return;
      const drop = (list: Json, oldList: Json): Json => {
        if (!isObject(oldList)) return undefined;
        const out: JsonObject = isObject(list) ? { ...list } : {};
        for (const r of CPU_MEM) delete out[r];
        for (const r of CPU_MEM) if (oldList[r] !== undefined) out[r] = oldList[r];
        return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)));
      };
      const res: JsonObject = {};
      const lim = drop(c.resources?.limits, o.resources?.limits);
      const req = drop(c.resources?.requests, o.resources?.requests);
      if (lim !== undefined) res.limits = lim;
      if (req !== undefined) res.requests = req;
      c.resources = res;
      if (!f.resizePolicyImmutable) {
        if (o.resizePolicy !== undefined) c.resizePolicy = o.resizePolicy;
        else delete c.resizePolicy;
      }
    });
  }
  if (deepEqual(munged, old.spec)) return [];
  return [fieldForbidden('spec', `only cpu and memory resources are mutable${specDiff(old.spec, munged)}`)];
}

export function validateResize(pod: Json, old: Json, f: Features): FieldError[] {
  const errs: FieldError[] = requestsWithinLimits(pod);
  const oldQos = old.status?.qosClass ?? computeQos(old.spec);
  if (computeQos(pod.spec) !== oldQos)
    errs.push(fieldInvalid('spec', oldQos, 'Pod QOS Class may not change as a result of resizing'));
  for (const field of ['containers', 'initContainers']) {
    (old.spec[field] ?? []).forEach((o: Json, i: number) => {
      const c = pod.spec[field]?.[i];
      if (!c) return;
      const base = `spec.${field}[${i}].resources`;
      if (removed(c.resources?.requests, o.resources?.requests))
        errs.push(fieldForbidden(`${base}.requests`, 'resource requests cannot be removed'));
      if (removed(c.resources?.limits, o.resources?.limits))
        errs.push(fieldForbidden(`${base}.limits`, 'resource limits cannot be removed'));
      if (f.forbidMemoryLimitDecrease) errs.push(...memoryLimitChange(c, o, base));
    });
  }
  errs.push(...onlyCpuMemoryChanged(pod, old, f));
  return errs;
}

/** Every container's requests at most its limits. */
function requestsWithinLimits(pod: Json): FieldError[] {
  const errs: FieldError[] = [];
  for (const field of ['containers', 'initContainers']) {
    (pod.spec[field] ?? []).forEach((c: Json, i: number) => {
      for (const [k, v] of Object.entries(c.resources?.requests ?? {})) {
        const lim = c.resources?.limits?.[k];
        if (lim !== undefined && parseQuantity(v as string).nanos > parseQuantity(lim as string).nanos)
          errs.push(
            fieldInvalid(
              `spec.${field}[${i}].resources.requests`,
              v,
              `must be less than or equal to ${k} limit of ${lim}`,
            ),
          );
      }
    });
  }
  return errs;
}

/** Unless memory's resizePolicy restarts the container, its limit may not shrink or be added. */
function memoryLimitChange(c: Json, o: Json, base: string): FieldError[] {
  const policy =
    (c.resizePolicy ?? []).find((p: Json) => p.resourceName === 'memory')?.restartPolicy ?? 'NotRequired';
  if (policy !== 'NotRequired') return [];
  const oldMem = o.resources?.limits?.memory;
  const newMem = c.resources?.limits?.memory;
  const errs: FieldError[] = [];
  if (
    oldMem !== undefined &&
    newMem !== undefined &&
    parseQuantity(newMem).nanos < parseQuantity(oldMem).nanos
  )
    errs.push(
      fieldForbidden(
        `${base}.limits[memory]`,
        'memory limits cannot be decreased unless resizePolicy is RestartContainer',
      ),
    );
  if (oldMem === undefined && newMem !== undefined)
    errs.push(
      fieldForbidden(
        `${base}.limits[memory]`,
        'memory limits cannot be added unless resizePolicy is RestartContainer',
      ),
    );
  return errs;
}
