/**
 * Pods: defaulting (SetDefaults_Pod), the admission plugins a real apiserver runs on create
 * (ServiceAccount, Priority, DefaultTolerationSeconds), QoS class, and ValidatePodUpdate's rule that the
 * main endpoint may change little more than images.
 */

import { parseQuantity } from '../../shared/kernel/quantity.js';
import { validateNodeAffinity } from './affinity-validation.js';
import {
  type FieldError,
  fieldForbidden,
  fieldInvalid,
  fieldNotSupported,
  fieldRequired,
  forbidden,
} from './errors.js';
import { clone, deepEqual, isObject, type Json, type JsonObject, orderKeys } from './json.js';
import { isDns1123Label, orderPodSpec, orderTop, POD_STATUS_ORDER } from './objects.js';
import type { Scope, SimState, Strategy } from './state.js';
import { withTopologyLabels } from './topology-labels.js';

export type QosClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

const QOS_RESOURCES = ['cpu', 'memory'];

function nonZero(v: unknown): boolean {
  try {
    return v !== undefined && parseQuantity(v as string).nanos !== 0n;
  } catch {
    return false;
  }
}

/** ComputePodQOS (pkg/apis/core/helper/qos), over regular and init containers. */
export function computeQos(spec: Json): QosClass {
  const requests = new Map<string, bigint>();
  const limits = new Map<string, bigint>();
  let guaranteed = true;
  const containers: Json[] = [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])];
  for (const c of containers) {
    const req = c?.resources?.requests ?? {};
    const lim = c?.resources?.limits ?? {};
    for (const r of QOS_RESOURCES) {
      if (nonZero(req[r])) requests.set(r, (requests.get(r) ?? 0n) + parseQuantity(req[r]).nanos);
    }
    const found = new Set<string>();
    for (const r of QOS_RESOURCES) {
      if (nonZero(lim[r])) {
        found.add(r);
        limits.set(r, (limits.get(r) ?? 0n) + parseQuantity(lim[r]).nanos);
      }
    }
    if (!QOS_RESOURCES.every((r) => found.has(r))) guaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (guaranteed) {
    for (const [r, q] of requests) if (limits.get(r) !== q) guaranteed = false;
  }
  return guaranteed && requests.size === limits.size ? 'Guaranteed' : 'Burstable';
}

function imagePullPolicy(image: string | undefined): string {
  if (!image) return 'IfNotPresent';
  const last = image.split('/').pop() ?? '';
  if (image.includes('@')) return 'IfNotPresent';
  const tag = last.includes(':') ? last.slice(last.lastIndexOf(':') + 1) : '';
  return tag === '' || tag === 'latest' ? 'Always' : 'IfNotPresent';
}

/** Defaults of one container (SetDefaults_Container plus requests-from-limits and resizePolicy). */
export function defaultContainer(
  c: JsonObject,
  opts: { resizePolicy: boolean; template?: boolean },
): JsonObject {
  const out: JsonObject = { ...c };
  if (isObject(out.resources)) {
    const res: JsonObject = { ...out.resources };
    if (isObject(res.limits) && !opts.template) {
      const req: JsonObject = isObject(res.requests) ? { ...res.requests } : {};
      for (const [k, v] of Object.entries(res.limits)) if (req[k] === undefined) req[k] = v;
      res.requests = req;
    }
    out.resources = res;
  } else {
    out.resources = {};
  }
  if (opts.resizePolicy && !opts.template) {
    const res = out.resources;
    const has = (r: string) => res.requests?.[r] !== undefined || res.limits?.[r] !== undefined;
    if (has('cpu') || has('memory')) {
      const policies: JsonObject[] = Array.isArray(out.resizePolicy) ? [...out.resizePolicy] : [];
      for (const r of ['cpu', 'memory']) {
        if (has(r) && !policies.some((p) => p.resourceName === r))
          policies.push({ resourceName: r, restartPolicy: 'NotRequired' });
      }
      out.resizePolicy = policies;
    }
  }
  if (Array.isArray(out.ports))
    out.ports = out.ports.map((p: JsonObject) =>
      isObject(p) && !p.protocol ? { ...p, protocol: 'TCP' } : p,
    );
  out.terminationMessagePath ??= '/dev/termination-log';
  out.terminationMessagePolicy ??= 'File';
  out.imagePullPolicy ??= imagePullPolicy(out.image);
  return out;
}

