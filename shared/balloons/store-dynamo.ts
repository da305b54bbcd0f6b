/**
 * The balloons' store in the fleetscope table (keys from shared/platform/table.ts): the only balloons
 * module that speaks DynamoDB.
 *
 *   pk = CLUSTER#<c>  sk = balloons#policy#<name>   a node pool's policy (operator input)
 *   pk = CLUSTER#<c>  sk = balloons#request#<node>  an explicit size for one node (operator input)
 *   pk = CLUSTER#<c>  sk = balloons#state           every managed node's state after the last cycle,
 *                                                   compressed; written once per cycle, conditionally
 *                                                   on its version (two cycles never both win)
 *
 * One query (sk begins with "balloons#") reads all of a cluster's balloon items: the cycle costs one
 * read and one write whatever the number of nodes. A refused condition is the port's outcome
 * ('lost-race', 'absent', 'superseded'); any other failure is thrown as the SDK threw it.
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  clusterPk,
  IF_ABSENT,
  IF_PRESENT,
  type Item,
  ifVersion,
  keyOf,
  SK,
  Table,
  withoutKeys,
} from '../platform/dynamo.js';
import type { ExplicitRequest } from './desired.js';
import type { BalloonPolicy } from './policy.js';
import type {
  BalloonItems,
  BalloonStore,
  ClusterBalloons,
  Removal,
  RequestRemoval,
  StateWrite,
} from './store.js';

const PREFIX = 'balloons#';
const POLICY = `${PREFIX}policy#`;
const REQUEST = `${PREFIX}request#`;
const STATE = `${PREFIX}state`;

const encode = (state: Omit<ClusterBalloons, 'version'>) =>
  deflateRawSync(Buffer.from(JSON.stringify(state)));
const decode = (body: Uint8Array) => JSON.parse(inflateRawSync(body).toString('utf8'));

export class DynamoBalloonStore implements BalloonStore {
  private readonly table: Table;
  /** What the store cost (the bench reads it): items read and written, the compressed state's size. */
  readonly stats = { reads: 0, writes: 0, stateBytes: 0 };

  constructor(db: DynamoDBDocumentClient, tableName: string) {
    this.table = new Table(db, tableName);
  }

  async load(cluster: string): Promise<BalloonItems> {
    const items = await this.table.query(clusterPk(cluster), { beginsWith: PREFIX });
    this.stats.reads++;
    const out: BalloonItems = { policies: [], requests: [] };
    for (const item of items) {
      const sk = String(item[SK]);
      if (sk.startsWith(POLICY)) out.policies.push(withoutKeys<{ policy: BalloonPolicy }>(item).policy);
      else if (sk.startsWith(REQUEST))
        out.requests.push(withoutKeys<{ request: ExplicitRequest }>(item).request);
      else if (sk === STATE) out.state = this.stateOf(item);
    }
    return out;
  }

  private stateOf(item: Item): ClusterBalloons {
    const body = item.body as Uint8Array;
    this.stats.stateBytes = body.byteLength;
    return { ...decode(body), version: Number(item.version) };
  }

  async state(cluster: string): Promise<ClusterBalloons | undefined> {
    const item = await this.table.get(keyOf(clusterPk(cluster), STATE), { consistent: true });
    this.stats.reads++;
    return item ? this.stateOf(item) : undefined;
  }

  async saveState(
    state: Omit<ClusterBalloons, 'version'>,
    previous: number | undefined,
  ): Promise<StateWrite> {
    const body = encode(state);
    this.stats.stateBytes = body.byteLength;
    const version = (previous ?? 0) + 1;
    const item = { ...keyOf(clusterPk(state.cluster), STATE), body, version };
    const ok = await this.table.put(item, previous === undefined ? IF_ABSENT : ifVersion(previous));
    if (!ok) return 'lost-race';
    this.stats.writes++;
    return 'saved';
  }

  async putPolicy(cluster: string, policy: BalloonPolicy): Promise<void> {
    await this.table.put({
      ...keyOf(clusterPk(cluster), POLICY + policy.name),
      policy,
      updatedAt: Date.now(),
    });
    this.stats.writes++;
  }

  deletePolicy(cluster: string, name: string): Promise<Removal> {
    return this.deleteIfPresent(keyOf(clusterPk(cluster), POLICY + name));
  }

  async putRequest(cluster: string, request: ExplicitRequest): Promise<void> {
    await this.table.put({ ...keyOf(clusterPk(cluster), REQUEST + request.node), request });
    this.stats.writes++;
  }

  async deleteRequestIf(cluster: string, node: string, requestedAt: number): Promise<RequestRemoval> {
    const deleted = await this.table.delete(keyOf(clusterPk(cluster), REQUEST + node), {
      ConditionExpression: '#q.#t = :t',
      ExpressionAttributeNames: { '#q': 'request', '#t': 'requestedAt' },
      ExpressionAttributeValues: { ':t': requestedAt },
    });
    if (!deleted) return 'superseded';
    this.stats.writes++;
    return 'removed';
  }

  deleteRequest(cluster: string, node: string): Promise<Removal> {
    return this.deleteIfPresent(keyOf(clusterPk(cluster), REQUEST + node));
  }

  private async deleteIfPresent(key: Item): Promise<Removal> {
    const deleted = await this.table.delete(key, IF_PRESENT);
    if (!deleted) return 'absent';
    this.stats.writes++;
    return 'removed';
  }

  async clear(cluster: string): Promise<number> {
    const items = await this.table.query(clusterPk(cluster), { beginsWith: PREFIX });
    for (const item of items) await this.table.delete(keyOf(clusterPk(cluster), String(item[SK])));
    this.stats.writes += items.length;
    return items.length;
  }
}
