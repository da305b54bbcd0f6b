/**
 * One simulated cluster: its store, resource types, strategies, the in-apiserver controllers (CRD
 * establishment, APIService availability) and, unless `controllers: false`, the kube-controller-manager
 * and kubelet parts the simulator models (namespace defaults, DaemonSets, garbage collection, pods).
 * Start-up builds the whole fleet in memory (nodes, DaemonSets, their pods) with deterministic ids.
 */

import { vpaCheckpointCrd, vpaCrd } from '../../shared/kernel/crds/vpa.js';
import { RBAC_GROUP } from './authz.js';
import {
  apiServiceAvailability,
  apiServiceStrategy,
  genericStrategy,
  namespaceStrategy,
  priorityClassObject,
  priorityClassStrategy,
  SYSTEM_PRIORITY_CLASSES,
} from './builtins.js';
import { type ManualClock, rfc3339 } from './clock.js';
import { crdStrategy, customResourceStrategy, establish } from './crd.js';
import { DaemonSetController, daemonSetStrategy, LOAD_ANNOTATION } from './daemonsets.js';
import { notFound } from './errors.js';
import { EventRecorder, eventStrategy } from './events.js';
import { fnv1a, nameSuffix, uuidFrom } from './ids.js';
import { deepEqual, isObject, type Json, type JsonObject } from './json.js';
import { containerResources, Kubelet } from './kubelet.js';
import { MetricsServer } from './metrics.js';
import { buildNode, nodeShape, nodeStrategy } from './nodes.js';
import { orderTop } from './objects.js';
import { podIndexKey } from './pod-requests.js';
import { podStrategy, validatePodUpdate } from './pods.js';
import { aggregateBootstrap, aggregateClusterRoles } from './rbac-aggregation.js';
import { bootstrapRbac, installRbacStrategies } from './rbac-objects.js';
import { builtinResources, collectionId, metricsResources, type ResourceDef } from './registry.js';
import { prepareResize, validateResize } from './resize.js';
import { admitResizeOnNode } from './resize-admission.js';
import { nodePreemptionPolicy } from './resize-preemption.js';
import { createObject, objectKey } from './rest.js';
import { Scheduler } from './scheduler.js';
import type { ControllerWrites, Features, KubeVersion, Scope, SimState, Strategy } from './state.js';
import { Store, type StoreEvent } from './store.js';
import type { SimClusterSpec, SimDaemonSetSpec } from './types.js';
import { type ContainerLoad, containerLoad, type LoadProfile, mayOom, nodeFactor } from './workload.js';

export function parseVersion(v: string): KubeVersion {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?/.exec(v);
  if (!m) throw new Error(`kubernetesVersion ${JSON.stringify(v)} is not a version such as "1.35.0"`);
  const major = Number(m[1]);
  const minor = Number(m[2]);
  const patch = Number(m[3] ?? 0);
  return { major, minor, patch, semver: `${major}.${minor}.${patch}` };
}

export function featuresFor(
  v: KubeVersion,
  resizeSubresource: boolean | undefined,
  resizePreemptionGate?: boolean,
): Features {
  const minor = v.major > 1 ? 99 : v.minor;
  return {
    resize: minor >= 32 && resizeSubresource !== false,
    resizeConditions: minor >= 33,
    // metadata.generation on pods from 1.33 (seen on a real 1.33.13); the kubelet and scheduler echo it
    // in status.observedGeneration and the resize conditions from 1.34 (PodObservedGenerationTracking).
    podGeneration: minor >= 33,
    observedGeneration: minor >= 34,
    // Missing resizePolicy entries were defaulted to NotRequired up to 1.32; 1.33 and 1.36 leave them unset.
    defaultResizePolicy: minor === 32 && resizeSubresource !== false,
    // Seen on a real 1.36.2 and not on 1.33.13 (1.34 and 1.35 untested): a resize past the node's
    // allocatable, or of a pod on a node that does not exist, is refused with 403 at admission.
    resizeNodeAdmission: minor >= 36,
    podTopologyLabels: minor >= 35,
    forbidMemoryLimitDecrease: minor === 33,
    resizePolicyImmutable: minor >= 33,
    resizePreemption: minor >= 37 && resizePreemptionGate !== false,
    resizePreemptionSchema: minor >= 37,
    // null on a real 1.32.13 and 1.33.13, absent on 1.36.2 (1.34 and 1.35 by the upstream change, untested).
    nullCreationTimestamp: minor < 34,
    tokenRequestUid: minor >= 36,
  };
}

const GO_VERSION: Record<number, string> = {
  32: 'go1.23.5',
  33: 'go1.24.4',
  34: 'go1.24.6',
  35: 'go1.25.3',
  36: 'go1.26.2',
  37: 'go1.26.2',
};