/** SetDefaults_PodSpec and the container defaults; `template` for pod templates (no pod-only defaults). */
export function defaultPodSpec(spec: Json, opts: { resizePolicy: boolean; template?: boolean }): JsonObject {
  const s: JsonObject = isObject(spec) ? { ...spec } : {};
  for (const f of ['initContainers', 'containers']) {
    if (Array.isArray(s[f])) s[f] = s[f].map((c: Json) => (isObject(c) ? defaultContainer(c, opts) : c));
  }
  s.restartPolicy ??= 'Always';
  s.terminationGracePeriodSeconds ??= 30;
  s.dnsPolicy ??= 'ClusterFirst';
  s.securityContext ??= {};
  s.schedulerName ??= 'default-scheduler';
  if (!opts.template) s.enableServiceLinks ??= true;
  return s;
}

const NOT_READY = 'node.kubernetes.io/not-ready';
const UNREACHABLE = 'node.kubernetes.io/unreachable';

/** DefaultTolerationSeconds admission: not-ready and unreachable NoExecute for 300 s unless tolerated. */
export function addDefaultTolerations(tolerations: Json[] | undefined): Json[] {
  const out = [...(tolerations ?? [])];
  const tolerated = (key: string) =>
    out.some(
      (t) =>
        isObject(t) &&
        (t.effect === 'NoExecute' || !t.effect) &&
        (t.key === key || (!t.key && t.operator === 'Exists')),
    );
  if (!tolerated(NOT_READY))
    out.push({ key: NOT_READY, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 });
  if (!tolerated(UNREACHABLE))
    out.push({ key: UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 });
  return out;
}

/** The projected service-account token volume and its mount, as the ServiceAccount admission plugin adds. */
const SA_PROJECTION = {
  sources: [
    { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
    { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
    {
      downwardAPI: {
        items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }],
      },
    },
  ],
  defaultMode: 420,
};

/** Stored objects are never mutated, so every pod can share the (identical) projection. */
export function serviceAccountVolume(volumeName: string): JsonObject {
  return { name: volumeName, projected: SA_PROJECTION };
}

export const SA_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';

/** Admission on create: ServiceAccount, Priority and DefaultTolerationSeconds, in the apiserver's order. */
export function admitPod(cluster: SimState, pod: JsonObject, volumeSuffix: string): void {
  admitServiceAccount(cluster, pod, volumeSuffix);
  admitPriority(cluster, pod);
  pod.spec.tolerations = addDefaultTolerations(pod.spec.tolerations);
}

/** The pod's account must exist; its token is mounted in every container unless automount is off. */
function admitServiceAccount(cluster: SimState, pod: JsonObject, volumeSuffix: string): void {
  const ns = pod.metadata.namespace as string;
  const spec = pod.spec as JsonObject;
  const saName = (spec.serviceAccountName || spec.serviceAccount || 'default') as string;
  const sa = cluster.store.get('serviceaccounts', `${ns}/${saName}`);
  if (!sa) {
    throw forbidden(
      { group: '', resource: 'pods' },
      pod.metadata.name as string,
      `error looking up service account ${ns}/${saName}: serviceaccount "${saName}" not found`,
    );
  }
  spec.serviceAccountName = saName;
  spec.serviceAccount = saName;
  const automount = spec.automountServiceAccountToken ?? sa.automountServiceAccountToken ?? true;
  const hasMount = (c: Json) => (c.volumeMounts ?? []).some((m: Json) => m.mountPath === SA_MOUNT_PATH);
  if (automount === false || (spec.containers ?? []).some(hasMount)) return;
  const volName = `kube-api-access-${volumeSuffix}`;
  spec.volumes = [...(spec.volumes ?? []), serviceAccountVolume(volName)];
  const mount = { name: volName, readOnly: true, mountPath: SA_MOUNT_PATH };
  for (const f of ['initContainers', 'containers']) {
    if (Array.isArray(spec[f]))
      spec[f] = spec[f].map((c: Json) =>
        hasMount(c) ? c : { ...c, volumeMounts: [...(c.volumeMounts ?? []), mount] },
      );
  }
}

