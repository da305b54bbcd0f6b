/**
 * DaemonSets: the apps/v1 strategy (defaults as recorded in 03a, template generation) and a DaemonSet
 * controller: one pod per node the DaemonSet selects and tolerates, named <ds>-<5 chars>, owned by the
 * DaemonSet, pinned to its node by required node affinity on metadata.name; a deleted pod is recreated
 * with a new name and uid; a template change replaces the pods (the rolling update collapsed into one
 * step; with updateStrategy OnDelete, a pod is replaced only once someone deletes it). Pods created at run time are left for the scheduler to bind, as a real controller's are, so
 * one that does not fit stays Pending (Unschedulable) until room appears; start-up places them directly.
 * With `lags.daemonSetMs` (lags.ts) a missing pod is created that long after the controller noticed it.
 */

import {
  DAEMON_POD_TOLERATIONS,
  HOST_NETWORK_TOLERATION,
  type PlacementFacts,
  placementOf,
  placementProblem,
} from '../../shared/nodescope/eligibility.js';
import { validateNodeAffinity } from './affinity-validation.js';
import { rfc3339 } from './clock.js';
import { type FieldError, fieldInvalid, fieldRequired } from './errors.js';
import { fnv1a, nameSuffixFast, uuidFast } from './ids.js';
import { clone, deepEqual, isObject, type Json, type JsonObject, orderKeys } from './json.js';
import { DueQueue } from './lags.js';
import { nodeNamesFromAffinity } from './node-fit.js';
import { orderPodSpec, orderTop } from './objects.js';
import { UNBOUND } from './pod-requests.js';
import {
  addDefaultTolerations,
  computeQos,
  defaultPodSpec,
  SA_MOUNT_PATH,
  serviceAccountVolume,
} from './pods.js';
import { objectKey } from './rest.js';
import { labelSelectorObjectMatches } from './selectors.js';
import type { Features, SimState, Strategy } from './state.js';
import type { StoreEvent } from './store.js';

export const TEMPLATE_GENERATION = 'deprecated.daemonset.template.generation';
/** Annotation carrying a JSON LoadProfile, for DaemonSets created through the API. */
export const LOAD_ANNOTATION = 'sim.fleetscope.io/load';

const STATUS_ORDER = [
  'currentNumberScheduled',
  'numberMisscheduled',
  'desiredNumberScheduled',
  'numberReady',
  'observedGeneration',
  'updatedNumberScheduled',
  'numberAvailable',
  'numberUnavailable',
  'collisionCount',
  'conditions',
];

function normalizeDaemonSet(ds: JsonObject): JsonObject {
  const out = orderTop(ds);
  if (isObject(out.spec)) {
    const order = ['selector', 'template', 'updateStrategy', 'minReadySeconds', 'revisionHistoryLimit'];
    const spec = orderKeys(out.spec, order);
    if (isObject(spec.template)) {
      const tpl = orderKeys(spec.template, ['metadata', 'spec']);
      const meta = ['name', 'namespace', 'creationTimestamp', 'labels', 'annotations'];
      if (isObject(tpl.metadata)) tpl.metadata = orderKeys(tpl.metadata, meta);
      if (isObject(tpl.spec)) tpl.spec = orderPodSpec(tpl.spec, 'DaemonSet');
      spec.template = tpl;
    }
    out.spec = spec;
  }
  if (isObject(out.status)) out.status = withoutZeros(orderKeys(out.status, STATUS_ORDER), OMITTED_WHEN_ZERO);
  return out;
}

/** DaemonSetStatus fields tagged `omitempty` (observedGeneration to numberUnavailable): left out at 0. */
const OMITTED_WHEN_ZERO = STATUS_ORDER.slice(STATUS_ORDER.indexOf('observedGeneration'), -2);

function withoutZeros(o: JsonObject, keys: readonly string[]): JsonObject {
  if (!keys.some((k) => o[k] === 0)) return o;
  const out = { ...o };
  for (const k of keys) if (out[k] === 0) delete out[k];
  return out;
}

