/**
 * The node scope store's DynamoDB adapter (the port and its outcomes: ./store.ts). Node scope's items
 * in the fleetscope table (keys from shared/platform/table.ts). Every write is a single-item
 * conditional write (a refused condition is the port's lost race); a fold (a new base) is committed by one conditional update of the
 * DaemonSet's head, so a crash at any point leaves either the old base or the new one, never a mix.
 *
 *   pk = CLUSTER#<c>  sk = nodescope#cluster                the last cycle: summary, refused targets
 *   pk = CLUSTER#<c>  sk = nodescope#ds#<ns>/<ds>           head: base generation, chunks, DaemonSet-wide
 *                                                           recommendation, fold bookkeeping, version
 *                                                           (gsi1pk = NODESCOPE, gsi1sk = <c>#<ns>/<ds>)
 *   pk = CLUSTER#<c>  sk = nodescope#base#<ns>/<ds>#<gen>#<k>  chunk k of base generation gen: packed,
 *                                                           compressed node states and recommendations
 *                                                           (immutable; up to ~350 KB each)
 *   pk = CLUSTER#<c>  sk = nodescope#log#<ns>/<ds>#<cycle>  one cycle's samples since the base (immutable)
 *   pk = CLUSTER#<c>  sk = nodescope#apply#<ns>/<ds>        resize records of pods refused or pending,
 *                                                           and what each node's pod requests (packed:
 *                                                           JSON, raw DEFLATE, in requestsZ), what the
 *                                                           guards held back (guards/), and the rollout
 *                                                           (rollout.ts: per node the previous size and
 *                                                           when downsized, canary wave, hold, reverts;
 *                                                           packed alike in rolloutZ)
 *   pk = CLUSTER#<c>  sk = nodescope#history#<ns>/<ds>#<node>  the node's resize history (guards/history.ts:
 *                                                           bounded entries, a TTL past the newest)
 *
 * Immutable items carry a TTL (expiresAt) as a safety net: chunks and logs of a DaemonSet that is no
 * longer processed expire on their own, after upstream's 8-day state expiry has passed.
 */
import { BatchGetCommand, BatchWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  type Condition,
  clusterPk,
  gsi1Of,
  IF_ABSENT,
  ifVersion,
  keyOf,
  SK,
  Table,
  TTL,
  withoutKeys,
} from '../platform/dynamo.js';
import { type BaseCache, processBases } from './base-cache.js';
import { compress, decompress } from './codec.js';
import { HISTORY_TTL_MS } from './guards/history.js';
import { type KeptRequests, type PodRequests, processRequests } from './pod-requests.js';
import type { RolloutRecord } from './rollout.js';
import {
  type ApplyRecord,
  type ApplyWrite,
  type ClusterRecord,
  type DsHead,
  dsKeyOf,
  type NodeHistory,
  type NodeScopeStore,
  type StoredLog,
  type StoreStats,
  VersionConflict,
} from './store.js';
import { approxSize, countRead, countWrite, emptyStats } from './store-stats.js';

export const CLUSTER_SK = 'nodescope#cluster';
export const HEAD_PREFIX = 'nodescope#ds#';
const headSk = (ds: string) => `${HEAD_PREFIX}${ds}`;
const baseSk = (ds: string, gen: number, k: number) =>
  `nodescope#base#${ds}#${String(gen).padStart(10, '0')}#${String(k).padStart(4, '0')}`;
const LOG_PREFIX = 'nodescope#log#';
const logPrefix = (ds: string) => `${LOG_PREFIX}${ds}#`;
const applySk = (ds: string) => `nodescope#apply#${ds}`;
const HISTORY_PREFIX = 'nodescope#history#';
const historySk = (ds: string, node: string) => `${HISTORY_PREFIX}${ds}#${node}`;
export const HEADS_GSI = 'NODESCOPE';