/** The priority of the named class (which must exist), else of the global default, else 0. */
function admitPriority(cluster: SimState, pod: JsonObject): void {
  const spec = pod.spec as JsonObject;
  const pcName = spec.priorityClassName as string | undefined;
  if (pcName) {
    const pc = cluster.store.get('priorityclasses.scheduling.k8s.io', pcName);
    if (!pc)
      throw forbidden(
        { group: '', resource: 'pods' },
        pod.metadata.name as string,
        `no PriorityClass with name ${pcName} was found`,
      );
    spec.priority = pc.value;
    spec.preemptionPolicy = pc.preemptionPolicy ?? 'PreemptLowerPriority';
    return;
  }
  const def = cluster.globalDefaultPriorityClass();
  if (def) {
    spec.priorityClassName = def.metadata.name;
    spec.priority = def.value;
    spec.preemptionPolicy = def.preemptionPolicy ?? 'PreemptLowerPriority';
  } else {
    spec.priority = 0;
    spec.preemptionPolicy ??= 'PreemptLowerPriority';
  }
}

/** Field order of a Pod: kind, apiVersion, metadata, spec (Go order, canonical quantities), status. */
export function normalizePod(pod: JsonObject): JsonObject {
  const out = orderTop(pod);
  if (isObject(out.spec)) out.spec = orderPodSpec(out.spec);
  if (isObject(out.status)) out.status = orderKeys(out.status, POD_STATUS_ORDER);
  return out;
}

function validateResources(res: Json, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!isObject(res)) return errs;
  for (const part of ['requests', 'limits']) {
    for (const [k, v] of Object.entries(res[part] ?? {})) {
      try {
        if (parseQuantity(v as string).nanos < 0n)
          errs.push(fieldInvalid(`${path}.${part}[${k}]`, v, 'must be greater than or equal to 0'));
      } catch {
        errs.push(fieldInvalid(`${path}.${part}[${k}]`, v, 'must be a valid quantity'));
      }
    }
  }
  for (const [k, v] of Object.entries(res.requests ?? {})) {
    const lim = res.limits?.[k];
    if (lim === undefined) continue;
    try {
      if (parseQuantity(v as string).nanos > parseQuantity(lim as string).nanos)
        errs.push(fieldInvalid(`${path}.requests`, v, `must be less than or equal to ${k} limit of ${lim}`));
    } catch {
      /* reported above */
    }
  }
  return errs;
}

/** The create-time checks of ValidatePodCreate that matter to the simulator's clients. */
export function validatePodSpec(spec: Json, path = 'spec'): FieldError[] {
  const errs: FieldError[] = [];
  const containers: Json[] = spec?.containers ?? [];
  if (!Array.isArray(spec?.containers) || containers.length === 0)
    errs.push(fieldRequired(`${path}.containers`));
  const names = new Set<string>();
  for (const [field, list] of [
    ['initContainers', spec?.initContainers ?? []],
    ['containers', containers],
  ] as const) {
    list.forEach((c: Json, i: number) => {
      const p = `${path}.${field}[${i}]`;
      if (!c?.name) errs.push(fieldRequired(`${p}.name`));
      else if (!isDns1123Label(c.name))
        errs.push(
          fieldInvalid(
            `${p}.name`,
            c.name,
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
          ),
        );
      else if (names.has(c.name))
        errs.push({ type: 'FieldValueDuplicate', field: `${p}.name`, value: c.name });
      if (c?.name) names.add(c.name);
      if (!c?.image) errs.push(fieldRequired(`${p}.image`));
      errs.push(...validateResources(c?.resources, `${p}.resources`));
      for (const [j, rp] of (c?.resizePolicy ?? []).entries()) {
        if (!['cpu', 'memory'].includes(rp?.resourceName))
          errs.push(
            fieldNotSupported(`${p}.resizePolicy[${j}].resourceName`, rp?.resourceName, ['cpu', 'memory']),
          );
        if (!['NotRequired', 'RestartContainer'].includes(rp?.restartPolicy))
          errs.push(
            fieldNotSupported(`${p}.resizePolicy[${j}].restartPolicy`, rp?.restartPolicy, [
              'NotRequired',
              'RestartContainer',
            ]),
          );
      }
    });
  }
  errs.push(...validateNodeAffinity(spec, path));
  return errs;
}

export const POD_UPDATE_FORBIDDEN =
  'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

