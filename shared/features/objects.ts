/**
 * Objects of any kind in one cluster, as the built-in tasks address them (an API version, a plural or a
 * kind, a namespace, a name, a label selector), over the cluster access layer (timeouts, retries,
 * redacted errors). Raw JSON, so that custom resources and built-ins are handled alike and nothing is
 * lost in a round trip through typed models. Every task observes before it writes, so performing a task
 * again (after a crash) writes nothing that is already done.
 */
import type { ClusterClient } from '../k8s/client.js';
import { ClusterAccessError } from '../k8s/errors.js';
import { RawReader } from '../k8s/raw-reader.js';
import { unguarded, writeGuard } from '../k8s/write-guard.js';
import { matchesLabels, parseLabelSelector } from '../kernel/label-selector.js';

export interface ObjectsQuery {
  apiVersion: string;
  resource?: string | undefined;
  kind?: string | undefined;
  namespace?: string | undefined;
  name?: string | undefined;
  selector?: string | undefined;
}

export interface KObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [k: string]: unknown;
  };
  [k: string]: unknown;
}

interface Resolved {
  base: string;
  resource: string;
  kind: string;
  namespaced: boolean;
}

const is = (err: unknown, status: number) => err instanceof ClusterAccessError && err.status === status;
const baseOf = (apiVersion: string) => (apiVersion === 'v1' ? '/api/v1' : `/apis/${apiVersion}`);
const enc = encodeURIComponent;

export class ObjectsApi {
  private readonly raw: RawReader;
  private readonly discovery = new Map<string, Promise<DiscoveryList | undefined>>();
  /** Writes that changed something (created, patched, deleted). */
  writes = 0;

  constructor(readonly client: ClusterClient) {
    this.raw = new RawReader(client);
  }

  /** The resource's path parts; undefined when the cluster does not serve the kind (no such CRD). */
  async resolve(q: ObjectsQuery): Promise<Resolved | undefined> {
    const base = baseOf(q.apiVersion);
    const list = await this.discover(q.apiVersion);
    if (!list) return undefined;
    const found = list.resources.find((r) =>
      q.resource ? r.name === q.resource : r.kind === q.kind && !r.name.includes('/'),
    );
    if (!found) return undefined;
    return { base, resource: found.name, kind: found.kind, namespaced: found.namespaced };
  }

  /** Forgets what discovery said about an API version (a CRD was just created). */
  forget(apiVersion: string): void {
    this.discovery.delete(apiVersion);
  }

  private discover(apiVersion: string): Promise<DiscoveryList | undefined> {
    let d = this.discovery.get(apiVersion);
    if (!d) {
      d = this.raw
        .get<DiscoveryList>(`discover ${apiVersion}`, baseOf(apiVersion), {}, { expected: [404] })
        .catch((err) => {
          if (is(err, 404)) return undefined;
          throw err;
        });
      this.discovery.set(apiVersion, d);
    }
    return d;
  }

  private path(r: Resolved, namespace: string | undefined, name?: string, sub?: string): string {
    const ns = r.namespaced && namespace ? `/namespaces/${enc(namespace)}` : '';
    return `${r.base}${ns}/${r.resource}${name ? `/${enc(name)}` : ''}${sub ? `/${sub}` : ''}`;
  }

  /** The objects the query selects (none when the kind is not served). */
  async list(q: ObjectsQuery): Promise<KObject[]> {
    const r = await this.resolve(q);
    if (!r) return [];
    if (q.name) {
      const one = await this.get(r, q.namespace, q.name);
      return one && matches(one, q.selector) ? [one] : [];
    }
    const out: KObject[] = [];
    await this.raw.list<KObject>(
      `list ${r.resource}`,
      this.path(r, q.namespace),
      { labelSelector: q.selector },
      (items) => out.push(...items),
      { pageSize: 500 },
    );
    return out;
  }