const DAY_S = 86_400;
/** Chunks outlive upstream's 8-day expiry of a state without samples before the TTL removes them. */
const CHUNK_TTL_S = 10 * DAY_S;
const LOG_TTL_S = 3 * DAY_S;

const asBytes = (v: unknown): Uint8Array => {
  if (v instanceof Uint8Array) return v;
  throw new Error('expected a binary attribute');
};

/** The node scope store on the fleetscope table: conditional writes are its way to tell a lost race. */
export class DynamoNodeScopeStore implements NodeScopeStore {
  readonly stats: StoreStats = emptyStats();

  private readonly items: Table;

  /**
   * @param bases the decoded bases kept between cycles (base-cache.ts): the process's by default, as a
   *   warm container keeps them; a test gives its own.
   * @param requests the apply items' requests kept unpacked (pod-requests.ts), likewise.
   */
  constructor(
    db: DynamoDBDocumentClient,
    table: string,
    readonly bases: BaseCache = processBases,
    readonly requests: KeptRequests = processRequests,
  ) {
    this.items = new Table(db, table);
  }

  private countWrite(bytes: number): void {
    countWrite(this.stats, bytes);
  }

  private countRead(bytes: number, consistent: boolean): void {
    countRead(this.stats, bytes, consistent);
  }

  /** A put, counted when written; false when its condition did not hold. */
  private async put(
    item: Record<string, unknown>,
    condition: Condition | undefined,
    bytes: number,
  ): Promise<boolean> {
    const written = await this.items.put(item, condition);
    if (written) this.countWrite(bytes);
    return written;
  }

  /** A read of one item, counted. */
  private async get(
    key: Record<string, unknown>,
    consistent: boolean,
  ): Promise<Record<string, unknown> | undefined> {
    const item = await this.items.get(key, { consistent });
    this.countRead(approxSize(item), consistent);
    return item;
  }

  /** A delete, counted. */
  private async delete(key: Record<string, unknown>): Promise<void> {
    await this.items.delete(key);
    this.countWrite(1);
  }

  async getCluster(cluster: string): Promise<ClusterRecord | undefined> {
    const item = await this.get(keyOf(clusterPk(cluster), CLUSTER_SK), false);
    return item ? withoutKeys<ClusterRecord>(item) : undefined;
  }

  async putCluster(rec: ClusterRecord): Promise<void> {
    const item = { ...keyOf(clusterPk(rec.cluster), CLUSTER_SK), ...rec };
    await this.put(item, undefined, approxSize(item));
  }

  async getHead(cluster: string, ds: string): Promise<DsHead | undefined> {
    const item = await this.get(keyOf(clusterPk(cluster), headSk(ds)), true);
    return item ? withoutKeys<DsHead>(item) : undefined;
  }

  /** Heads of one cluster (without their chunks or logs). */
  async listHeads(cluster: string): Promise<DsHead[]> {
    const items = await this.items.query(clusterPk(cluster), { beginsWith: HEAD_PREFIX });
    for (const item of items) this.countRead(approxSize(item), true);
    return items.map((item) => withoutKeys<DsHead>(item));
  }

  /** Every head of the fleet (sparse index). */
  async listAllHeads(): Promise<DsHead[]> {
    return (await this.items.queryGsi1(HEADS_GSI)).map((item) => withoutKeys<DsHead>(item));
  }

  /** Writes the head if its stored version is still `expected` (0: it must not exist). */
  async putHead(head: DsHead, expected: number): Promise<void> {
    const ds = dsKeyOf(head.namespace, head.name);
    const item = {
      ...keyOf(clusterPk(head.cluster), headSk(ds)),
      ...gsi1Of(HEADS_GSI, `${head.cluster}#${ds}`),
      ...head,
    };
    if (!(await this.put(item, expected === 0 ? IF_ABSENT : ifVersion(expected), approxSize(item))))
      throw new VersionConflict(`the head of ${ds} changed underneath`);
  }

