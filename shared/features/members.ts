/**
 * The live set of scheduled reconcilers (finding 5 of issue 16): each announces itself at every pass
 * with a heartbeat item, a conditional write that never goes back in time, alive for ALIVE_MS (a claim
 * period less a pass) and kept a while longer by a TTL. The hash ring is the reconcilers alive now, so a
 * reconciler that stops announcing (its schedule disabled, its invocations failing) has its share taken
 * over by the others within one claim period, and one that comes back takes it back at once.
 *
 *   pk = FEATURES  sk = reconciler#<id>   at, until, TTL
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { clusterPk, keyOf, SK, Table, TTL } from '../platform/dynamo.js';
import { CLAIM_MS } from './machine.js';
import { FEATURES_PK } from './store-dynamo.js';

const PREFIX = 'reconciler#';
/** The passes' period (the schedules run every 2 minutes). */
export const PASS_MS = 2 * 60_000;
/**
 * A heartbeat keeps its reconciler alive this long: more than a pass (a live one never drops out), and
 * short enough that the others' next pass after it lapses falls within one claim period.
 */
export const ALIVE_MS = CLAIM_MS - PASS_MS;
/** A heartbeat item outlives its claim period by this long, then DynamoDB's TTL removes it. */
const KEEP_MS = 24 * 60 * 60_000;

/**
 * One pass over a cluster at a time, whoever runs it (the scheduled owner, or the event-triggered
 * function acting on an event): a lease item per cluster, taken with a conditional write (absent,
 * lapsed, or already this holder's) and given back after the pass. The event-triggered function that
 * finds the owner's pass under way leaves the cluster to it instead of racing it.
 *
 *   pk = CLUSTER#<c>  sk = features#pass   by, until
 */
export class ClusterPass {
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

  /** Runs `fn` holding the cluster's pass; undefined (not run) when another's pass holds it. */
  async run<T>(cluster: string, by: string, fn: () => Promise<T>): Promise<T | undefined> {
    if (!(await this.take(cluster, by))) return undefined;
    try {
      return await fn();
    } finally {
      await this.release(cluster, by);
    }
  }
}

export class ReconcilerRing {
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