  private async get(r: Resolved, namespace: string | undefined, name: string): Promise<KObject | undefined> {
    try {
      return await this.raw.get<KObject>(
        `get ${r.resource}`,
        this.path(r, namespace, name),
        {},
        { expected: [404] },
      );
    } catch (err) {
      if (is(err, 404)) return undefined;
      throw err;
    }
  }

  /**
   * Deletes one object as it was read (its uid and resourceVersion are preconditions). An object changed
   * since (a controller's status update) is read again and deleted if the query still selects it; one
   * recreated meanwhile (a new uid) is not this one. False when it was already gone.
   */
  async delete(q: ObjectsQuery, obj: KObject): Promise<boolean> {
    const r = await this.resolve(q);
    if (!r) return false;
    let current: KObject | undefined = obj;
    for (let attempt = 1; current; attempt++) {
      try {
        await this.raw.send(
          `delete ${r.resource}`,
          'DELETE',
          this.path(r, current.metadata?.namespace, current.metadata?.name),
          deleteOptions(current),
          'application/json',
          { expected: [404, 409] },
        );
        this.writes++;
        return true;
      } catch (err) {
        if (is(err, 404)) return false;
        if (!is(err, 409) || attempt >= CONFLICT_ATTEMPTS) throw err;
        const fresh = await this.get(r, current.metadata?.namespace, String(current.metadata?.name));
        current =
          fresh?.metadata?.uid === obj.metadata?.uid && matches(fresh!, q.selector) ? fresh : undefined;
      }
    }
    return false;
  }

  /**
   * Patches an object with what `patchOf` computes from it as it was read, that version as the
   * precondition (./objects.ts asRead); when another writer changed it since (409), the patch is
   * computed again from the object as it now is, and nothing is written once `patchOf` finds nothing to
   * change (or the object is gone). So a change made in between is never undone by a stale patch.
   */
  async patchAsRead(
    q: ObjectsQuery,
    obj: KObject,
    patchOf: (live: KObject) => Record<string, unknown> | undefined,
    subresource?: 'status',
  ): Promise<boolean> {
    const r = await this.resolve(q);
    if (!r) return false;
    let live: KObject | undefined = obj;
    for (let attempt = 1; live; attempt++) {
      const patch = patchOf(live);
      if (!patch) return false;
      try {
        await this.mergePatch(q, live, patch, subresource);
        return true;
      } catch (err) {
        if (!is(err, 409) || attempt >= CONFLICT_ATTEMPTS) throw err;
        live = await this.get(r, obj.metadata?.namespace, String(obj.metadata?.name));
      }
    }
    return false;
  }

  /**
   * A JSON merge patch of one object (or of its status), made on the object as it was read: its
   * resourceVersion goes with the patch as a precondition, so a patch computed from what another writer
   * changed since is refused (409) instead of undoing their change.
   */
  async mergePatch(
    q: ObjectsQuery,
    obj: KObject,
    patch: Record<string, unknown>,
    subresource?: 'status',
  ): Promise<void> {
    const r = await this.resolve(q);
    if (!r) return;
    await this.raw.send(
      `patch ${r.resource}${subresource ? `/${subresource}` : ''}`,
      'PATCH',
      this.path(r, obj.metadata?.namespace, obj.metadata?.name, subresource),
      asRead(obj, patch),
      'application/merge-patch+json',
      { expected: [409] },
    );
    this.writes++;
  }

  /**
   * A create cannot carry a precondition: a writer frozen between its fence and the create may send it
   * after it lost its claim and the world moved on (the feature turned off again). The guard says so
   * once the create is back, and the object just created (its uid) is taken back at once.
   */
  private async confirmCreate(q: ObjectsQuery, r: Resolved, made: KObject): Promise<void> {
    const guard = writeGuard();
    if (!guard?.confirm || (await guard.confirm(`create ${r.resource}`))) return;
    await unguarded(() => this.delete(q, made));
    throw new Error(
      `created ${made.kind ?? r.resource} ${made.metadata?.name} after this task's claim was lost and the transition moved on: taken back`,
    );
  }