  async deleteHead(cluster: string, ds: string): Promise<void> {
    await this.delete(keyOf(clusterPk(cluster), headSk(ds)));
  }

  /** Writes a chunk of a new generation; false when it exists (another invocation is folding). */
  async putChunk(
    cluster: string,
    ds: string,
    gen: number,
    k: number,
    body: Uint8Array,
    now: number,
  ): Promise<boolean> {
    const item = {
      ...keyOf(clusterPk(cluster), baseSk(ds, gen, k)),
      data: body,
      [TTL]: Math.floor(now / 1000) + CHUNK_TTL_S,
    };
    return this.put(item, IF_ABSENT, body.length + 120);
  }

  /**
   * The chunks of a generation, in order. Chunks are immutable, so eventually consistent reads are safe:
   * one not yet visible is read again with a consistent read. Undefined when a chunk is gone (a newer
   * fold deleted the generation meanwhile).
   */
  async getChunks(
    cluster: string,
    ds: string,
    gen: number,
    count: number,
  ): Promise<Uint8Array[] | undefined> {
    const keys = Array.from({ length: count }, (_, k) => keyOf(clusterPk(cluster), baseSk(ds, gen, k)));
    const found = new Map<string, Uint8Array>();
    for (let i = 0; i < keys.length; i += 100) {
      let request: Record<string, unknown>[] | undefined = keys.slice(i, i + 100);
      for (let attempt = 0; request && request.length > 0 && attempt < 5; attempt++) {
        const out: {
          Responses?: Record<string, Record<string, unknown>[]>;
          UnprocessedKeys?: Record<string, { Keys?: Record<string, unknown>[] }>;
        } = await this.items.db.send(
          new BatchGetCommand({ RequestItems: { [this.items.name]: { Keys: request } } }),
        );
        for (const item of out.Responses?.[this.items.name] ?? []) {
          const data = asBytes(item.data);
          this.countRead(data.length + 120, false);
          found.set(item[SK] as string, data);
        }
        request = out.UnprocessedKeys?.[this.items.name]?.Keys;
      }
    }
    const out: Uint8Array[] = [];
    for (const key of keys) {
      let data = found.get(key[SK] as string);
      if (!data) {
        const got = await this.items.get(key, { consistent: true });
        if (!got) return undefined;
        data = asBytes(got.data);
        this.countRead(data.length + 120, true);
      }
      out.push(data);
    }
    return out;
  }

  async deleteChunks(cluster: string, ds: string, gen: number, count: number): Promise<void> {
    await this.deleteMany(
      Array.from({ length: count }, (_, k) => keyOf(clusterPk(cluster), baseSk(ds, gen, k))),
    );
  }

  /**
   * Unconditional deletes (a fold's old chunks and replayed log), 25 to a request instead of one each;
   * what the table leaves unprocessed is sent again, then deleted one by one.
   */
  private async deleteMany(keys: readonly Record<string, unknown>[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 25) {
      let left: Record<string, unknown>[] = keys.slice(i, i + 25);
      for (let attempt = 0; left.length > 1 && attempt < 3; attempt++) {
        const out = await this.items.db.send(
          new BatchWriteCommand({
            RequestItems: { [this.items.name]: left.map((Key) => ({ DeleteRequest: { Key } })) },
          }),
        );
        const unprocessed = out.UnprocessedItems?.[this.items.name] ?? [];
        for (let n = left.length - unprocessed.length; n > 0; n--) this.countWrite(1);
        left = unprocessed.flatMap((r) => (r.DeleteRequest?.Key ? [r.DeleteRequest.Key] : []));
      }
      for (const key of left) await this.delete(key);
    }
  }