/** The template's placeholder `volumeMounts: []`, left out as a real server leaves an empty list (omitempty). */
function withoutEmptyMounts(c: Json): Json {
  if (c.volumeMounts?.length) return c;
  const out = { ...c };
  delete out.volumeMounts;
  return out;
}

/** A pod template's metadata as the server writes it: an unset creationTimestamp null, or left out. */
function templateMetadata(meta: Json, f: Pick<Features, 'nullCreationTimestamp'>): JsonObject {
  const m: JsonObject = isObject(meta) ? { ...meta } : {};
  if (f.nullCreationTimestamp) return { creationTimestamp: null, ...m };
  if (m.creationTimestamp === null) delete m.creationTimestamp;
  return m;
}

export function daemonSetStrategy(f: Pick<Features, 'nullCreationTimestamp'>): Strategy {
  return {
    nameRule: 'subdomain',
    prepareCreate(ds) {
      const spec: JsonObject = isObject(ds.spec) ? { ...ds.spec } : {};
      const tpl: JsonObject = isObject(spec.template) ? { ...spec.template } : {};
      tpl.metadata = templateMetadata(tpl.metadata, f);
      tpl.spec = defaultPodSpec(tpl.spec, { resizePolicy: false, template: true });
      spec.template = tpl;
      spec.updateStrategy ??= { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } };
      spec.revisionHistoryLimit ??= 10;
      ds.spec = spec;
      ds.metadata.annotations = { ...(ds.metadata.annotations ?? {}), [TEMPLATE_GENERATION]: '1' };
      ds.status = {
        currentNumberScheduled: 0,
        numberMisscheduled: 0,
        desiredNumberScheduled: 0,
        numberReady: 0,
      };
    },
    validateCreate(ds) {
      return validateDaemonSet(ds);
    },
    prepareUpdate(ds, old) {
      ds.status = clone(old.status);
      if (isObject(ds.spec?.template)) {
        ds.spec.template = {
          ...ds.spec.template,
          spec: defaultPodSpec(ds.spec.template.spec, { resizePolicy: false, template: true }),
        };
        ds.spec.template.metadata = templateMetadata(ds.spec.template.metadata, f);
      }
      const prevGen = Number(old.metadata.annotations?.[TEMPLATE_GENERATION] ?? 1);
      const changed = !deepEqual(normalizeDaemonSet(clone(ds)).spec?.template, old.spec?.template);
      ds.metadata.annotations = {
        ...(ds.metadata.annotations ?? {}),
        [TEMPLATE_GENERATION]: String(changed ? prevGen + 1 : prevGen),
      };
    },
    validateUpdate(ds) {
      return validateDaemonSet(ds);
    },
    normalize: normalizeDaemonSet,
  };
}