/** A supported version: what a simulated cluster reports when its spec names none. */
export const DEFAULT_VERSION = '1.35.0';
/** Overrides DEFAULT_VERSION for a whole run: npm run fidelity records at each real server's version. */
export const DEFAULT_VERSION_ENV = 'FLEETSCOPE_SIM_KUBE_VERSION';

const HOUR = 3_600_000;

const storeWrites = (store: Store): ControllerWrites => ({
  put: (collection, key, obj) => store.put(collection, key, obj),
  delete: (collection, key) => {
    store.delete(collection, key);
  },
});

/** What the DaemonSet controller acts on (a PriorityClass created: its refused creates pass now). */
const DAEMONSET_INPUTS = new Set(['pods', 'nodes', 'daemonsets.apps', 'priorityclasses.scheduling.k8s.io']);

export class ClusterState implements SimState {
  readonly name: string;
  readonly seed: number;
  readonly seedHash: number;
  readonly version: KubeVersion;
  readonly features: Features;
  readonly controllers: boolean;
  readonly store = new Store(1);
  /**
   * Wall milliseconds per millisecond of a watch's own time (its timeoutSeconds, its bookmarks' timing),
   * which kube-apiserver keeps on wall time: 1, except where the clusters' clock runs faster than the
   * wall (the demo at --speedup X sets 1/X, so a watch lapses on the clock everything else runs on).
   */
  watchWallScale = 1;
  readonly kubelet: Kubelet;
  readonly scheduler: Scheduler;
  readonly daemonsets: DaemonSetController;
  readonly metrics: MetricsServer;
  /** Records the Events of pod creation, deletion and resize outcomes (local/sim/events.ts). */
  readonly events: EventRecorder;
  private readonly defs = new Map<string, ResourceDef>();
  private readonly strategies = new Map<string, Strategy>();
  private readonly nodeIndexes = new Map<string, number>();
  private nodeCountAtStart = 0;
  private readonly specLoads = new Map<string, LoadProfile>();
  /** Loads per stored pod object (objects are immutable; a new revision is a new object). */
  private readonly loadCache = new WeakMap<object, Map<string, ContainerLoad>>();
  private queue: StoreEvent[] = [];
  private draining = false;
  /** The in-process store, unless {@link mirrorRealApiserver} points the writes elsewhere. */
  writes: ControllerWrites = storeWrites(this.store);

  constructor(
    readonly spec: SimClusterSpec,
    readonly clock: ManualClock,
  ) {
    this.name = spec.name;
    this.seed = spec.seed ?? 1;
    this.seedHash = fnv1a(`${spec.name}\u0000${this.seed}`);
    this.version = parseVersion(
      spec.kubernetesVersion ?? process.env[DEFAULT_VERSION_ENV] ?? DEFAULT_VERSION,
    );
    this.features = featuresFor(this.version, spec.resizeSubresource, spec.resizePreemptionGate);
    this.controllers = spec.controllers !== false;
    this.kubelet = new Kubelet(this);
    this.scheduler = new Scheduler(this);
    this.daemonsets = new DaemonSetController(this);
    this.metrics = new MetricsServer(this);
    this.events = new EventRecorder(this);
    for (const def of builtinResources({ resize: this.features.resize }))
      this.defs.set(collectionId(def), def);
    this.installStrategies();
    this.store.collection('pods', podIndexKey);
    this.store.watchClock = () => this.clock.now();
    this.store.subscribe((ev) => this.queue.push(ev));
  }

  /** The UID of a start-up object: stable across restarts for the same cluster name and seed. */
  uid(kind: string, key: string): string {
    return uuidFrom(this.name, this.seed, kind, key);
  }

  /** The UID of an object created at run time (unique even if a name is reused). */
  newUid(collection: string, key: string): string {
    return uuidFrom(this.name, this.seed, 'uid', collection, key, this.store.currentRv());
  }

  suffix(...parts: string[]): string {
    return nameSuffix(5, this.name, this.seed, ...parts, this.store.currentRv());
  }

  get kubeSystemUid(): string {
    return this.store.get('namespaces', 'kube-system')?.metadata.uid ?? this.uid('namespaces', 'kube-system');
  }