  /** Appends a cycle's entry; false when the cycle was already written (a redelivered event). */
  async putLog(cluster: string, ds: string, cycle: string, body: Uint8Array, now: number): Promise<boolean> {
    const item = {
      ...keyOf(clusterPk(cluster), `${logPrefix(ds)}${cycle}`),
      data: body,
      [TTL]: Math.floor(now / 1000) + LOG_TTL_S,
    };
    return this.put(item, IF_ABSENT, body.length + 100);
  }

  /** Log entries after `after` (a cycle key), in cycle order. */
  async listLogs(cluster: string, ds: string, after: string): Promise<StoredLog[]> {
    const prefix = logPrefix(ds);
    const items = await this.items.query(clusterPk(cluster), {
      between: [`${prefix}${after}\u0000`, `${prefix}\uffff`],
    });
    const out: { cycle: string; data: Uint8Array }[] = [];
    for (const item of items) {
      const data = asBytes(item.data);
      this.countRead(data.length + 100, true);
      out.push({ cycle: (item[SK] as string).slice(prefix.length), data });
    }
    return out.filter((l) => l.cycle > after);
  }

  /**
   * Every DaemonSet's log entries of one cluster in one query (a cycle needs all of them: one request
   * instead of one per DaemonSet), by DaemonSet, each in cycle order.
   */
  async listClusterLogs(cluster: string): Promise<Map<string, StoredLog[]>> {
    const items = await this.items.query(clusterPk(cluster), { beginsWith: LOG_PREFIX });
    const out = new Map<string, StoredLog[]>();
    for (const item of items) {
      const sk = (item[SK] as string).slice(LOG_PREFIX.length);
      const cut = sk.lastIndexOf('#');
      const data = asBytes(item.data);
      this.countRead(data.length + 100, true);
      const ds = sk.slice(0, cut);
      const logs = out.get(ds) ?? [];
      logs.push({ cycle: sk.slice(cut + 1), data });
      out.set(ds, logs);
    }
    return out;
  }

  async deleteLogs(cluster: string, ds: string, cycles: readonly string[]): Promise<void> {
    await this.deleteMany(cycles.map((c) => keyOf(clusterPk(cluster), `${logPrefix(ds)}${c}`)));
  }

  async getApply(cluster: string, ds: string): Promise<ApplyRecord> {
    return applyOf(await this.get(keyOf(clusterPk(cluster), applySk(ds)), true), this.requests);
  }

  /**
   * Several DaemonSets' apply items in one consistent BatchGetItem per 100 (a cycle needs each of its
   * DaemonSets' items: one request instead of one each); unprocessed keys are asked again, then read
   * one by one.
   */
  async getApplies(cluster: string, dss: readonly string[]): Promise<Map<string, ApplyRecord>> {
    const found = new Map<string, Record<string, unknown>>();
    for (let i = 0; i < dss.length; i += 100) {
      let keys: Record<string, unknown>[] = dss
        .slice(i, i + 100)
        .map((ds) => keyOf(clusterPk(cluster), applySk(ds)));
      for (let attempt = 0; keys.length > 0 && attempt < 3; attempt++) {
        const out = await this.items.db.send(
          new BatchGetCommand({ RequestItems: { [this.items.name]: { Keys: keys, ConsistentRead: true } } }),
        );
        for (const item of out.Responses?.[this.items.name] ?? []) {
          this.countRead(approxSize(item), true);
          found.set(item[SK] as string, item);
        }
        keys = out.UnprocessedKeys?.[this.items.name]?.Keys ?? [];
      }
      for (const key of keys) {
        const item = await this.get(key, true);
        if (item) found.set(key[SK] as string, item);
      }
    }
    // An absent item costs a read all the same.
    for (const ds of dss) if (!found.has(applySk(ds))) this.countRead(0, true);
    return new Map(dss.map((ds) => [ds, applyOf(found.get(applySk(ds)), this.requests)]));
  }

