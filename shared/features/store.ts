/**
 * What the features keep about each cluster, and the port they keep it through ({@link FeatureStore}):
 * each (cluster, feature)'s record (state, desired, tasks, history, version), its components' last uses,
 * the marker of what was last written into the cluster, and the third-party features' declarations.
 *
 * In domain terms only: a record is written over the version read (false: another writer won the race),
 * a use only when it is newer than the one kept, and a task's claim is renewed, counted on and fenced by
 * its token ('fenced': the claim lapsed and was taken over), never how a store found out. Uses are kept
 * apart from the record, so that a worker's report never races the reconciler's write of the record.
 * Adapters: ./store-dynamo.ts (the fleetscope table), ./store-memory.ts (in process, for unit tests).
 */
import type { StoredDeclaration } from './declaration.js';
import type { FeatureRecord, FeatureRef, Use } from './model.js';

export interface Mirror {
  version: number;
  at: number;
  /** Why the last attempt to write the cluster's Feature objects failed. */
  error?: string;
}

/** One feature of one cluster: the record, its uses, and what was last written into the cluster. */
export interface FeatureView {
  record?: FeatureRecord;
  uses: Use[];
  mirror?: Mirror;
}

/** A write on a task's claim: made while the token held it, or refused ('fenced': the claim is another's). */
export type ClaimWrite = 'held' | 'fenced';

export interface FeatureStore {
  get(cluster: string, ref: FeatureRef): Promise<FeatureRecord | undefined>;
  /** A feature's record, uses (by component) and mirror marker, read together. */
  view(cluster: string, ref: FeatureRef): Promise<FeatureView>;
  /** Every feature of a cluster, by "<ns>/<name>". */
  clusterViews(cluster: string): Promise<Map<string, FeatureView>>;
  /** Every Feature record of the fleet (may lag the records: re-read before acting). */
  listAll(): Promise<FeatureRecord[]>;
  /** Stores a new record; false when one exists (another reconciler announced it first). */
  create(record: FeatureRecord): Promise<boolean>;
  /** Stores `next` if the stored version is still `expected`; false when someone else wrote first. */
  save(next: FeatureRecord, expected: number): Promise<boolean>;
  /**
   * Renews the claim `token` holds on the first task until `until`, if it still holds it at `now` (not
   * lapsed, not taken over): the fence every cluster write of the task passes, and its heartbeat. A
   * changed record gets a new version, so a record read before it is not written back over it.
   */
  renewClaim(
    cluster: string,
    ref: FeatureRef,
    token: string,
    now: number,
    until: number,
  ): Promise<ClaimWrite>;
  /**
   * Adds `n` writes to the first task while the claim `token` is on it (lapsed or not: the writes were
   * made), as each is made, so that an attempt killed midway leaves its writes counted.
   */
  countWrites(cluster: string, ref: FeatureRef, token: string, n: number, now: number): Promise<ClaimWrite>;
  /** Records a use unless a newer one of the same component is kept (a later epoch, or time). */
  reportUse(cluster: string, ref: FeatureRef, use: Use): Promise<boolean>;
  /**
   * Issues the next uses epoch after `previous`, while the claim `token` holds the first task (a wait for
   * uses), and stores it with the clearing's time as that task's progress in the same write: an attempt
   * that dies after it leaves the wait to resume, not to clear (and write) again. The new epoch, or
   * 'fenced' when the claim is no longer this one (or the epoch moved on).
   */
  issueEpoch(
    cluster: string,
    ref: FeatureRef,
    token: string,
    previous: number | undefined,
    now: number,
  ): Promise<number | 'fenced'>;
  /**
   * Forgets the uses that do not echo `epoch`; a report echoing it (made after the epoch was issued)
   * survives, whenever it came. Returns how many went.
   */
  clearUses(cluster: string, ref: FeatureRef, uses: readonly Use[], epoch: number): Promise<number>;
  putMirror(cluster: string, ref: FeatureRef, mirror: Mirror): Promise<void>;
  /** Registers (or replaces) a third-party feature's declaration. */
  putDeclaration(d: StoredDeclaration): Promise<void>;
  /**
   * Registers a file's declarations all or none, each on the one read before (`previous`, absent when it
   * was not registered): false when another registration or an unregister came in between, and what
   * this one had written is put back as it was.
   */
  putDeclarations(
    ds: readonly StoredDeclaration[],
    previous: ReadonlyMap<string, StoredDeclaration>,
  ): Promise<boolean>;
  /** Removes a declaration as it was read (its registeredAt); false when it changed or is gone. */
  deleteDeclaration(ref: FeatureRef, registeredAt: number): Promise<boolean>;
  /**
   * Forgets one feature of a cluster (its record, uses and mirror marker), the record only while it is
   * still the version read and Off: false, and nothing forgotten, when it changed meanwhile.
   */
  forgetFeature(cluster: string, record: FeatureRecord): Promise<boolean>;
  listDeclarations(): Promise<StoredDeclaration[]>;
  /** Forgets every feature item of a cluster (deregistered); how many there were. */
  forgetCluster(cluster: string): Promise<number>;
}