  versionInfo(): JsonObject {
    const v = this.version;
    const info: JsonObject = {
      major: String(v.major),
      minor: String(v.minor),
    };
    if (v.minor >= 33) {
      info.emulationMajor = String(v.major);
      info.emulationMinor = String(v.minor);
      info.minCompatibilityMajor = String(v.major);
      info.minCompatibilityMinor = String(v.minor - 1);
    }
    Object.assign(info, {
      gitVersion: `v${v.semver}`,
      gitCommit: uuidFrom('git', v.semver).replace(/-/g, '').padEnd(40, '0').slice(0, 40),
      gitTreeState: 'clean',
      buildDate: '2026-01-15T10:00:00Z',
      goVersion: GO_VERSION[v.minor] ?? 'go1.25.3',
      compiler: 'gc',
      platform: 'linux/amd64',
    });
    return info;
  }

  // ---- resource types -------------------------------------------------------------------------

  private installStrategies(): void {
    const pods = podStrategy(this);
    const f = this.features;
    this.strategies.set('pods', {
      ...pods,
      prepareUpdate: (pod, old, scope) => {
        if (scope.subresource === 'resize') prepareResize(pod, old, f);
        else pods.prepareUpdate?.(pod, old, scope);
      },
      validateUpdate: (pod, old, scope) => {
        if (scope.subresource === 'resize') {
          const errors = validateResize(pod, old, f);
          // Validating admission runs after the strategy's validation: a 422 wins over this 403.
          if (errors.length === 0 && f.resizeNodeAdmission)
            admitResizeOnNode(pod, this.store.get('nodes', pod.spec?.nodeName ?? ''));
          return errors;
        }
        if (scope.subresource === 'status') return [];
        return validatePodUpdate(pod, old);
      },
    });
    this.strategies.set('nodes', {
      ...nodeStrategy(),
      validateCreate: (node) => nodePreemptionPolicy(node, f),
      validateUpdate: (node) => nodePreemptionPolicy(node, f),
    });
    this.strategies.set('namespaces', namespaceStrategy());
    this.strategies.set('daemonsets.apps', daemonSetStrategy(f));
    this.strategies.set('events', eventStrategy());
    this.strategies.set('priorityclasses.scheduling.k8s.io', priorityClassStrategy(this));
    this.strategies.set('customresourcedefinitions.apiextensions.k8s.io', crdStrategy());
    this.strategies.set('apiservices.apiregistration.k8s.io', apiServiceStrategy());
    this.strategies.set('serviceaccounts', {
      nameRule: 'subdomain',
      normalize: (o) => orderTop(o, ['secrets', 'imagePullSecrets', 'automountServiceAccountToken']),
    });
    installRbacStrategies((id, s) => this.strategies.set(id, s));
    this.strategies.set('configmaps', {
      nameRule: 'subdomain',
      normalize: (o) => {
        // data and binaryData are omitempty: a real server leaves an emptied map out.
        const out = orderTop(o, ['immutable', 'data', 'binaryData']);
        for (const k of ['data', 'binaryData'])
          if (isObject(out[k]) && Object.keys(out[k]).length === 0) delete out[k];
        return out;
      },
    });
  }

  strategy(def: ResourceDef): Strategy {
    return this.strategies.get(collectionId(def)) ?? genericStrategy();
  }

  hasGeneration(def: ResourceDef): boolean {
    if (def.resource === 'pods' && !def.group) return this.features.podGeneration;
    return def.hasGeneration;
  }

  registerCustomResource(def: ResourceDef): void {
    const id = collectionId(def);
    this.defs.set(id, def);
    this.strategies.set(id, customResourceStrategy(def));
    this.store.collection(id);
  }

  private unregisterCustomResource(crd: Json): void {
    const id = `${crd.spec.names.plural}.${crd.spec.group}`;
    this.defs.delete(id);
    this.strategies.delete(id);
    const coll = this.store.collection(id);
    for (const k of [...coll.keys()]) this.store.delete(id, k);
  }

  /** Every resource type served now, metrics.k8s.io included when its APIService is available. */
  resources(): ResourceDef[] {
    const list = [...this.defs.values()];
    if (this.metricsState() === 'available') list.push(...metricsResources());
    return list;
  }

  /** The resource type for a request path, if it is served in that version. */
  resolve(group: string, version: string, resource: string): ResourceDef | undefined {
    const def = this.defs.get(group ? `${resource}.${group}` : resource);
    return def?.versions.includes(version) ? def : undefined;
  }

  /** Looks a resource up for the test-facing store: 'pods', 'daemonsets', 'clusterproperties.about.k8s.io'. */
  lookup(ref: string): ResourceDef {
    const direct = this.defs.get(ref);
    if (direct) return direct;
    const matches = [...this.defs.values()].filter(
      (d) => d.resource === ref || d.singular === ref || d.shortNames?.includes(ref),
    );
    if (matches.length === 1) return matches[0] as ResourceDef;
    throw new Error(`unknown resource ${JSON.stringify(ref)} in cluster ${this.name}`);
  }

