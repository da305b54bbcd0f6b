/**
 * The Feature records of one cluster, mirrored into it as `Feature` objects (./crd.ts): the CRD and the
 * fleetscope-system namespace are created where absent, each object's spec and fleetscope's part of its
 * status are written when they changed, and the uses that in-cluster components wrote into the status
 * are read back (and cleared, when a wait for uses clears the uses).
 */
import { FEATURE_API_VERSION, FEATURE_CRD, featureCrd } from './crd.js';
import { valueFor } from './machine.js';
import { type FeatureRecord, type FeatureRef, FLEETSCOPE_NAMESPACE, type Use, type Value } from './model.js';
import { contains, type KObject, type ObjectsApi } from './objects.js';

const MANAGED = { 'app.kubernetes.io/managed-by': 'fleetscope' };
const featureQuery = (ref: FeatureRef) => ({
  apiVersion: FEATURE_API_VERSION,
  resource: FEATURE_CRD.plural,
  namespace: ref.namespace,
  name: ref.name,
});

interface InClusterUse {
  value: Value;
  time: string;
  /** The status.usesEpoch the component read with the value (it echoes it). */
  epoch?: number;
  source?: string;
}

interface FeatureObject extends KObject {
  spec?: Record<string, unknown>;
  status?: { observedVersion?: number; usesEpoch?: number; uses?: Record<string, InClusterUse> };
}

export interface MirrorSpec {
  default: Value;
  description: string;
  components: string[];
}

export class FeatureMirror {
  private crdReady = false;

  constructor(
    private readonly api: ObjectsApi,
    private readonly opts: { sleep?: (ms: number) => Promise<void>; crdWaitMs?: number } = {},
  ) {}

  /** The CRD, created where absent, and served (a new CRD takes a moment to be established). */
  async ensureCrd(): Promise<void> {
    if (this.crdReady) return;
    // Created, or brought up to this fleetscope's schema (apply writes nothing when it already says so).
    if ((await this.api.apply(featureCrd())) !== 'unchanged') this.api.forget(FEATURE_API_VERSION);
    const deadline = Date.now() + (this.opts.crdWaitMs ?? 10_000);
    const sleep = this.opts.sleep ?? ((ms: number) => new Promise((r) => setTimeout(r, ms)));
    while (!(await this.api.resolve(featureQuery(FLEETSCOPE_REF)))) {
      if (Date.now() >= deadline) throw new Error(`the ${FEATURE_CRD.crdName} CRD is not served yet`);
      this.api.forget(FEATURE_API_VERSION);
      await sleep(200);
    }
    this.crdReady = true;
  }

  /** The Feature object; undefined when absent, or when the cluster does not serve the kind (no CRD yet). */
  private async read(ref: FeatureRef): Promise<FeatureObject | undefined> {
    return (await this.api.list(featureQuery(ref)))[0] as FeatureObject | undefined;
  }