  /**
   * Writes the resize records if nobody else did since `prev` was read. The requests go packed: as a
   * map, 5,000 nodes' requests pass DynamoDB's 400 KB item limit (and cost a map attribute per node
   * to marshal); compressed they are a few tens of KB.
   */
  async putApply(cluster: string, ds: string, apply: ApplyWrite, prev: number): Promise<boolean> {
    const { requests, records, guards, rollout } = apply;
    const json = requests && Buffer.from(JSON.stringify(requests), 'utf8');
    const requestsZ = json && compress(json);
    // Packed: 5,000 nodes downsized within the revert window, their sizes before and after, are ~1 MB of JSON.
    const rolloutZ = rollout && compress(Buffer.from(JSON.stringify(rollout), 'utf8'));
    const item = {
      ...keyOf(clusterPk(cluster), applySk(ds)),
      records,
      ...(requestsZ ? { requestsZ } : {}),
      ...(guards ? { guards } : {}),
      ...(rolloutZ ? { rolloutZ } : {}),
      version: prev + 1,
    };
    const written = await this.put(item, prev === 0 ? IF_ABSENT : ifVersion(prev), approxSize(item));
    // The next cycle reads it back: kept as written.
    if (written && requests && requestsZ) this.requests.keep(requestsZ, requests, json.length);
    return written;
  }

  async deleteApply(cluster: string, ds: string): Promise<void> {
    await this.delete(keyOf(clusterPk(cluster), applySk(ds)));
  }

  async getHistory(cluster: string, ds: string, node: string): Promise<NodeHistory> {
    const item = await this.get(keyOf(clusterPk(cluster), historySk(ds, node)), true);
    return item ? withoutKeys<NodeHistory>(item) : { node, entries: [], version: 0 };
  }

  /** Every node's history of a DaemonSet, in node order. */
  async listHistory(cluster: string, ds: string): Promise<NodeHistory[]> {
    const items = await this.items.query(clusterPk(cluster), { beginsWith: `${HISTORY_PREFIX}${ds}#` });
    for (const item of items) this.countRead(approxSize(item), true);
    return items.map((item) => withoutKeys<NodeHistory>(item));
  }

  /** Writes a node's history if nobody else did since `prev` was read; it expires a TTL past `now`. */
  async putHistory(
    cluster: string,
    ds: string,
    h: Omit<NodeHistory, 'version'>,
    prev: number,
    now: number,
  ): Promise<boolean> {
    const item = {
      ...keyOf(clusterPk(cluster), historySk(ds, h.node)),
      node: h.node,
      entries: h.entries,
      version: prev + 1,
      [TTL]: Math.floor((now + HISTORY_TTL_MS) / 1000),
    };
    return this.put(item, prev === 0 ? IF_ABSENT : ifVersion(prev), approxSize(item));
  }
}

function applyOf(item: Record<string, unknown> | undefined, kept: KeptRequests): ApplyRecord {
  if (!item) return { records: {}, version: 0 };
  const { requestsZ, rolloutZ, ...rest } = withoutKeys<
    ApplyRecord & { requestsZ?: unknown; rolloutZ?: unknown }
  >(item);
  return {
    ...rest,
    ...(requestsZ === undefined ? {} : { requests: unpackRequests(asBytes(requestsZ), kept) }),
    ...(rolloutZ === undefined ? {} : { rollout: unpackRollout(asBytes(rolloutZ)) }),
  };
}

/** The rollout packed in `b` (small but for a whole DaemonSet downsized within the window). */
export function unpackRollout(b: Uint8Array): RolloutRecord {
  return JSON.parse(Buffer.from(decompress(b)).toString('utf8')) as RolloutRecord;
}

/** The requests packed in `b`: parsed once per process while kept (KeptRequests). */
function unpackRequests(b: Uint8Array, kept: KeptRequests): PodRequests {
  const hit = kept.get(b);
  if (hit) return hit;
  const json = decompress(b);
  return kept.keep(b, JSON.parse(Buffer.from(json).toString('utf8')) as PodRequests, json.length);
}