function validateDaemonSet(ds: Json): FieldError[] {
  const errs: FieldError[] = [];
  const sel = ds.spec?.selector;
  if (!isObject(sel)) errs.push(fieldRequired('spec.selector'));
  const labels = ds.spec?.template?.metadata?.labels ?? {};
  if (isObject(sel) && !labelSelectorObjectMatches(sel, labels))
    errs.push(
      fieldInvalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`'),
    );
  if (!Array.isArray(ds.spec?.template?.spec?.containers) || ds.spec.template.spec.containers.length === 0)
    errs.push(fieldRequired('spec.template.spec.containers'));
  errs.push(...validateNodeAffinity(ds.spec?.template?.spec, 'spec.template.spec'));
  return errs;
}

/** The pod spec's tolerations with the ones the DaemonSet controller adds (AddOrUpdateDaemonPodTolerations). */
function daemonTolerations(tpl: Json): Json[] {
  const out = [...(tpl?.tolerations ?? [])];
  for (const t of DAEMON_POD_TOLERATIONS)
    if (!out.some((x) => x?.key === t.key && x?.effect === t.effect)) out.push(t);
  if (tpl?.hostNetwork) out.push(HOST_NETWORK_TOLERATION);
  return out;
}

/**
 * Whether a DaemonSet wants a pod on a node: nodeSelector, required node affinity, taints, decided by
 * the same predicates nodescope uses (shared/nodescope/eligibility.ts).
 */
export function shouldRunOn(ds: Json, node: Json, placement?: PlacementFacts): boolean {
  const facts = {
    name: node.metadata.name,
    labels: node.metadata?.labels ?? {},
    taints: node.spec?.taints ?? [],
  };
  return placementProblem(placement ?? placementOf(ds.spec?.template?.spec ?? {}), facts) === undefined;
}

/** controller-revision-hash: the template hash encoded as rand.SafeEncodeString does. */
function revisionHash(tpl: Json): string {
  const alphanums = 'bcdfghjklmnpqrstvwxz2456789';
  return [...String(fnv1a(JSON.stringify(tpl)))]
    .map((c) => alphanums[c.charCodeAt(0) % alphanums.length])
    .join('');
}

/** Per-DaemonSet parts shared by all of its pods (they are never mutated once stored). */
interface PodTemplateCache {
  rv: string;
  labels: JsonObject;
  annotations?: JsonObject;
  ownerReferences: JsonObject[];
  /** The pod spec in field order, with placeholders for the per-pod fields. */
  spec: JsonObject;
  automount: boolean;
  qos: string;
  placement: PlacementFacts;
}

export class DaemonSetController {
  private readonly cache = new Map<string, PodTemplateCache>();
  private readonly attempts = new Map<string, number>();
  private readonly affinities = new Map<string, JsonObject>();
  /** Daemon pods a lagging controller will create, keyed `<ds key>|<node>`. */
  private readonly late = new DueQueue<{ ds: string; node: string }>();

  constructor(private readonly cluster: SimState) {}

  /** Whether the controller creates the missing pod of `ds` on `node` now (else it is due later). */
  private createsNow(dsKey: string, node: string): boolean {
    const lag = this.cluster.spec.lags?.daemonSetMs ?? 0;
    if (lag <= 0) return true;
    const key = `${dsKey}|${node}`;
    const now = this.cluster.clock.now();
    this.late.add(key, now + lag, { ds: dsKey, node });
    if ((this.late.at(key) ?? now) > now) return false;
    this.late.delete(key);
    return true;
  }

  /** The simulated clock moved: a lagging controller creates the pods now due. */
  onClock(now: number): void {
    for (const { item } of this.late.take(now)) this.reconcile(item.ds, item.node, true);
  }

  private template(ds: Json): PodTemplateCache {
    const key = objectKey(ds.metadata.namespace, ds.metadata.name);
    const hit = this.cache.get(key);
    if (hit && hit.rv === ds.metadata.resourceVersion) return hit;
    const tpl = ds.spec.template;
    const f = this.cluster.features;
    const base = defaultPodSpec(clone(tpl.spec), { resizePolicy: f.defaultResizePolicy });
    base.tolerations = addDefaultTolerations(daemonTolerations(base));
    const saName = base.serviceAccountName || 'default';
    base.serviceAccountName = saName;
    base.serviceAccount = saName;
    const pc = base.priorityClassName
      ? this.cluster.store.get('priorityclasses.scheduling.k8s.io', base.priorityClassName)
      : undefined;
    base.priority = pc?.value ?? 0;
    base.preemptionPolicy = pc?.preemptionPolicy ?? 'PreemptLowerPriority';
    // Placeholders keep the per-pod fields in Go field order when a pod spreads this template.
    base.volumes ??= [];
    base.nodeName = '';
    base.affinity ??= {};
    base.containers = (base.containers ?? []).map((c: Json) => ({
      ...c,
      volumeMounts: c.volumeMounts ?? [],
    }));
    const spec = orderPodSpec(base);
    const entry: PodTemplateCache = {
      rv: ds.metadata.resourceVersion,
      labels: {
        ...(tpl.metadata?.labels ?? {}),
        'controller-revision-hash': revisionHash(tpl),
        'pod-template-generation': ds.metadata.annotations?.[TEMPLATE_GENERATION] ?? '1',
      },
      annotations: tpl.metadata?.annotations,
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'DaemonSet',
          name: ds.metadata.name,
          uid: ds.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      spec,
      automount: spec.automountServiceAccountToken !== false,
      qos: computeQos(spec),
      placement: placementOf(tpl.spec ?? {}),
    };
    this.cache.set(key, entry);
    return entry;
  }

  /** The required node affinity the controller pins daemon pods with (one shared object per node). */
  private affinity(nodeName: string): JsonObject {
    let a = this.affinities.get(nodeName);
    if (!a) {
      a = {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] },
            ],
          },
        },
      };
      this.affinities.set(nodeName, a);
    }
    return a;
  }

  /** Whether the DaemonSet wants a pod on the node (cached placement facts). */
  wants(ds: Json, node: Json): boolean {
    return shouldRunOn(ds, node, this.template(ds).placement);
  }

  /**
   * A new daemon pod for `node`, Pending: bound when `bound` (start-up), else left to the scheduler.
   * `taken` holds names already used by pods not yet in the store (start-up builds all pods first).
   */
  buildPod(ds: Json, nodeName: string, createdAt: number, taken?: Set<string>, bound = true): JsonObject {
    const t = this.template(ds);
    const dsKey = objectKey(ds.metadata.namespace, ds.metadata.name);
    const attemptKey = `${dsKey}|${nodeName}`;
    const pods = this.cluster.store.collection('pods');
    const h = fnv1a(attemptKey, this.cluster.seedHash);
    let name = '';
    for (;;) {
      const n = this.attempts.get(attemptKey) ?? 0;
      this.attempts.set(attemptKey, n + 1);
      name = `${ds.metadata.name}-${nameSuffixFast(5, h, n)}`;
      const key = objectKey(ds.metadata.namespace, name);
      if (!pods.get(key) && !taken?.has(key)) break;
    }
    const key = objectKey(ds.metadata.namespace, name);
    taken?.add(key);
    const priority = this.priorityNow(t.spec);
    if (!priority) throw new Error(`${dsKey}: no PriorityClass ${t.spec.priorityClassName} (admits() first)`);
    const spec: JsonObject = {
      ...t.spec,
      ...priority,
      nodeName,
      affinity: this.affinity(nodeName),
    };
    if (!bound) delete spec.nodeName;
    if (t.automount) {
      const volName = `kube-api-access-${nameSuffixFast(5, h, fnv1a(name))}`;
      const mount = { name: volName, readOnly: true, mountPath: SA_MOUNT_PATH };
      spec.volumes = [...t.spec.volumes, serviceAccountVolume(volName)];
      spec.containers = t.spec.containers.map((c: Json) => ({
        ...c,
        volumeMounts: [...c.volumeMounts, mount],
      }));
    } else spec.containers = t.spec.containers.map(withoutEmptyMounts);
    if (spec.volumes.length === 0) spec.volumes = undefined;
    const metadata: JsonObject = {
      name,
      generateName: `${ds.metadata.name}-`,
      namespace: ds.metadata.namespace,
      uid: uuidFast(this.cluster.seedHash, fnv1a(key), this.attempts.get(attemptKey) ?? 0),
      resourceVersion: '',
    };
    if (this.cluster.features.podGeneration) metadata.generation = 1;
    metadata.creationTimestamp = rfc3339(createdAt);
    metadata.labels = t.labels;
    if (t.annotations) metadata.annotations = t.annotations;
    metadata.ownerReferences = t.ownerReferences;
    return { kind: 'Pod', apiVersion: 'v1', metadata, spec, status: { phase: 'Pending', qosClass: t.qos } };
  }

  /**
   * The priority admission gives a pod of the template now (the class as it is, not as the template was
   * cached); undefined when its PriorityClass is gone: the real controller's create is then refused
   * ("no PriorityClass with name ... was found") and retried, so no pod is made (never one at priority 0).
   */
  private priorityNow(spec: Json): { priority: number; preemptionPolicy: string } | undefined {
    const name = spec.priorityClassName as string | undefined;
    if (!name) return { priority: spec.priority, preemptionPolicy: spec.preemptionPolicy };
    const pc = this.cluster.store.get('priorityclasses.scheduling.k8s.io', name);
    return pc
      ? { priority: pc.value, preemptionPolicy: pc.preemptionPolicy ?? 'PreemptLowerPriority' }
      : undefined;
  }

  /** Whether admission lets a pod of the DaemonSet be created now (its PriorityClass exists). */
  admits(ds: Json): boolean {
    return this.priorityNow(this.template(ds).spec) !== undefined;
  }

  /** The daemon pods of a DaemonSet, by the node they are bound to or, still pending, pinned to. */
  private podsOf(ds: Json, nodeName?: string): Map<string, { key: string; pod: Json }[]> {
    const pods = this.cluster.store.collection('pods');
    const out = new Map<string, { key: string; pod: Json }[]>();
    const keys = nodeName !== undefined ? [...pods.indexed(nodeName), ...pods.indexed(UNBOUND)] : pods.keys();
    for (const k of keys) {
      const p = pods.get(k);
      if (!p || p.metadata.namespace !== ds.metadata.namespace) continue;
      if (!(p.metadata.ownerReferences ?? []).some((o: Json) => o.uid === ds.metadata.uid && o.controller))
        continue;
      const n = targetNode(p);
      if (nodeName !== undefined && n !== nodeName) continue;
      let list = out.get(n);
      if (!list) {
        list = [];
        out.set(n, list);
      }
      list.push({ key: k, pod: p });
    }
    return out;
  }

  /** Brings one DaemonSet to one pod per eligible node (optionally only for one node). */
  reconcile(dsKey: string, onlyNode?: string, due = false): void {
    const ds = this.cluster.store.get('daemonsets.apps', dsKey);
    if (!ds) return;
    const nodes = this.cluster.store.collection('nodes');
    const nodeNames = onlyNode !== undefined ? (nodes.get(onlyNode) ? [onlyNode] : []) : [...nodes.keys()];
    const existing = this.podsOf(ds, onlyNode);
    const gen = ds.metadata.annotations?.[TEMPLATE_GENERATION] ?? '1';
    const now = this.cluster.clock.now();
    for (const n of nodeNames) {
      const node = nodes.get(n);
      const want = this.wants(ds, node);
      const list = existing.get(n) ?? [];
      existing.delete(n);
      const live = list.filter(({ pod }) => !pod.metadata.deletionTimestamp);
      if (!want) {
        this.late.delete(`${dsKey}|${n}`);
        for (const { key } of live) this.cluster.internalDelete('pods', key);
        continue;
      }
      // OnDelete: a template change reaches a node only when its pod is deleted (kubectl rollout docs).
      const onDelete = ds.spec?.updateStrategy?.type === 'OnDelete';
      const current = onDelete
        ? live
        : live.filter(({ pod }) => pod.metadata.labels?.['pod-template-generation'] === gen);
      for (const { key } of live)
        if (!current.some((c) => c.key === key)) this.cluster.internalDelete('pods', key);
      for (const extra of current.slice(1)) this.cluster.internalDelete('pods', extra.key);
      if (current.length === 0 && this.admits(ds) && (due || this.createsNow(dsKey, n))) {
        const pod = this.buildPod(ds, n, now, undefined, false);
        this.cluster.internalWrite('pods', objectKey(pod.metadata.namespace, pod.metadata.name), pod);
      }
    }
    if (onlyNode === undefined) {
      // Pods on nodes that no longer exist.
      for (const list of existing.values())
        for (const { key } of list) this.cluster.internalDelete('pods', key);
    }
    this.dirty.add(dsKey);
  }

  /** DaemonSets whose status must be recomputed once the current burst of events is processed. */
  private readonly dirty = new Set<string>();

  /** Recomputes the status of the DaemonSets touched since the last flush (one scan each, not one per event). */
  flush(): boolean {
    if (this.dirty.size === 0) return false;
    const keys = [...this.dirty];
    this.dirty.clear();
    for (const k of keys) this.updateStatus(k);
    return true;
  }

  updateStatus(dsKey: string): void {
    const ds = this.cluster.store.get('daemonsets.apps', dsKey);
    if (!ds) return;
    const nodes = this.cluster.store.collection('nodes');
    let desired = 0;
    for (const n of nodes.keys()) if (this.wants(ds, nodes.get(n))) desired++;
    const byNode = this.podsOf(ds);
    let current = 0;
    let ready = 0;
    let updated = 0;
    const gen = ds.metadata.annotations?.[TEMPLATE_GENERATION] ?? '1';
    for (const list of byNode.values()) {
      const p = list[0]?.pod;
      if (!p) continue;
      current++;
      if (p.status?.phase === 'Running') ready++;
      if (p.metadata.labels?.['pod-template-generation'] === gen) updated++;
    }
    const status: JsonObject = {
      currentNumberScheduled: current,
      numberMisscheduled: 0,
      desiredNumberScheduled: desired,
      numberReady: ready,
      observedGeneration: ds.metadata.generation,
      updatedNumberScheduled: updated,
      numberAvailable: ready,
    };
    if (desired - ready > 0) status.numberUnavailable = desired - ready;
    if (deepEqual(status, ds.status)) return;
    this.cluster.internalWrite('daemonsets.apps', dsKey, normalizeDaemonSet({ ...ds, status }));
  }

  onEvent(ev: StoreEvent): void {
    if (ev.collection === 'daemonsets.apps') {
      if (ev.type === 'DELETED') {
        this.cache.delete(ev.key);
        // Garbage collection of the dependents (background propagation).
        for (const list of this.podsOf(ev.prev).values())
          for (const { key } of list) this.cluster.internalDelete('pods', key);
        return;
      }
      if (ev.type === 'ADDED' || !deepEqual(ev.prev?.spec, ev.object.spec)) this.reconcile(ev.key);
      return;
    }
    if (ev.collection === 'priorityclasses.scheduling.k8s.io' && ev.type === 'ADDED') {
      // The controller's refused creates, retried: they pass now.
      const all = this.cluster.store.collection('daemonsets.apps');
      for (const k of all.keys())
        if (all.get(k)?.spec?.template?.spec?.priorityClassName === ev.key) this.reconcile(k);
      return;
    }
    if (ev.collection === 'nodes') {
      const name = ev.key;
      if (
        ev.type !== 'DELETED' &&
        ev.type === 'MODIFIED' &&
        deepEqual(ev.prev?.metadata?.labels, ev.object.metadata?.labels) &&
        deepEqual(ev.prev?.spec?.taints, ev.object.spec?.taints)
      )
        return;
      for (const k of this.cluster.store.collection('daemonsets.apps').keys()) {
        if (ev.type === 'DELETED') this.reconcile(k);
        else this.reconcile(k, name);
      }
      return;
    }
    if (ev.collection === 'pods') {
      const pod = ev.type === 'DELETED' ? ev.prev : ev.object;
      const owner = (pod?.metadata?.ownerReferences ?? []).find(
        (o: Json) => o.kind === 'DaemonSet' && o.controller,
      );
      if (!owner) return;
      const dsKey = objectKey(pod.metadata.namespace, owner.name);
      const ds = this.cluster.store.get('daemonsets.apps', dsKey);
      if (!ds || ds.metadata.uid !== owner.uid) return;
      const node = targetNode(pod);
      if (ev.type === 'DELETED' && node) this.reconcile(dsKey, node);
      else if (ev.type !== 'DELETED' && ev.prev?.status?.phase !== ev.object.status?.phase)
        this.dirty.add(dsKey);
    }
  }
}

/** The node a daemon pod is for: its binding, else its node affinity (GetTargetNodeName). */
function targetNode(pod: Json): string {
  if (pod?.spec?.nodeName) return pod.spec.nodeName;
  const names = nodeNamesFromAffinity(pod);
  return names?.size === 1 ? ([...names][0] as string) : '';
}
