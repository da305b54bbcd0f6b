/**
 * The feature store in process: what the unit tests run on, no DynamoDB-protocol server. Its conditions
 * are the DynamoDB adapter's (./store-dynamo.ts): a record is created only where none is and saved only
 * over the version read; a claim is renewed only while its token holds it unlapsed, counted on while
 * its token is on it, and an epoch issued only over the one read; a use is kept only when newer. Records
 * come back in their key order, copied in and out as a serialized store would (undefined fields dropped).
 */
import type { StoredDeclaration } from './declaration.js';
import { type FeatureRecord, type FeatureRef, refKey, type Use } from './model.js';
import type { ClaimWrite, FeatureStore, FeatureView, Mirror } from './store.js';

interface Kept {
  record?: FeatureRecord;
  uses: Map<string, Use>;
  mirror?: Mirror;
}

const stored = <T>(v: T): T => JSON.parse(JSON.stringify(v));
const sorted = <V>(m: Map<string, V>): [string, V][] =>
  [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

export class MemoryFeatureStore implements FeatureStore {
  /** Writes made through this store (as the DynamoDB adapter counts them). */
  readonly stats = { reads: 0, writes: 0, conflicts: 0 };
  /** By cluster, then by "<ns>/<name>". */
  private readonly clusters = new Map<string, Map<string, Kept>>();
  private readonly declarations = new Map<string, StoredDeclaration>();

  private kept(cluster: string, ref: FeatureRef): Kept | undefined {
    return this.clusters.get(cluster)?.get(refKey(ref));
  }

  private keep(cluster: string, ref: FeatureRef): Kept {
    const features = this.clusters.get(cluster) ?? new Map<string, Kept>();
    this.clusters.set(cluster, features);
    const k = features.get(refKey(ref)) ?? { uses: new Map() };
    features.set(refKey(ref), k);
    return k;
  }

  private counted(ok: boolean): boolean {
    if (ok) this.stats.writes++;
    else this.stats.conflicts++;
    return ok;
  }

  async get(cluster: string, ref: FeatureRef): Promise<FeatureRecord | undefined> {
    this.stats.reads++;
    const r = this.kept(cluster, ref)?.record;
    return r ? stored(r) : undefined;
  }

  async view(cluster: string, ref: FeatureRef): Promise<FeatureView> {
    this.stats.reads++;
    return viewOf(this.kept(cluster, ref));
  }

  async clusterViews(cluster: string): Promise<Map<string, FeatureView>> {
    this.stats.reads++;
    const features = sorted(this.clusters.get(cluster) ?? new Map<string, Kept>());
    return new Map(
      features.filter(([, k]) => k.record || k.mirror || k.uses.size).map(([key, k]) => [key, viewOf(k)]),
    );
  }

  async listAll(): Promise<FeatureRecord[]> {
    const all: [string, FeatureRecord][] = [];
    for (const [cluster, features] of this.clusters)
      for (const [key, k] of features) if (k.record) all.push([`${cluster}#${key}`, k.record]);
    return sorted(new Map(all)).map(([, r]) => stored(r));
  }

  async create(record: FeatureRecord): Promise<boolean> {
    const k = this.keep(record.cluster, record);
    if (k.record) return this.counted(false);
    k.record = stored(record);
    return this.counted(true);
  }

  async save(next: FeatureRecord, expected: number): Promise<boolean> {
    const k = this.keep(next.cluster, next);
    if (k.record?.version !== expected) return this.counted(false);
    k.record = stored(next);
    return this.counted(true);
  }

  /** Changes the first task of the stored record when `holds` it, with a new version and time. */
  private onFirstTask(
    cluster: string,
    ref: FeatureRef,
    holds: (r: FeatureRecord) => boolean,
    change: (r: FeatureRecord) => void,
    now: number,
  ): ClaimWrite {
    const r = this.kept(cluster, ref)?.record;
    if (!r?.tasks[0] || !holds(r)) {
      this.stats.conflicts++;
      return 'fenced';
    }
    change(r);
    r.version += 1;
    r.updatedAt = now;
    this.stats.writes++;
    return 'held';
  }

  async renewClaim(cluster: string, ref: FeatureRef, token: string, now: number, until: number) {
    return this.onFirstTask(
      cluster,
      ref,
      (r) => r.tasks[0]!.claim?.token === token && r.tasks[0]!.claim.until > now,
      (r) => {
        r.tasks[0]!.claim!.until = until;
      },
      now,
    );
  }

  async countWrites(cluster: string, ref: FeatureRef, token: string, n: number, now: number) {
    return this.onFirstTask(
      cluster,
      ref,
      (r) => r.tasks[0]!.claim?.token === token,
      (r) => {
        r.tasks[0]!.writes += n;
      },
      now,
    );
  }

  async reportUse(cluster: string, ref: FeatureRef, use: Use): Promise<boolean> {
    const k = this.keep(cluster, ref);
    const before = k.uses.get(use.component);
    const newer =
      !before ||
      before.at < use.at ||
      (use.epoch !== undefined && (before.epoch === undefined || before.epoch < use.epoch));
    if (newer) k.uses.set(use.component, stored(use));
    return this.counted(newer);
  }

  async issueEpoch(
    cluster: string,
    ref: FeatureRef,
    token: string,
    previous: number | undefined,
    now: number,
  ): Promise<number | 'fenced'> {
    const epoch = (previous ?? 0) + 1;
    const write = this.onFirstTask(
      cluster,
      ref,
      (r) => r.tasks[0]!.claim?.token === token && r.usesEpoch === previous,
      (r) => {
        r.usesEpoch = epoch;
        r.tasks[0]!.progress = { clearedAt: now, epoch };
      },
      now,
    );
    if (write === 'fenced') this.stats.conflicts--; // the DynamoDB adapter counts no conflict here
    return write === 'held' ? epoch : 'fenced';
  }

  async clearUses(cluster: string, ref: FeatureRef, uses: readonly Use[], epoch: number): Promise<number> {
    const kept = this.kept(cluster, ref)?.uses;
    let cleared = 0;
    for (const u of uses) {
      if (u.epoch === epoch) continue;
      // A report echoing the epoch that came meanwhile survives.
      if (kept?.get(u.component)?.epoch === epoch) continue;
      kept?.delete(u.component);
      cleared++;
    }
    this.stats.writes += cleared;
    return cleared;
  }

  async putMirror(cluster: string, ref: FeatureRef, mirror: Mirror): Promise<void> {
    this.keep(cluster, ref).mirror = stored(mirror);
  }

  async putDeclaration(d: StoredDeclaration): Promise<void> {
    this.declarations.set(refKey(d), stored(d));
  }

  async putDeclarations(
    ds: readonly StoredDeclaration[],
    previous: ReadonlyMap<string, StoredDeclaration>,
  ): Promise<boolean> {
    // All or none: every one still as read, or nothing written.
    const asRead = ds.every(
      (d) => this.declarations.get(refKey(d))?.registeredAt === previous.get(refKey(d))?.registeredAt,
    );
    if (!asRead) return false;
    for (const d of ds) this.declarations.set(refKey(d), stored(d));
    this.stats.writes += ds.length;
    return true;
  }

  async deleteDeclaration(ref: FeatureRef, registeredAt: number): Promise<boolean> {
    if (this.declarations.get(refKey(ref))?.registeredAt !== registeredAt) return false;
    this.declarations.delete(refKey(ref));
    return true;
  }

  async forgetFeature(cluster: string, record: FeatureRecord): Promise<boolean> {
    const k = this.kept(cluster, record)?.record;
    if (k?.version !== record.version || k.state !== 'Off') return false;
    this.clusters.get(cluster)?.delete(refKey(record));
    return true;
  }

  async listDeclarations(): Promise<StoredDeclaration[]> {
    return sorted(this.declarations).map(([, d]) => stored(d));
  }

  async forgetCluster(cluster: string): Promise<number> {
    let items = 0;
    for (const k of this.clusters.get(cluster)?.values() ?? [])
      items += (k.record ? 1 : 0) + (k.mirror ? 1 : 0) + k.uses.size;
    this.clusters.delete(cluster);
    return items;
  }
}

function viewOf(k: Kept | undefined): FeatureView {
  const view: FeatureView = { uses: sorted(k?.uses ?? new Map<string, Use>()).map(([, u]) => stored(u)) };
  if (k?.record) view.record = stored(k.record);
  if (k?.mirror) view.mirror = stored(k.mirror);
  return view;
}
