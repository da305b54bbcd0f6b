/**
 * The balloon objects in one cluster, through the cluster access layer (timeouts, retries, redacted
 * errors): the PriorityClass and the DaemonSet are created when missing and updated only when the
 * selection or the image changed; node usage comes from the metrics API when there is one; every
 * resize, revert and blocked reclaim is also a Kubernetes Event on the balloon pod (kubectl describe).
 */

import { cpuMillis, memoryBytes } from '../cycle/quantities.js';
import type { ClusterClient } from '../k8s/client.js';
import { ClusterAccessError } from '../k8s/errors.js';
import type { RawReader } from '../k8s/raw-reader.js';
import { hasResizeSubresource } from '../resize/index.js';
import { type Amounts, amounts } from './amounts.js';
import {
  BALLOON_CONTAINER,
  BALLOON_NAME,
  BALLOON_NAMESPACE,
  BALLOON_PRIORITY,
  balloonDaemonSet,
  MANAGED_BY_LABEL,
  MANAGED_BY_VALUE,
  PRIORITY_CLASS,
  priorityClass,
  SELECTION_ANNOTATION,
  type Selection,
  selectionDigest,
} from './manifests.js';
import { limitRangeProblems, quotaProblems } from './namespace-limits.js';
import { NodeOptOutApi } from './node-opt-out.js';

/** What ensureDaemonSet reads of the balloon DaemonSet. */
interface DaemonSetSeen {
  metadata?: {
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
    resourceVersion?: string;
    uid?: string;
  };
  spec?: { template?: { spec?: TemplateSpecSeen } };
}

interface TemplateSpecSeen {
  priorityClassName?: string;
  priority?: number;
  preemptionPolicy?: string;
  runtimeClassName?: string;
  overhead?: object;
  resources?: object;
  initContainers?: object[];
  containers?: { name?: string; image?: string; resources?: { requests?: object; limits?: object } }[];
}

/**
 * How the balloon DaemonSet's pod template differs from what balloons need, one phrase per field: a
 * pod made from a drifted template would run at another priority, preempt, or hold more than sized.
 */
export function templateDrift(t: TemplateSpecSeen | undefined, image: string): string[] {
  const out: string[] = [];
  if (t?.priorityClassName !== PRIORITY_CLASS)
    out.push(`priorityClassName ${t?.priorityClassName ?? 'unset'}`);
  if (t?.priority !== undefined) out.push(`priority ${t.priority}`);
  if (t?.preemptionPolicy !== undefined && t.preemptionPolicy !== 'Never')
    out.push(`preemptionPolicy ${t.preemptionPolicy}`);
  for (const f of ['runtimeClassName', 'overhead', 'resources'] as const)
    if (t?.[f] !== undefined) out.push(`${f} set`);
  if ((t?.initContainers ?? []).length > 0) out.push('initContainers set');
  const cs = t?.containers ?? [];
  if (cs.length !== 1 || cs[0]?.name !== BALLOON_CONTAINER)
    out.push(`containers [${cs.map((c) => c.name).join(', ')}]`);
  else {
    if (cs[0].image !== image) out.push(`image ${cs[0].image}`);
    if (cs[0].resources?.limits !== undefined) out.push('limits set');
  }
  return out;
}

const is = (err: unknown, status: number) => err instanceof ClusterAccessError && err.status === status;

export type Ensured = 'created' | 'updated' | 'present';

export interface DaemonSetEnsured {
  ensured: Ensured;
  /** The DaemonSet's uid, when read: only its pods are balloons (absent right after a create). */
  uid?: string;
  /** The template's drift that was repaired, one phrase per field. */
  repaired: string[];
}

export class BalloonObjectError extends Error {
  override name = 'BalloonObjectError';
}

/** What differs from the class balloons need, one phrase per field ("value 1000"). */
export function priorityClassDrift(pc: {
  value?: number;
  preemptionPolicy?: string;
  globalDefault?: boolean;
}) {
  const drift: string[] = [];
  if (pc.value !== BALLOON_PRIORITY) drift.push(`value ${pc.value}`);
  // The API defaults preemptionPolicy to PreemptLowerPriority.
  if (pc.preemptionPolicy !== 'Never')
    drift.push(`preemptionPolicy ${pc.preemptionPolicy ?? 'PreemptLowerPriority'}`);
  if (pc.globalDefault === true) drift.push('globalDefault true');
  return drift;
}

export class BalloonObjects {
  /** The KEP-5836 node opt-out's calls (./node-opt-out.ts). */
  readonly optOut: NodeOptOutApi;
  constructor(
    private readonly client: ClusterClient,
    private readonly reader: RawReader,
    private readonly image: string,
  ) {
    this.optOut = new NodeOptOutApi(reader);
  }