/**
 * A short rendering of a spec difference in place of go-cmp's (which dumps the Go structs): one
 * "-"/"+" pair per differing path. The first line of the message matches the real server.
 */
export function specDiff(oldSpec: Json, newSpec: Json): string {
  const lines: string[] = [];
  const walk = (a: Json, b: Json, path: string) => {
    if (deepEqual(a, b)) return;
    if (isObject(a) && isObject(b)) {
      for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) walk(a[k], b[k], `${path}.${k}`);
      return;
    }
    if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
      a.forEach((x, i) => {
        walk(x, b[i], `${path}[${i}]`);
      });
      return;
    }
    if (a !== undefined) lines.push(`-\u00a0\t${path.slice(1)}: ${JSON.stringify(a)}`);
    if (b !== undefined) lines.push(`+\u00a0\t${path.slice(1)}: ${JSON.stringify(b)}`);
  };
  walk(oldSpec, newSpec, '');
  return `\n\u00a0\u00a0core.PodSpec{\n${lines.join('\n')}\n\u00a0\u00a0}\n`;
}

/** ValidatePodUpdate's spec rule: only images, activeDeadlineSeconds, added tolerations, grace period. */
export function validatePodUpdate(pod: Json, old: Json): FieldError[] {
  const munged = clone(pod.spec ?? {});
  const oldSpec = old.spec ?? {};
  for (const f of ['containers', 'initContainers']) {
    const a = munged[f];
    const b = oldSpec[f];
    if (Array.isArray(a) && Array.isArray(b) && a.length === b.length)
      a.forEach((c: Json, i: number) => {
        if (isObject(c) && isObject(b[i])) c.image = b[i].image;
      });
  }
  munged.activeDeadlineSeconds = oldSpec.activeDeadlineSeconds;
  if (munged.activeDeadlineSeconds === undefined) delete munged.activeDeadlineSeconds;
  const oldTol: Json[] = oldSpec.tolerations ?? [];
  const newTol: Json[] = munged.tolerations ?? [];
  const errs: FieldError[] = [];
  const removed = oldTol.filter(
    (t) =>
      !newTol.some((n) =>
        deepEqual({ ...n, tolerationSeconds: undefined }, { ...t, tolerationSeconds: undefined }),
      ),
  );
  if (removed.length)
    errs.push(
      fieldForbidden(
        'spec.tolerations',
        'existing toleration can not be modified except its tolerationSeconds',
      ),
    );
  munged.tolerations = oldSpec.tolerations;
  if (munged.tolerations === undefined) delete munged.tolerations;
  munged.terminationGracePeriodSeconds = oldSpec.terminationGracePeriodSeconds;
  if (!deepEqual(munged, oldSpec))
    errs.unshift(fieldForbidden('spec', `${POD_UPDATE_FORBIDDEN}${specDiff(oldSpec, munged)}`));
  return errs;
}

export function podStrategy(cluster: SimState): Strategy {
  return {
    nameRule: 'subdomain',
    prepareCreate(pod, scope: Scope) {
      pod.spec = defaultPodSpec(pod.spec, { resizePolicy: cluster.features.defaultResizePolicy });
      if (!scope.internal)
        admitPod(
          cluster,
          pod,
          cluster.suffix('pods/volume', pod.metadata.namespace, pod.metadata.name ?? ''),
        );
      if (pod.spec?.nodeName) pod.metadata = withTopologyLabels(cluster, pod, pod.spec.nodeName).metadata;
      const status: JsonObject = { phase: 'Pending' };
      pod.status = status;
      status.qosClass = computeQos(pod.spec);
    },
    validateCreate(pod) {
      return validatePodSpec(pod.spec);
    },
    prepareUpdate(pod, old) {
      pod.status = clone(old.status);
      pod.spec = defaultPodSpec(pod.spec, { resizePolicy: cluster.features.defaultResizePolicy });
    },
    validateUpdate(pod, old, scope) {
      if (scope.subresource === 'status') return [];
      return validatePodUpdate(pod, old);
    },
    prepareStatusUpdate(pod, old) {
      const status = pod.status;
      for (const k of Object.keys(pod)) delete pod[k];
      Object.assign(pod, clone(old));
      pod.status = status;
    },
    normalize: normalizePod,
  };
}
