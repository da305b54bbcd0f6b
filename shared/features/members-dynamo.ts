/**
 * The DynamoDB adapter of the reconcilers' membership and the clusters' passes (the ports:
 * ./members.ts).
 *
 *   pk = FEATURES     sk = reconciler#<id>   at, until, TTL   (a reconciler's heartbeat)
 *   pk = CLUSTER#<c>  sk = features#pass     by, until        (a cluster's pass)
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { clusterPk, keyOf, SK, Table, TTL } from '../platform/dynamo.js';
import { CLAIM_MS } from './machine.js';
import { ALIVE_MS, type ClusterPass, holdingPass, type ReconcilerRing } from './members.js';
import { FEATURES_PK } from './store-dynamo.js';

const PREFIX = 'reconciler#';
/** A heartbeat item outlives its claim period by this long, then DynamoDB's TTL removes it. */
const KEEP_MS = 24 * 60 * 60_000;

/** A cluster's pass: a lease item taken with a conditional write (absent, lapsed, or already this holder's). */
export class DynamoClusterPass implements ClusterPass {
  private readonly table: Table;

  constructor(
    db: DynamoDBDocumentClient,
    tableName: string,
    private readonly now: () => number,
    private readonly leaseMs = CLAIM_MS,
  ) {
    this.table = new Table(db, tableName);
  }

  private key = (cluster: string) => keyOf(clusterPk(cluster), 'features#pass');

  /** Takes the cluster's pass for `by`; false while another's pass holds it. */
  take(cluster: string, by: string): Promise<boolean> {
    const now = this.now();
    return this.table.put(
      { ...this.key(cluster), by, until: now + this.leaseMs, [TTL]: Math.ceil((now + KEEP_MS) / 1000) },
      {
        ConditionExpression: 'attribute_not_exists(#by) OR #by = :by OR #until <= :now',
        ExpressionAttributeNames: { '#by': 'by', '#until': 'until' },
        ExpressionAttributeValues: { ':by': by, ':now': now },
      },
    );
  }

  /** Gives the pass back (if still held by `by`). */
  async release(cluster: string, by: string): Promise<void> {
    await this.table.delete(this.key(cluster), {
      ConditionExpression: '#by = :by',
      ExpressionAttributeNames: { '#by': 'by' },
      ExpressionAttributeValues: { ':by': by },
    });
  }

  run<T>(cluster: string, by: string, fn: () => Promise<T>): Promise<T | undefined> {
    return holdingPass(this, cluster, by, fn);
  }
}

export class DynamoReconcilerRing implements ReconcilerRing {
  private readonly table: Table;

  constructor(
    db: DynamoDBDocumentClient,
    tableName: string,
    readonly id: string,
    private readonly now: () => number,
    private readonly aliveMs = ALIVE_MS,
  ) {
    this.table = new Table(db, tableName);
  }

  /** Announces this reconciler alive until now + one claim period; false if a later heartbeat is stored. */
  announce(): Promise<boolean> {
    const at = this.now();
    return this.table.put(
      {
        ...keyOf(FEATURES_PK, `${PREFIX}${this.id}`),
        id: this.id,
        at,
        until: at + this.aliveMs,
        [TTL]: Math.ceil((at + this.aliveMs + KEEP_MS) / 1000),
      },
      {
        ConditionExpression: 'attribute_not_exists(#at) OR #at <= :at',
        ExpressionAttributeNames: { '#at': 'at' },
        ExpressionAttributeValues: { ':at': at },
      },
    );
  }

  /** The reconcilers alive now (their heartbeat's period not over), by id. */
  async live(): Promise<string[]> {
    const now = this.now();
    const items = await this.table.query(FEATURES_PK, { beginsWith: PREFIX });
    return items
      .filter((i) => Number(i.until) > now)
      .map((i) => String(i[SK]).slice(PREFIX.length))
      .sort();
  }
}
