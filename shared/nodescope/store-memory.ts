/**
 * The node scope store in process: what unit tests run on, no DynamoDB-protocol server. Its conditions
 * are the DynamoDB adapter's (test/nodescope/store-contract.test.ts runs one contract on both): a head
 * is written only over the version read (else VersionConflict), a chunk or a log entry only where none
 * is, the applied sizes and a history only over the version read; lists come back in their key order.
 * Records are copied in and out as a serialized store would (undefined fields dropped, nothing shared
 * with the caller); nothing expires (the table's TTL is a safety net no unit test waits for). Usage is
 * counted as the DynamoDB adapter counts it (./store-stats.ts), sizes approximated alike.
 */
import { BaseCache } from './base-cache.js';
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

/** A record as it would come back from a store: a copy, without undefined fields. */
const stored = <T>(v: T): T => JSON.parse(JSON.stringify(v));
const byKey = <V>(m: ReadonlyMap<string, V>): [string, V][] =>
  [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** One cluster's records, each map by DaemonSet key ("<ns>/<name>"). */
interface ClusterItems {
  record?: ClusterRecord;
  heads: Map<string, DsHead>;
  /** By "<ds>#<gen>#<k>". */
  chunks: Map<string, Uint8Array>;
  /** By DaemonSet, then cycle. */
  logs: Map<string, Map<string, Uint8Array>>;
  applies: Map<string, ApplyRecord>;
  /** By DaemonSet, then node. */
  history: Map<string, Map<string, NodeHistory>>;
}

const chunkKey = (ds: string, gen: number, k: number) => `${ds}#${gen}#${k}`;
const inner = <V>(m: Map<string, Map<string, V>>, key: string): Map<string, V> => {
  const known = m.get(key);
  if (known) return known;
  const made = new Map<string, V>();
  m.set(key, made);
  return made;
};

export class MemoryNodeScopeStore implements NodeScopeStore {
  readonly stats: StoreStats = emptyStats();
  private readonly clusters = new Map<string, ClusterItems>();

  /** @param bases the decoded bases kept between cycles: this store's own by default. */
  constructor(readonly bases: BaseCache = new BaseCache()) {}

  private of(cluster: string): ClusterItems {
    const known = this.clusters.get(cluster);
    if (known) return known;
    const made: ClusterItems = {
      heads: new Map(),
      chunks: new Map(),
      logs: new Map(),
      applies: new Map(),
      history: new Map(),
    };
    this.clusters.set(cluster, made);
    return made;
  }

  /** A record read back: counted, and copied. */
  private read<T>(v: T | undefined, consistent = true): T | undefined {
    countRead(this.stats, approxSize(v as Record<string, unknown> | undefined), consistent);
    return v === undefined ? undefined : stored(v);
  }

  private wrote<T>(v: T): T {
    const copy = stored(v);
    countWrite(this.stats, approxSize(copy as Record<string, unknown>));
    return copy;
  }

  private readBytes(b: Uint8Array, consistent: boolean): Uint8Array {
    countRead(this.stats, b.length + 100, consistent);
    return Uint8Array.from(b);
  }

  async getCluster(cluster: string): Promise<ClusterRecord | undefined> {
    return this.read(this.clusters.get(cluster)?.record, false);
  }

  async putCluster(rec: ClusterRecord): Promise<void> {
    this.of(rec.cluster).record = this.wrote(rec);
  }

  async getHead(cluster: string, ds: string): Promise<DsHead | undefined> {
    return this.read(this.clusters.get(cluster)?.heads.get(ds));
  }

  async listHeads(cluster: string): Promise<DsHead[]> {
    const heads = byKey(this.clusters.get(cluster)?.heads ?? new Map<string, DsHead>());
    return heads.map(([, h]) => this.read(h) as DsHead);
  }

  async listAllHeads(): Promise<DsHead[]> {
    const all = new Map<string, DsHead>();
    for (const [cluster, items] of this.clusters)
      for (const [ds, h] of items.heads) all.set(`${cluster}#${ds}`, h);
    return byKey(all).map(([, h]) => stored(h));
  }

  async putHead(head: DsHead, expected: number): Promise<void> {
    const ds = dsKeyOf(head.namespace, head.name);
    const heads = this.of(head.cluster).heads;
    const now = heads.get(ds);
    if (expected === 0 ? now !== undefined : now?.version !== expected)
      throw new VersionConflict(`the head of ${ds} changed underneath`);
    heads.set(ds, this.wrote(head));
  }

  async deleteHead(cluster: string, ds: string): Promise<void> {
    this.clusters.get(cluster)?.heads.delete(ds);
    countWrite(this.stats, 1);
  }

  async putChunk(
    cluster: string,
    ds: string,
    gen: number,
    k: number,
    body: Uint8Array,
    _now: number,
  ): Promise<boolean> {
    const chunks = this.of(cluster).chunks;
    if (chunks.has(chunkKey(ds, gen, k))) return false;
    chunks.set(chunkKey(ds, gen, k), Uint8Array.from(body));
    countWrite(this.stats, body.length + 120);
    return true;
  }

  async getChunks(
    cluster: string,
    ds: string,
    gen: number,
    count: number,
  ): Promise<Uint8Array[] | undefined> {
    const chunks = this.clusters.get(cluster)?.chunks;
    const out: Uint8Array[] = [];
    for (let k = 0; k < count; k++) {
      const data = chunks?.get(chunkKey(ds, gen, k));
      if (!data) return undefined;
      out.push(this.readBytes(data, false));
    }
    return out;
  }

  async deleteChunks(cluster: string, ds: string, gen: number, count: number): Promise<void> {
    const chunks = this.clusters.get(cluster)?.chunks;
    for (let k = 0; k < count; k++) {
      chunks?.delete(chunkKey(ds, gen, k));
      countWrite(this.stats, 1);
    }
  }

  async putLog(cluster: string, ds: string, cycle: string, body: Uint8Array, _now: number): Promise<boolean> {
    const logs = inner(this.of(cluster).logs, ds);
    if (logs.has(cycle)) return false;
    logs.set(cycle, Uint8Array.from(body));
    countWrite(this.stats, body.length + 100);
    return true;
  }

  async listLogs(cluster: string, ds: string, after: string): Promise<StoredLog[]> {
    const logs = this.clusters.get(cluster)?.logs.get(ds) ?? new Map<string, Uint8Array>();
    return byKey(logs)
      .filter(([cycle]) => cycle > after)
      .map(([cycle, data]) => ({ cycle, data: this.readBytes(data, true) }));
  }

  async listClusterLogs(cluster: string): Promise<Map<string, StoredLog[]>> {
    const out = new Map<string, StoredLog[]>();
    const all = this.clusters.get(cluster)?.logs ?? new Map<string, Map<string, Uint8Array>>();
    // In the table's key order ("<ds>#<cycle>"), as one query over the cluster returns them.
    const entries: [string, [string, string, Uint8Array]][] = [];
    for (const [ds, logs] of all)
      for (const [cycle, data] of logs) entries.push([`${ds}#${cycle}`, [ds, cycle, data]]);
    for (const [, [ds, cycle, data]] of byKey(new Map(entries))) {
      const list = out.get(ds) ?? [];
      list.push({ cycle, data: this.readBytes(data, true) });
      out.set(ds, list);
    }
    return out;
  }

  async deleteLogs(cluster: string, ds: string, cycles: readonly string[]): Promise<void> {
    const logs = this.clusters.get(cluster)?.logs.get(ds);
    for (const c of cycles) {
      logs?.delete(c);
      countWrite(this.stats, 1);
    }
  }

  async getApply(cluster: string, ds: string): Promise<ApplyRecord> {
    return this.read(this.clusters.get(cluster)?.applies.get(ds)) ?? { records: {}, version: 0 };
  }

  async getApplies(cluster: string, dss: readonly string[]): Promise<Map<string, ApplyRecord>> {
    const out = new Map<string, ApplyRecord>();
    for (const ds of dss) out.set(ds, await this.getApply(cluster, ds));
    return out;
  }

  async putApply(cluster: string, ds: string, apply: ApplyWrite, prev: number): Promise<boolean> {
    const applies = this.of(cluster).applies;
    if ((applies.get(ds)?.version ?? 0) !== prev) return false;
    const { records, requests, guards, rollout } = apply;
    applies.set(ds, this.wrote({ records, requests, guards, rollout, version: prev + 1 }));
    return true;
  }

  async deleteApply(cluster: string, ds: string): Promise<void> {
    this.clusters.get(cluster)?.applies.delete(ds);
    countWrite(this.stats, 1);
  }

  async getHistory(cluster: string, ds: string, node: string): Promise<NodeHistory> {
    const h = this.clusters.get(cluster)?.history.get(ds)?.get(node);
    return this.read(h) ?? { node, entries: [], version: 0 };
  }

  async listHistory(cluster: string, ds: string): Promise<NodeHistory[]> {
    const nodes = this.clusters.get(cluster)?.history.get(ds) ?? new Map<string, NodeHistory>();
    return byKey(nodes).map(([, h]) => this.read(h) as NodeHistory);
  }

  async putHistory(
    cluster: string,
    ds: string,
    h: Omit<NodeHistory, 'version'>,
    prev: number,
    _now: number,
  ): Promise<boolean> {
    const nodes = inner(this.of(cluster).history, ds);
    if ((nodes.get(h.node)?.version ?? 0) !== prev) return false;
    nodes.set(h.node, this.wrote({ node: h.node, entries: h.entries, version: prev + 1 }));
    return true;
  }
}