  /** State of the metrics API as the aggregator sees it. */
  metricsState(): 'absent' | 'unavailable' | 'available' {
    const svc = this.store.get('apiservices.apiregistration.k8s.io', 'v1beta1.metrics.k8s.io');
    if (!svc) return 'absent';
    const ok = (svc.status?.conditions ?? []).some(
      (c: Json) => c.type === 'Available' && c.status === 'True',
    );
    return ok ? 'available' : 'unavailable';
  }

  requireNamespace(ns: string | undefined): void {
    if (!ns || !this.store.get('namespaces', ns))
      throw notFound({ group: '', resource: 'namespaces' }, ns ?? '');
  }

  globalDefaultPriorityClass(): Json | undefined {
    const c = this.store.collection('priorityclasses.scheduling.k8s.io');
    for (const k of c.keys()) if (c.get(k)?.globalDefault === true) return c.get(k);
    return undefined;
  }

  // ---- writes by the simulated control plane ---------------------------------------------------

  internalWrite(collection: string, key: string, obj: JsonObject): Json {
    const m = obj.metadata;
    if (!m.uid) m.uid = this.newUid(collection, key);
    if (!m.creationTimestamp) m.creationTimestamp = rfc3339(this.clock.now());
    return this.writes.put(collection, key, obj);
  }

  internalDelete(collection: string, key: string): void {
    this.writes.delete(collection, key);
  }

  /**
   * Runs this cluster's controllers and kubelets for a real apiserver's objects (local/sim/real/): no
   * start-up fleet; the store is filled from the server and `writes` sends the decisions there.
   */
  mirrorRealApiserver(writes: ControllerWrites, caPem: string, nodeCount: number): void {
    this.writes = writes;
    this.caPem = caPem;
    this.nodeCountAtStart = nodeCount;
  }

  /** A scope for writes made by the simulator itself (controllers, the test-facing store). */
  internalScope(def: ResourceDef, namespace?: string): Scope {
    return {
      cluster: this,
      def,
      version: def.storageVersion,
      namespace,
      manager: 'kube-controller-manager',
      dryRun: false,
      warnings: [],
      fieldValidation: 'Ignore',
      internal: true,
    };
  }

  /** Runs the controllers until no event is left (called after every request and clock change). */
  settle(): void {
    if (this.draining) return;
    this.draining = true;
    try {
      for (let guard = 0; guard < 5_000_000; guard++) {
        const ev = this.queue.shift();
        if (!ev) {
          if (this.daemonsets.flush() || this.scheduler.flush()) continue;
          break;
        }
        this.dispatch(ev);
      }
    } finally {
      this.draining = false;
    }
  }

  private dispatch(ev: StoreEvent): void {
    switch (ev.collection) {
      case 'customresourcedefinitions.apiextensions.k8s.io':
        if (ev.type === 'DELETED') this.unregisterCustomResource(ev.prev);
        else if (ev.type === 'ADDED' || !deepEqual(ev.prev?.spec, ev.object.spec)) establish(this, ev.key);
        return;
      case 'apiservices.apiregistration.k8s.io':
        if (ev.type !== 'DELETED') this.updateApiServiceStatus(ev.key);
        return;
      case 'clusterroles.rbac.authorization.k8s.io':
        if (this.controllers) aggregateClusterRoles(this);
        return;
      case 'namespaces':
        if (ev.type === 'DELETED') this.emptyNamespace(ev.key);
        else if (ev.type === 'ADDED' && this.controllers) this.namespaceDefaults(ev.key);
        return;
    }
    if (!this.controllers) return;
    if (ev.collection === 'nodes' && ev.type !== 'DELETED') this.nodeLifecycle(ev.key);
    if (ev.collection === 'nodes' && ev.type === 'DELETED') this.collectOrphanPods(ev.key);
    if (ev.collection === 'pods' || ev.collection === 'nodes') this.kubelet.onEvent(ev);
    this.events.onEvent(ev);
    if (DAEMONSET_INPUTS.has(ev.collection)) this.daemonsets.onEvent(ev);
    if (ev.collection === 'pods' || ev.collection === 'nodes') this.scheduler.onEvent(ev);
  }

  /** The simulated clock moved: kubelets do their time-driven work, pending pods get another pass. */
  onClock(now: number): void {
    if (!this.controllers) return;
    this.kubelet.onClock(now);
    this.daemonsets.onClock(now);
    this.scheduler.onClock();
  }

  /** Pod garbage collection: pods bound to a node that no longer exists are deleted. */
  private collectOrphanPods(node: string): void {
    const pods = this.store.collection('pods');
    for (const key of [...pods.indexed(node)]) this.internalDelete('pods', key);
  }

