/**
 * The simulated control plane's writes against a real apiserver. Each write is applied to the local
 * store at once (the cache the controllers read, as an informer cache is for a real controller) and
 * queued as the API call a real component makes for it: a create, the scheduler's pods/binding, a
 * kubelet's or controller's /status update, an update of the object, a delete. The queue is sent in
 * order; the server's answer replaces the cached object, and a refusal makes the next read take the
 * server's version again, so the controllers decide anew from what the server holds.
 */
import type { ClusterState } from '../cluster.js';
import { deepEqual, type Json, type JsonObject } from '../json.js';
import type { ControllerWrites } from '../state.js';
import { type RealApi, restPath, splitKey, statusOf } from './api.js';

interface Op {
  collection: string;
  key: string;
  method: 'POST' | 'PUT' | 'DELETE';
  path: string;
  body: unknown;
  /** Whether the answer is the object (to cache), not a Status. */
  returnsObject: boolean;
}

/** Server-set metadata a create or status update must not carry. */
const SERVER_FIELDS = ['uid', 'resourceVersion', 'creationTimestamp', 'generation', 'managedFields'];

const SA_VOLUME = /^kube-api-access-/;

/** The resourceVersion and uid the real server last reported per cached object. */
export class RemoteVersions {
  private readonly rv = new Map<string, string>();
  get(collection: string, key: string): string | undefined {
    return this.rv.get(`${collection}|${key}`);
  }
  set(collection: string, key: string, rv: string | undefined): void {
    if (rv === undefined) this.rv.delete(`${collection}|${key}`);
    else this.rv.set(`${collection}|${key}`, rv);
  }
}

export class RealApiWrites implements ControllerWrites {
  private queue: Op[] = [];
  /** Refusals and failures, newest last (bounded), for the operator and the tests. */
  readonly problems: string[] = [];

  constructor(
    private readonly cluster: ClusterState,
    private readonly api: RealApi,
    private readonly versions: RemoteVersions,
    private readonly onProblem?: (message: string) => void,
  ) {}

  get pending(): number {
    return this.queue.length;
  }

  /** Whether a write of this object waits to be sent (the cache is ahead of the server there). */
  queued(collection: string, key: string): boolean {
    return this.queue.some((o) => o.collection === collection && o.key === key);
  }

  put(collection: string, key: string, obj: JsonObject): Json {
    const prev = this.cluster.store.get(collection, key);
    const op = this.translate(collection, key, prev, obj);
    const stored = this.cluster.store.put(collection, key, obj);
    if (op) this.queue.push(op);
    return stored;
  }

  delete(collection: string, key: string): void {
    if (!this.cluster.store.delete(collection, key)) return;
    const { namespace, name } = splitKey(key);
    // Pods go at once, as the simulator's do: the simulated kubelet would confirm the deletion anyway.
    const body = collection === 'pods' ? { gracePeriodSeconds: 0 } : {};
    this.queue.push({
      collection,
      key,
      method: 'DELETE',
      path: restPath(this.cluster.lookup(collection), namespace, name),
      body,
      returnsObject: false,
    });
  }

  /** Sends the queued calls in order; the number sent. */
  async flush(onAnswer: (collection: string, key: string, obj: Json) => void): Promise<number> {
    let sent = 0;
    while (this.queue.length > 0) {
      const op = this.queue.shift() as Op;
      sent++;
      try {
        const answer = await this.api.send(op.method, op.path, op.body);
        const later = this.queue.some((o) => o.collection === op.collection && o.key === op.key);
        if (op.returnsObject && !later) onAnswer(op.collection, op.key, answer);
      } catch (err) {
        const status = statusOf(err);
        if (!(op.method === 'DELETE' && status === 404)) this.note(op, status, err);
        // Read the server's version again (or drop ours if it has none).
        this.versions.set(op.collection, op.key, undefined);
      }
    }
    return sent;
  }

  private note(op: Op, status: number | undefined, err: unknown): void {
    // AlreadyExists on a create is the normal answer when another writer was first.
    if (op.method === 'POST' && status === 409) return;
    this.report(`${op.method} ${op.path}: ${(err as Error).message}`);
  }

  report(message: string): void {
    this.problems.push(message);
    if (this.problems.length > 100) this.problems.shift();
    this.onProblem?.(message);
  }

  private translate(collection: string, key: string, prev: Json, next: JsonObject): Op | undefined {
    const def = this.cluster.lookup(collection);
    const { namespace, name } = splitKey(key);
    const path = (sub?: string) => restPath(def, namespace, name, sub);
    if (!prev)
      return {
        collection,
        key,
        method: 'POST',
        path: restPath(def, namespace),
        body: forCreate(collection, next),
        returnsObject: true,
      };
    if (collection === 'pods' && !prev.spec?.nodeName && next.spec?.nodeName)
      return {
        collection,
        key,
        method: 'POST',
        path: path('binding'),
        body: {
          apiVersion: 'v1',
          kind: 'Binding',
          metadata: { name, namespace },
          target: { apiVersion: 'v1', kind: 'Node', name: next.spec.nodeName },
        },
        returnsObject: false,
      };
    if (deepEqual(withoutStatus(prev), withoutStatus(next))) {
      if (deepEqual(prev.status, next.status)) return undefined;
      // A status write, as a kubelet's or controller's: unconditional (they own the status).
      return { collection, key, method: 'PUT', path: path('status'), body: strip(next), returnsObject: true };
    }
    // Anything else is conditional on the version the decision was made from; without one (a write
    // failed since), nothing is sent: the next read brings the object back and the decision is redone.
    const resourceVersion = this.versions.get(collection, key);
    if (resourceVersion === undefined) return undefined;
    const body = { ...next, metadata: { ...next.metadata, resourceVersion } };
    delete body.metadata.managedFields;
    return { collection, key, method: 'PUT', path: path(), body, returnsObject: true };
  }
}

function withoutStatus(o: Json): Json {
  const { status: _s, metadata, ...rest } = o ?? {};
  const { resourceVersion: _rv, managedFields: _m, ...meta } = metadata ?? {};
  return { ...rest, metadata: meta };
}

function strip(o: JsonObject): JsonObject {
  const metadata = { ...o.metadata };
  for (const f of SERVER_FIELDS) delete metadata[f];
  return { ...o, metadata };
}

/**
 * The object as its real creator sends it: no server-set metadata or status; a pod without what
 * admission adds (priority from its class, the service-account token volume), as the DaemonSet
 * controller creates it from the template.
 */
function forCreate(collection: string, obj: JsonObject): JsonObject {
  const out = strip(obj);
  if (collection === 'events') {
    const { resourceVersion: _rv, ...involved } = out.involvedObject ?? {};
    return { ...out, involvedObject: involved };
  }
  if (collection !== 'pods') return out;
  const { status: _status, ...pod } = out;
  const { priority: _p, preemptionPolicy: _pp, ...spec } = pod.spec ?? {};
  const saVolumes = new Set(
    (spec.volumes ?? []).filter((v: Json) => SA_VOLUME.test(v?.name)).map((v: Json) => v.name),
  );
  if (saVolumes.size > 0) {
    spec.volumes = spec.volumes.filter((v: Json) => !saVolumes.has(v.name));
    if (spec.volumes.length === 0) delete spec.volumes;
    spec.containers = spec.containers.map((c: Json) => ({
      ...c,
      volumeMounts: (c.volumeMounts ?? []).filter((m: Json) => !saVolumes.has(m.name)),
    }));
  }
  return { ...pod, spec };
}