  /** Writes one record (and fleetscope's uses) into the cluster; returns the writes made. */
  async write(
    record: FeatureRecord,
    spec: MirrorSpec,
    uses: readonly Use[],
    dangling: string[],
  ): Promise<number> {
    const before = this.api.writes;
    await this.ensureCrd();
    let live = await this.read(record);
    const wantedSpec = {
      default: spec.default,
      ...(record.desired ? { desired: record.desired } : {}),
      description: spec.description,
      components: spec.components,
    };
    if (!live) {
      if (record.namespace === FLEETSCOPE_NAMESPACE)
        await this.api.apply({
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: FLEETSCOPE_NAMESPACE, labels: MANAGED },
        });
      await this.api.apply({
        apiVersion: FEATURE_API_VERSION,
        kind: FEATURE_CRD.kind,
        metadata: { name: record.name, namespace: record.namespace, labels: MANAGED },
        spec: wantedSpec,
      });
      live = await this.read(record);
    } else if (
      // desired: null removes an operator's value that went back to the default.
      await this.api.patchAsRead(featureQuery(record), live, (o) =>
        sameSpec((o as FeatureObject).spec, wantedSpec)
          ? undefined
          : { spec: { desired: null, ...wantedSpec } },
      )
    )
      live = await this.read(record);
    // Computed again from the object as it is if a component reported meanwhile (409).
    if (live)
      await this.api.patchAsRead(
        featureQuery(record),
        live,
        (o) => {
          const s = (o as FeatureObject).status;
          const status = statusOf(record, uses, s?.uses ?? {}, dangling);
          return contains(s, status.compare) ? undefined : { status: status.patch };
        },
        'status',
      );
    return this.api.writes - before;
  }

  /**
   * A Warning Event on the Feature object (`kubectl describe feature`, `kubectl get events`), for what
   * people must act on: a stuck transition.
   */
  async recordEvent(r: FeatureRecord, reason: string, message: string, now: number): Promise<void> {
    const live = await this.read(r);
    const at = new Date(now).toISOString();
    await this.api.apply({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${r.name}.${now.toString(16)}`, namespace: r.namespace, labels: MANAGED },
      involvedObject: {
        apiVersion: FEATURE_API_VERSION,
        kind: FEATURE_CRD.kind,
        name: r.name,
        namespace: r.namespace,
        ...(live?.metadata?.uid ? { uid: live.metadata.uid } : {}),
      },
      type: 'Warning',
      reason,
      message: message.slice(0, 1024),
      source: { component: 'fleetscope-features' },
      firstTimestamp: at,
      lastTimestamp: at,
      count: 1,
    });
  }

  /** The uses in-cluster components wrote into the Feature object's status (none if it is absent). */
  async readUses(ref: FeatureRef): Promise<Use[]> {
    return (await this.observeUses(ref)).uses;
  }

  /** Those uses, and which Feature object they were read from (its uid; absent: there is none). */
  async observeUses(ref: FeatureRef): Promise<{ uses: Use[]; uid?: string }> {
    const live = await this.read(ref);
    const uid = live?.metadata?.uid;
    return { uses: usesIn(live), ...(uid ? { uid } : {}) };
  }

  /**
   * Removes the Feature object of a feature fleetscope no longer has (unregistered, or the cluster
   * deregistered), only if fleetscope made it (its managed-by label), on the object as read.
   */
  async removeObject(ref: FeatureRef): Promise<boolean> {
    const live = await this.read(ref);
    if (live?.metadata?.labels?.['app.kubernetes.io/managed-by'] !== 'fleetscope') return false;
    return this.api.delete(featureQuery(ref), live);
  }

  /** Publishes `epoch` in the status where it is not yet (an attempt died between issuing and publishing). */
  async publishEpoch(ref: FeatureRef, epoch: number): Promise<void> {
    const live = await this.read(ref);
    if (live && live.status?.usesEpoch !== epoch) await this.clearUses(ref, epoch);
  }

  /**
   * Publishes the uses epoch in the status and clears the in-cluster components' uses that do not echo
   * it, on the object as read (a use reported in between is not erased: the patch is refused and made
   * again from the object as it now is); returns the writes made.
   */
  async clearUses(ref: FeatureRef, epoch: number): Promise<number> {
    const live = await this.read(ref);
    if (!live) return 0; // no object yet: no in-cluster component can have reported
    const before = this.api.writes;
    await this.api.patchAsRead(
      featureQuery(ref),
      live,
      (o) => {
        const s = (o as FeatureObject).status;
        const old = Object.entries(s?.uses ?? {}).filter(
          ([, u]) => u.source !== 'fleetscope' && u.epoch !== epoch,
        );
        if (s?.usesEpoch === epoch && old.length === 0) return undefined;
        const uses = Object.fromEntries(old.map(([component]) => [component, null]));
        return { status: { usesEpoch: epoch, ...(old.length ? { uses } : {}) } };
      },
      'status',
    );
    return this.api.writes - before;
  }
}

function usesIn(live: FeatureObject | undefined): Use[] {
  return Object.entries(live?.status?.uses ?? {})
    .filter(([, u]) => u.source !== 'fleetscope')
    .map(([component, u]) => ({
      component,
      value: u.value,
      at: Date.parse(u.time) || 0,
      ...(typeof u.epoch === 'number' ? { epoch: u.epoch } : {}),
      source: 'cluster' as const,
    }));
}

const FLEETSCOPE_REF: FeatureRef = { namespace: FLEETSCOPE_NAMESPACE, name: 'probe' };

function sameSpec(live: Record<string, unknown> | undefined, wanted: Record<string, unknown>): boolean {
  return contains(live, wanted) && (live?.desired === undefined) === (wanted.desired === undefined);
}

/** fleetscope's part of the status: its state, tasks and its workers' uses (stale ones removed). */
function statusOf(
  r: FeatureRecord,
  uses: readonly Use[],
  liveUses: Record<string, InClusterUse>,
  dangling: string[],
) {
  const mine = Object.fromEntries(
    uses.map((u) => [
      u.component,
      {
        value: u.value,
        time: new Date(u.at).toISOString(),
        ...(u.epoch !== undefined ? { epoch: u.epoch } : {}),
        source: 'fleetscope',
      },
    ]),
  );
  const stale = Object.entries(liveUses)
    .filter(([c, u]) => u.source === 'fleetscope' && !(c in mine))
    .map(([c]) => [c, null]);
  const compare = {
    state: r.state,
    // What a component should use now: the client flow's rule, so in-cluster components need not know it.
    value: valueFor(r, r.default),
    observedVersion: r.version,
    ...(r.usesEpoch !== undefined ? { usesEpoch: r.usesEpoch } : {}),
    tasks: r.tasks.map((t) => ({
      title: t.title,
      task: t.spec.task,
      attempts: t.attempts,
      ...(t.lastError ? { lastError: t.lastError } : {}),
      ...(t.waitingFor ? { waitingFor: t.waitingFor } : {}),
    })),
    dangling,
    uses: mine,
  };
  const patch = {
    ...compare,
    transition: r.transition
      ? {
          to: r.transition.to,
          reason: r.transition.reason,
          startedAt: new Date(r.transition.startedAt).toISOString(),
        }
      : null,
    uses: { ...mine, ...Object.fromEntries(stale) },
  };
  return {
    compare: stale.length ? { ...compare, uses: { ...mine, ...Object.fromEntries(stale) } } : compare,
    patch,
  };
}