  private updateApiServiceStatus(name: string): void {
    const svc = this.store.get('apiservices.apiregistration.k8s.io', name);
    if (!svc) return;
    const ref = svc.spec?.service;
    let backend: 'available' | 'missing-service' | 'no-endpoints' | 'local' = 'local';
    if (ref) {
      if (
        svc.spec.group === 'metrics.k8s.io' &&
        ref.namespace === 'kube-system' &&
        ref.name === 'metrics-server'
      ) {
        const mode = this.spec.metricsApi ?? 'available';
        backend =
          mode === 'available' ? 'available' : mode === 'unavailable' ? 'no-endpoints' : 'missing-service';
      } else {
        backend = this.store.get('services', `${ref.namespace}/${ref.name}`)
          ? 'no-endpoints'
          : 'missing-service';
      }
    }
    const status = apiServiceAvailability(svc, backend, this.clock.now());
    if (deepEqual(status, svc.status)) return;
    this.internalWrite(
      'apiservices.apiregistration.k8s.io',
      name,
      this.strategy(this.lookup('apiservices.apiregistration.k8s.io')).normalize!({ ...svc, status }),
    );
  }

  private emptyNamespace(ns: string): void {
    for (const def of this.defs.values()) {
      if (!def.namespaced || def.virtual) continue;
      const id = collectionId(def);
      if (!this.store.hasCollection(id)) continue;
      const c = this.store.collection(id);
      for (const k of [...c.keys()]) if (k.startsWith(`${ns}/`)) this.store.delete(id, k);
    }
  }

  /** The service-account and root-CA controllers: every namespace gets `default` and kube-root-ca.crt. */
  private namespaceDefaults(ns: string): void {
    const now = this.clock.now();
    if (!this.store.get('serviceaccounts', `${ns}/default`)) {
      this.internalWrite('serviceaccounts', `${ns}/default`, this.serviceAccountObject(ns, now, false));
    }
    if (!this.store.get('configmaps', `${ns}/kube-root-ca.crt`)) {
      this.internalWrite('configmaps', `${ns}/kube-root-ca.crt`, this.rootCaConfigMap(ns, now, false));
    }
  }

  private nodeLifecycle(name: string): void {
    const node = this.store.get('nodes', name);
    const ready = (node?.status?.conditions ?? []).some(
      (c: Json) => c.type === 'Ready' && c.status === 'True',
    );
    const taints: Json[] = node?.spec?.taints ?? [];
    const notReady = taints.some((t) => t.key === 'node.kubernetes.io/not-ready');
    if (ready && notReady) {
      const rest = taints.filter((t) => t.key !== 'node.kubernetes.io/not-ready');
      const spec = { ...node.spec, taints: rest };
      if (rest.length === 0) delete spec.taints;
      this.internalWrite('nodes', name, this.strategy(this.lookup('nodes')).normalize!({ ...node, spec }));
    }
    if (!this.nodeIndexes.has(name)) this.nodeIndexes.set(name, this.nodeIndexes.size);
  }

  // ---- loads --------------------------------------------------------------------------------------

  nodeIndex(name: string): number {
    let i = this.nodeIndexes.get(name);
    if (i === undefined) {
      i = this.nodeIndexes.size;
      this.nodeIndexes.set(name, i);
    }
    return i;
  }

  /** The load profile of a pod: its pod annotation, else its DaemonSet's (spec or annotation). */
  private profileOf(pod: Json): { profile: LoadProfile; salt: string } | undefined {
    const own = pod.metadata?.annotations?.[LOAD_ANNOTATION];
    if (own) {
      const p = parseProfile(own);
      if (p) return { profile: p, salt: `${pod.metadata.namespace}/${pod.metadata.name}` };
    }
    const owner = (pod.metadata?.ownerReferences ?? []).find((o: Json) => o.kind === 'DaemonSet');
    if (!owner) return undefined;
    const dsKey = objectKey(pod.metadata.namespace, owner.name);
    const fromSpec = this.specLoads.get(dsKey);
    if (fromSpec) return { profile: fromSpec, salt: dsKey };
    const ds = this.store.get('daemonsets.apps', dsKey);
    const ann =
      ds?.metadata?.annotations?.[LOAD_ANNOTATION] ??
      ds?.spec?.template?.metadata?.annotations?.[LOAD_ANNOTATION];
    const p = ann ? parseProfile(ann) : undefined;
    return p ? { profile: p, salt: dsKey } : undefined;
  }