  /**
   * The PriorityClass as balloons need it: value 1e9, preemptionPolicy Never, globalDefault false.
   * Drift of fleetscope's own class is repaired and returned (globalDefault patched back; value and
   * preemptionPolicy are immutable, so the class is replaced, fenced on the uid read); a class of that
   * name fleetscope does not own is never touched: that throws, naming what is wrong.
   */
  async ensurePriorityClass(): Promise<{ ensured: Ensured | 'repaired'; repaired: string[] }> {
    const pc = await this.readPriorityClass();
    if (!pc) {
      await this.createPriorityClass();
      return { ensured: 'created', repaired: [] };
    }
    const drift = priorityClassDrift(pc);
    if (drift.length === 0) return { ensured: 'present', repaired: [] };
    const what = `PriorityClass ${PRIORITY_CLASS} has ${drift.join(', ')}`;
    if (pc.metadata?.labels?.[MANAGED_BY_LABEL] !== MANAGED_BY_VALUE)
      throw new BalloonObjectError(
        `${what} and is not fleetscope's (no ${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE} label): left alone; balloons need value ${BALLOON_PRIORITY}, preemptionPolicy Never, globalDefault false (delete it and fleetscope recreates it)`,
      );
    if (pc.value !== BALLOON_PRIORITY || pc.preemptionPolicy !== 'Never') {
      await this.client.call(
        'replace balloon PriorityClass',
        () =>
          this.client.scheduling.deletePriorityClass({
            name: PRIORITY_CLASS,
            body: { preconditions: { uid: pc.metadata?.uid } },
          }),
        { expected: [404, 409] },
      );
      await this.createPriorityClass();
    } else
      await this.client.patch('repair balloon PriorityClass', 'merge', (options) =>
        this.client.scheduling.patchPriorityClass(
          { name: PRIORITY_CLASS, body: { globalDefault: false } },
          options,
        ),
      );
    return { ensured: 'repaired', repaired: [`${what}: repaired`] };
  }

  private async readPriorityClass() {
    try {
      return await this.client.call(
        'read balloon PriorityClass',
        () => this.client.scheduling.readPriorityClass({ name: PRIORITY_CLASS }),
        { expected: [404] },
      );
    } catch (err) {
      if (is(err, 404)) return undefined;
      throw err;
    }
  }

  private async createPriorityClass(): Promise<void> {
    await this.client
      .call(
        'create balloon PriorityClass',
        () => this.client.scheduling.createPriorityClass({ body: priorityClass() as never }),
        { idempotent: false, expected: [409] },
      )
      .catch((err) => {
        if (!is(err, 409)) throw err;
      });
  }

  /** Whether the server has pods/resize (discovery, one request): without it a balloon cannot move. */
  resizeSupported(): Promise<boolean> {
    return hasResizeSubresource(this.client);
  }

  async ensureDaemonSet(sel: Selection): Promise<DaemonSetEnsured> {
    const wanted = balloonDaemonSet(sel, this.image);
    const current = await this.readDaemonSet();
    if (!current) {
      await this.client
        .call(
          'create balloon DaemonSet',
          () =>
            this.client.apps.createNamespacedDaemonSet({
              namespace: BALLOON_NAMESPACE,
              body: wanted as never,
            }),
          { idempotent: false, expected: [409] },
        )
        .catch((e) => {
          if (!is(e, 409)) throw e;
        });
      return { ensured: 'created', repaired: [] };
    }
    // A DaemonSet of that name that fleetscope did not create is never written, and its pods are not balloons.
    if (current.metadata?.labels?.[MANAGED_BY_LABEL] !== MANAGED_BY_VALUE)
      throw new BalloonObjectError(
        `DaemonSet ${BALLOON_NAMESPACE}/${BALLOON_NAME} is not fleetscope's (no ${MANAGED_BY_LABEL}=${MANAGED_BY_VALUE} label): left alone, and its pods are not balloons (delete it and fleetscope recreates it)`,
      );
    const uid = current.metadata?.uid;
    const sameSelection = current.metadata?.annotations?.[SELECTION_ANNOTATION] === selectionDigest(sel);
    const drift = templateDrift(current.spec?.template?.spec, this.image);
    if (sameSelection && drift.length === 0) return { ensured: 'present', uid, repaired: [] };
    await this.updateDaemonSet(sel, wanted, current.metadata?.resourceVersion);
    // A new image alone is an ordinary update; anything else in the template drifted from outside.
    const repaired = drift.filter((d) => !d.startsWith('image '));
    return {
      ensured: 'updated',
      uid,
      repaired: repaired.length
        ? [
            `DaemonSet ${BALLOON_NAMESPACE}/${BALLOON_NAME}'s pod template had ${repaired.join(', ')}: repaired`,
          ]
        : [],
    };
  }

  /** The balloon DaemonSet as far as ensureDaemonSet compares it; undefined when it does not exist. */
  private async readDaemonSet(): Promise<DaemonSetSeen | undefined> {
    try {
      return await this.client.call(
        'read balloon DaemonSet',
        () => this.client.apps.readNamespacedDaemonSet({ name: BALLOON_NAME, namespace: BALLOON_NAMESPACE }),
        { expected: [404] },
      );
    } catch (err) {
      if (is(err, 404)) return undefined;
      throw err;
    }
  }