  /**
   * Creates the object, or merge-patches it where it differs from the manifest; writes nothing when it
   * already says what the manifest says. Returns what it did. `adopt` judges an object that exists
   * before it is changed (it throws to refuse it: ./owned.ts).
   */
  async apply(
    manifest: KObject,
    opts: { adopt?: (live: KObject) => void } = {},
  ): Promise<'created' | 'updated' | 'unchanged'> {
    const q = { apiVersion: String(manifest.apiVersion), kind: String(manifest.kind) };
    const r = await this.resolve(q);
    if (!r) throw new Error(`the cluster does not serve ${manifest.kind} (${manifest.apiVersion})`);
    const ns = manifest.metadata?.namespace;
    const name = String(manifest.metadata?.name);
    const live = await this.get(r, ns, name);
    if (!live) {
      try {
        const made = await this.raw.send<KObject>(
          `create ${r.resource}`,
          'POST',
          this.path(r, ns),
          manifest,
          'application/json',
          { expected: [409] },
        );
        this.writes++;
        await this.confirmCreate(q, r, made);
        return 'created';
      } catch (err) {
        if (!is(err, 409)) throw err;
        return this.apply(manifest, opts); // created meanwhile: converge on the manifest
      }
    }
    opts.adopt?.(live);
    const { status: _s, ...wanted } = manifest;
    if (contains(live, wanted)) return 'unchanged';
    await this.raw.send(
      `update ${r.resource}`,
      'PATCH',
      this.path(r, ns, name),
      asRead(live, wanted),
      'application/merge-patch+json',
    );
    this.writes++;
    return 'updated';
  }
}

/** Conflicts met by one write before it gives up (and the task fails, to be retried later). */
const CONFLICT_ATTEMPTS = 5;

const deleteOptions = (obj: KObject) => {
  const { uid, resourceVersion } = obj.metadata ?? {};
  return {
    apiVersion: 'v1',
    kind: 'DeleteOptions',
    preconditions: { ...(uid ? { uid } : {}), ...(resourceVersion ? { resourceVersion } : {}) },
  };
};

/** `patch` with the object's resourceVersion as read: the server applies it only to that version. */
function asRead(obj: KObject, patch: Record<string, unknown>): Record<string, unknown> {
  const resourceVersion = obj.metadata?.resourceVersion;
  if (!resourceVersion) return patch;
  const meta = (patch.metadata ?? {}) as Record<string, unknown>;
  return { ...patch, metadata: { ...meta, resourceVersion } };
}

interface DiscoveryList {
  resources: { name: string; kind: string; namespaced: boolean }[];
}

function matches(obj: KObject, selector: string | undefined): boolean {
  return !selector || matchesLabels(parseLabelSelector(selector), obj.metadata?.labels ?? {});
}

/** Whether every field of `part` is present in `whole` with the same value (objects compared deeply). */
export function contains(whole: unknown, part: unknown): boolean {
  if (part === null || typeof part !== 'object') return whole === part;
  if (Array.isArray(part))
    return (
      Array.isArray(whole) && whole.length === part.length && part.every((p, i) => contains(whole[i], p))
    );
  if (whole === null || typeof whole !== 'object' || Array.isArray(whole)) return false;
  return Object.entries(part).every(([k, v]) => contains((whole as Record<string, unknown>)[k], v));
}

/** The value at a path of keys, or undefined. */
export function fieldAt(obj: unknown, path: readonly string[]): unknown {
  let at: unknown = obj;
  for (const k of path) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<string, unknown>)[k];
  }
  return at;
}

/** The merge patch that removes the field at `path`: {a: {b: null}}. */
export function removalPatch(path: readonly string[]): Record<string, unknown> {
  return path.reduceRight<unknown>((inner, key) => ({ [key]: inner }), null) as Record<string, unknown>;
}