  /** Per-container loads of a pod on its node (cached per stored pod object). */
  containerLoads(pod: Json): Map<string, ContainerLoad> {
    const hit = this.loadCache.get(pod);
    if (hit) return hit;
    const loads = new Map<string, ContainerLoad>();
    const pf = this.profileOf(pod);
    if (pf && pod.spec?.nodeName) {
      const nodeName = pod.spec.nodeName;
      const factor = nodeFactor(
        pf.profile,
        this.nodeIndex(nodeName),
        nodeName,
        this.nodeCountAtStart,
        pf.salt,
      );
      for (const c of pod.spec.containers ?? [])
        loads.set(c.name, containerLoad(pf.profile, c.name, containerResources(c), factor));
    }
    this.loadCache.set(pod, loads);
    return loads;
  }

  /** Whether any pod of a spec DaemonSet could ever be OOM-killed (else start-up skips OOM tracking for it). */
  private daemonSetMayOom(dsKey: string): boolean {
    const p = this.specLoads.get(dsKey);
    const ds = this.store.get('daemonsets.apps', dsKey);
    if (!p || !ds) return false;
    if (p.oomKills?.length) return true;
    const mode = p.perNode ?? 'uniform';
    const maxFactor =
      mode === 'uniform'
        ? 1
        : mode === 'heterogeneous'
          ? (p.perNodeRange ?? [0.25, 4])[1]
          : Math.max(1, ...Object.values(mode));
    return (ds.spec.template.spec.containers ?? []).some((c: Json) => {
      const res = containerResources(c);
      if (!res.memLimit) return false;
      if ((p.memoryGrowthPerHour ?? 0) > 0) return true;
      const l = containerLoad(p, c.name, res, maxFactor);
      return mayOom(l, res);
    });
  }

  // ---- start-up -----------------------------------------------------------------------------------

  private serviceAccountObject(ns: string, now: number, bootstrap: boolean): JsonObject {
    return {
      kind: 'ServiceAccount',
      apiVersion: 'v1',
      metadata: {
        name: 'default',
        namespace: ns,
        uid: bootstrap
          ? this.uid('serviceaccounts', `${ns}/default`)
          : this.newUid('serviceaccounts', `${ns}/default`),
        creationTimestamp: rfc3339(now),
      },
    };
  }

  private rootCaConfigMap(ns: string, now: number, bootstrap: boolean): JsonObject {
    return {
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: {
        name: 'kube-root-ca.crt',
        namespace: ns,
        uid: bootstrap
          ? this.uid('configmaps', `${ns}/kube-root-ca.crt`)
          : this.newUid('configmaps', `${ns}/kube-root-ca.crt`),
        creationTimestamp: rfc3339(now),
        annotations: {
          'kubernetes.io/description':
            'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.',
        },
      },
      data: { 'ca.crt': this.caPem },
    };
  }

  caPem = '';

  /** Builds the initial cluster in memory: namespaces, system objects, nodes, DaemonSets and their pods. */
  bootstrap(caPem: string): void {
    this.caPem = caPem;
    const start = this.clock.now();
    // The cluster has "been running" for a while, so metrics and ages look like a live cluster's.
    const born = start - 6 * HOUR - (this.seedHash % 3600) * 1000;
    const namespaces = this.loadNamespaces(born);
    this.loadSystemObjects(namespaces, born);
    const nodeEntries = this.loadNodes(start, born);
    const dsEntries = this.loadDaemonSets(born);
    if (this.controllers) this.loadDaemonSetPods(dsEntries, nodeEntries, born);
    this.queue = [];
    if (this.spec.vpaCrd) {
      const scope = this.internalScope(this.lookup('customresourcedefinitions.apiextensions.k8s.io'));
      createObject({ ...scope, manager: 'kubectl' }, vpaCrd());
      createObject({ ...scope, manager: 'kubectl' }, vpaCheckpointCrd());
      this.settle();
    }
    this.queue = [];
    this.store.compact();
  }

  /** The standard namespaces and the DaemonSets' own, sorted; returns their names. */
  private loadNamespaces(born: number): string[] {
    const names = new Set(['default', 'kube-node-lease', 'kube-public', 'kube-system']);
    for (const ds of this.spec.daemonSets ?? []) names.add(ds.namespace ?? 'kube-system');
    const namespaces = [...names].sort();
    const t = rfc3339(born);
    this.store.load(
      'namespaces',
      namespaces.map((ns) => [
        ns,
        {
          kind: 'Namespace',
          apiVersion: 'v1',
          metadata: {
            name: ns,
            uid: this.uid('namespaces', ns),
            creationTimestamp: t,
            labels: { 'kubernetes.io/metadata.name': ns },
            managedFields: [
              {
                manager: 'kube-apiserver',
                operation: 'Update',
                apiVersion: 'v1',
                time: t,
                fieldsType: 'FieldsV1',
                fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:kubernetes.io/metadata.name': {} } } },
              },
            ],
          },
          spec: { finalizers: ['kubernetes'] },
          status: { phase: 'Active' },
        },
      ]),
    );
    return namespaces;
  }