  /**
   * A new selection or image, or a drifted template: the selection digest and the whole pod template
   * written back, fields a balloon must not have removed (null), fenced on the version read (a 409 is
   * tried again next cycle).
   */
  private async updateDaemonSet(
    sel: Selection,
    wanted: ReturnType<typeof balloonDaemonSet>,
    resourceVersion: string | undefined,
  ): Promise<void> {
    // A merge patch replaces lists whole (the affinity's terms, the containers): nothing else survives.
    const removed = { priority: null, preemptionPolicy: null, runtimeClassName: null, overhead: null };
    const patch = {
      metadata: {
        annotations: { [SELECTION_ANNOTATION]: selectionDigest(sel) },
        ...(resourceVersion ? { resourceVersion } : {}),
      },
      spec: {
        template: {
          metadata: wanted.spec.template.metadata,
          spec: { ...removed, resources: null, initContainers: null, ...wanted.spec.template.spec },
        },
      },
    };
    await this.client.patch('update balloon DaemonSet', 'merge', (options) =>
      this.client.apps.patchNamespacedDaemonSet(
        { name: BALLOON_NAME, namespace: BALLOON_NAMESPACE, body: patch },
        options,
      ),
    );
  }

  /** Whether the DaemonSet exists (one read), for a cluster with nothing left to manage. */
  async daemonSetExists(): Promise<boolean> {
    return (await this.readDaemonSet()) !== undefined;
  }

  async deleteDaemonSet(): Promise<boolean> {
    return this.deleting('delete balloon DaemonSet', () =>
      this.client.apps.deleteNamespacedDaemonSet({ name: BALLOON_NAME, namespace: BALLOON_NAMESPACE }),
    );
  }

  async deletePriorityClass(): Promise<boolean> {
    return this.deleting('delete balloon PriorityClass', () =>
      this.client.scheduling.deletePriorityClass({ name: PRIORITY_CLASS }),
    );
  }

  private async deleting(operation: string, fn: () => Promise<unknown>): Promise<boolean> {
    try {
      await this.client.call(operation, fn, { expected: [404] });
      return true;
    } catch (err) {
      if (is(err, 404)) return false;
      throw err;
    }
  }

  /**
   * What a LimitRange or ResourceQuota in the balloon namespace breaks (./namespace-limits.ts); two
   * lists. A list that cannot be read (RBAC granted before this rule) is said, not fatal.
   */
  async namespaceLimits(): Promise<string[]> {
    const list = async <T>(what: string) =>
      (
        await this.reader.get<{ items?: T[] }>(
          `list ${what}`,
          `/api/v1/namespaces/${BALLOON_NAMESPACE}/${what}`,
        )
      ).items ?? [];
    try {
      return [
        ...limitRangeProblems(BALLOON_NAMESPACE, await list('limitranges')),
        ...quotaProblems(BALLOON_NAMESPACE, await list('resourcequotas')),
      ];
    } catch (err) {
      return [
        `LimitRanges and ResourceQuotas in ${BALLOON_NAMESPACE} could not be read: ${(err as Error).message}`,
      ];
    }
  }

  /** Each node's usage from metrics.k8s.io; undefined when the cluster has no metrics API (404/503). */
  async nodeUsage(): Promise<Map<string, Amounts> | undefined> {
    try {
      const items = await this.client.listNodeMetrics({
        call: { expected: [404, 503], retry: { maxAttempts: 1 } },
      });
      return new Map(
        items.map((m) => [
          m.metadata?.name ?? '',
          amounts(cpuMillis(m.usage?.cpu) ?? 0, memoryBytes(m.usage?.memory) ?? 0),
        ]),
      );
    } catch (err) {
      if (is(err, 404) || is(err, 503)) return undefined;
      throw err;
    }
  }

  /**
   * A Kubernetes Event on a balloon pod, or on the balloon DaemonSet for what concerns the cluster (best
   * effort: an Event that cannot be written loses nothing).
   */
  async event(
    pod: { name: string; uid?: string; kind?: 'Pod' | 'DaemonSet' },
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
    at: number,
  ): Promise<boolean> {
    const time = new Date(at).toISOString();
    const body = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { generateName: `${pod.name}.`, namespace: BALLOON_NAMESPACE },
      involvedObject: {
        apiVersion: pod.kind === 'DaemonSet' ? 'apps/v1' : 'v1',
        kind: pod.kind ?? 'Pod',
        namespace: BALLOON_NAMESPACE,
        name: pod.name,
        ...(pod.uid ? { uid: pod.uid } : {}),
      },
      type,
      reason,
      message: message.slice(0, 1024),
      source: { component: 'fleetscope-balloons' },
      reportingComponent: 'fleetscope.io/balloons',
      reportingInstance: 'fleetscope',
      firstTimestamp: time,
      lastTimestamp: time,
      count: 1,
    };
    try {
      // Raw JSON: hundreds of Events in a busy cycle should not each go through client-node's models.
      await this.reader.send(
        'record balloon event',
        'POST',
        `/api/v1/namespaces/${BALLOON_NAMESPACE}/events`,
        body,
        'application/json',
        {
          retry: { maxAttempts: 1 },
        },
      );
      return true;
    } catch {
      return false;
    }
  }
}