  /** Priority classes, API services and RBAC; with controllers, each namespace's default account and root CA. */
  private loadSystemObjects(namespaces: string[], born: number): void {
    this.store.load(
      'priorityclasses.scheduling.k8s.io',
      SYSTEM_PRIORITY_CLASSES.map((s) => [s.name, priorityClassObject(this, s, born)] as [string, Json]),
    );
    this.store.load('apiservices.apiregistration.k8s.io', this.localApiServices(born));
    const rbac = bootstrapRbac(this, born);
    this.store.load(`clusterroles.${RBAC_GROUP}`, aggregateBootstrap(rbac.roles));
    this.store.load(`clusterrolebindings.${RBAC_GROUP}`, rbac.bindings);
    if (!this.controllers) return;
    this.store.load(
      'serviceaccounts',
      namespaces.map((ns) => [`${ns}/default`, this.serviceAccountObject(ns, born, true)] as [string, Json]),
    );
    this.store.load(
      'configmaps',
      namespaces.map(
        (ns) => [`${ns}/kube-root-ca.crt`, this.rootCaConfigMap(ns, born, true)] as [string, Json],
      ),
    );
  }

  /** The spec's nodes, and their heartbeats (kube-node-lease), which kubectl describe node shows. */
  private loadNodes(start: number, born: number): [string, Json][] {
    this.nodeCountAtStart = this.spec.nodes;
    const nodeEntries: [string, Json][] = [];
    for (let i = 0; i < this.spec.nodes; i++) {
      const shape = nodeShape(this, i);
      this.nodeIndexes.set(shape.name, i);
      const node = buildNode(this, shape, born + i * 10);
      nodeEntries.push([shape.name, this.strategy(this.lookup('nodes')).normalize!(node)]);
    }
    this.store.load('nodes', nodeEntries);
    const renew = `${new Date(start).toISOString().slice(0, 23)}000Z`;
    this.store.load(
      'leases.coordination.k8s.io',
      nodeEntries.map(([name, node]) => [
        `kube-node-lease/${name}`,
        {
          kind: 'Lease',
          apiVersion: 'coordination.k8s.io/v1',
          metadata: {
            name,
            namespace: 'kube-node-lease',
            uid: this.uid('leases', name),
            creationTimestamp: node.metadata.creationTimestamp,
            ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name, uid: node.metadata.uid }],
          },
          spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: renew },
        },
      ]),
    );
    return nodeEntries;
  }

  /** The spec's DaemonSets (and the load each puts on its pods). */
  private loadDaemonSets(born: number): [string, Json][] {
    const dsDefs = this.lookup('daemonsets.apps');
    const dsEntries: [string, Json][] = [];
    for (const d of this.spec.daemonSets ?? []) {
      const ds = this.daemonSetObject(d, dsDefs, born);
      dsEntries.push([objectKey(ds.metadata.namespace, ds.metadata.name), ds]);
      if (d.load) this.specLoads.set(objectKey(ds.metadata.namespace, ds.metadata.name), d.load);
    }
    this.store.load('daemonsets.apps', dsEntries);
    return dsEntries;
  }

  /** The DaemonSets' pods, running on every node each wants, and the DaemonSets' status that counts them. */
  private loadDaemonSetPods(dsEntries: [string, Json][], nodeEntries: [string, Json][], born: number): void {
    const podEntries: [string, Json][] = [];
    const nodes = this.store.collection('nodes');
    const taken = new Set<string>();
    dsEntries.forEach(([dsKey], i) => {
      const ds = this.store.get('daemonsets.apps', dsKey);
      if (!this.daemonsets.admits(ds)) return; // its PriorityClass is not there: created once it is
      // One creation time per DaemonSet: their pods then share condition and state objects.
      const created = born + 60_000 + i * 1_000;
      for (const [nodeName] of nodeEntries) {
        const node = nodes.get(nodeName);
        if (!this.daemonsets.wants(ds, node)) continue;
        const pod = this.daemonsets.buildPod(ds, nodeName, created, taken);
        pod.status = this.kubelet.runningStatus(pod, node, created + 2_000);
        podEntries.push([objectKey(pod.metadata.namespace, pod.metadata.name), pod]);
      }
    });
    this.store.load('pods', podEntries, podIndexKey);
    const ownerKey = (p: Json) => `${p.metadata.namespace}/${p.metadata.ownerReferences[0].name}`;
    const risky = new Set(dsEntries.filter(([k]) => this.daemonSetMayOom(k)).map(([k]) => k));
    for (const [k, p] of podEntries) if (risky.has(ownerKey(p))) this.kubelet.trackOom(k);
    const perDs = new Map<string, number>();
    for (const [, p] of podEntries) perDs.set(ownerKey(p), (perDs.get(ownerKey(p)) ?? 0) + 1);
    this.store.load(
      'daemonsets.apps',
      dsEntries.map(([k, ds]) => {
        const n = perDs.get(k) ?? 0;
        const status = {
          currentNumberScheduled: n,
          numberMisscheduled: 0,
          desiredNumberScheduled: n,
          numberReady: n,
          observedGeneration: 1,
          updatedNumberScheduled: n,
          numberAvailable: n,
        };
        return [k, { ...ds, status }] as [string, Json];
      }),
    );
  }

  private daemonSetObject(d: SimDaemonSetSpec, def: ResourceDef, born: number): JsonObject {
    const ns = d.namespace ?? 'kube-system';
    const labels = d.labels ?? { 'app.kubernetes.io/name': d.name };
    const containers = d.containers.map((c) => {
      const resources: JsonObject = {};
      if (c.limits) resources.limits = { ...c.limits };
      if (c.requests) resources.requests = { ...c.requests };
      return { name: c.name, image: c.image ?? 'registry.k8s.io/pause:3.10', resources };
    });
    const podSpec: JsonObject = { containers };
    if (d.nodeSelector) podSpec.nodeSelector = d.nodeSelector;
    if (d.tolerations) podSpec.tolerations = d.tolerations;
    if (d.priorityClassName) podSpec.priorityClassName = d.priorityClassName;
    const ds: JsonObject = {
      kind: 'DaemonSet',
      apiVersion: 'apps/v1',
      metadata: {
        name: d.name,
        namespace: ns,
        uid: this.uid('daemonsets', `${ns}/${d.name}`),
        generation: 1,
        creationTimestamp: rfc3339(born + 30_000),
        labels,
      },
      spec: { selector: { matchLabels: labels }, template: { metadata: { labels }, spec: podSpec } },
    };
    if (d.load) ds.metadata.annotations = { [LOAD_ANNOTATION]: JSON.stringify(d.load) };
    const s = this.strategy(def);
    s.prepareCreate?.(ds, this.internalScope(def, ns));
    return s.normalize ? s.normalize(ds) : ds;
  }

  /** The APIService objects a real aggregator has: local ones per built-in group, and metrics-server's. */
  private localApiServices(born: number): [string, Json][] {
    const out: [string, Json][] = [];
    const t = rfc3339(born);
    const groups = new Map<string, string>();
    for (const d of this.defs.values()) for (const v of d.versions) groups.set(`${v}.${d.group}`, d.group);
    for (const [name, group] of [...groups.entries()].sort()) {
      const version = name.split('.')[0] as string;
      out.push([
        name,
        {
          kind: 'APIService',
          apiVersion: 'apiregistration.k8s.io/v1',
          metadata: {
            name,
            uid: this.uid('apiservices', name),
            creationTimestamp: t,
            labels: { 'kube-aggregator.kubernetes.io/automanaged': 'onstart' },
          },
          spec: { group, version, groupPriorityMinimum: 18000, versionPriority: 15 },
          status: {
            conditions: [
              {
                type: 'Available',
                status: 'True',
                lastTransitionTime: t,
                reason: 'Local',
                message: 'Local APIServices are always available',
              },
            ],
          },
        },
      ]);
    }
    const mode = this.spec.metricsApi ?? 'available';
    if (mode !== 'absent') {
      const svc: JsonObject = {
        kind: 'APIService',
        apiVersion: 'apiregistration.k8s.io/v1',
        metadata: {
          name: 'v1beta1.metrics.k8s.io',
          uid: this.uid('apiservices', 'v1beta1.metrics.k8s.io'),
          creationTimestamp: t,
          labels: { 'k8s-app': 'metrics-server' },
        },
        spec: {
          service: { namespace: 'kube-system', name: 'metrics-server', port: 443 },
          group: 'metrics.k8s.io',
          version: 'v1beta1',
          insecureSkipTLSVerify: true,
          groupPriorityMinimum: 100,
          versionPriority: 100,
        },
      };
      svc.status = apiServiceAvailability(svc, mode === 'available' ? 'available' : 'no-endpoints', born);
      out.push(['v1beta1.metrics.k8s.io', svc]);
    }
    return out.sort(([a], [b]) => (a < b ? -1 : 1));
  }
}

function parseProfile(s: string): LoadProfile | undefined {
  try {
    const p = JSON.parse(s);
    return isObject(p) ? (p as LoadProfile) : undefined;
  } catch {
    return undefined;
  }
}
