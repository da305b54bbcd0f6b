/**
 * balloons' items in the fleetscope table (keys from shared/platform/table.ts):
 *
 *   pk = CLUSTER#<c>  sk = balloons#policy#<name>   a node pool's policy (operator input)
 *   pk = CLUSTER#<c>  sk = balloons#request#<node>  an explicit size for one node (operator input)
 *   pk = CLUSTER#<c>  sk = balloons#state           every managed node's state after the last cycle,
 *                                                   compressed; written once per cycle, conditionally
 *                                                   on its version (two cycles never both win)
 *
 * One query (sk begins with "balloons#") reads all of a cluster's balloon items: the cycle costs one
 * read and one write whatever the number of nodes.
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
import type { ResizeRecord } from '../resize/index.js';
import type { Amounts } from './amounts.js';
import type { ExplicitRequest, SizeSource } from './desired.js';
import type { BalloonPolicy } from './policy.js';
import type { NodePrice } from './prices.js';
import type { PodInTheWay } from './sizing.js';

const PREFIX = 'balloons#';
const POLICY = `${PREFIX}policy#`;
const REQUEST = `${PREFIX}request#`;
const STATE = `${PREFIX}state`;

export interface BlockedReclaim {
  /** What the balloon could not take back. */
  missing: Amounts;
  pods: PodInTheWay[];
  since: number;
}

/** One managed node after a cycle. Amounts are integers (millicores, bytes). */
export interface NodeState {
  allocatable: Amounts;
  capacity: Amounts;
  /** Requests of the node's other pods; used (metrics API) when available. */
  workloads: Amounts;
  used?: Amounts;
  desired?: Amounts;
  source?: SizeSource;
  /** The balloon's spec now, and what it should be. */
  balloon: Amounts;
  target: Amounts;
  podUid?: string;
  blocked?: BlockedReclaim;
  resize?: ResizeRecord;
  /** The effective size fleetscope settled on, and when it last shrank the node (the cool-down). */
  size?: Amounts;
  lastShrinkAt?: number;
  /** The node autoscaler that manages the node, from its labels (./autoscalers.ts). */
  autoscaler?: string;
  /**
   * What the node's pods and balloon hold beyond its allocatable (the VM shrank under them, a hot-unplug):
   * the balloon deflates and waits for the kubelet; nothing is evicted.
   */
  overcommitted?: Amounts;
  /** How far usage (metrics.k8s.io) beside the balloon goes beyond allocatable, where more than requests do. */
  overcommittedByUsage?: Amounts;
  /** What the node's pods use, with headroom, where it kept the node from shrinking further. */
  usageFloor?: Amounts;
  /** Why the node's balloon pod is not sound (./integrity.ts): it is held at the floor. */
  unsound?: string[];
  /** The node's price (instance type, USD per hour), to value its ballooned capacity; absent if unknown. */
  price?: NodePrice;
  /** KEP-5836 (1.37+): the node's opt-out from resize preemption; absent where the server has none. */
  resizePreemption?: ResizePreemptionState;
}

/** fleetscope's key in the node's disableResizePreemption, and what the kubelet does with it. */
export interface ResizePreemptionState {
  /** fleetscope.io/balloons is in spec.podPreemptionPolicy.disableResizePreemption. */
  optedOut: boolean;
  /** Why it could not be added (the list is full), naming the node. */
  problem?: string;
  /** Pods ("ns/name") whose Deferred resize the kubelet holds without preemption (PodResizePreemptionDisabled). */
  held?: string[];
}

/** What an OpenAPI v3 document of core/v1 said of the KEP-5836 node field. */
export interface FieldDetection {
  /** Its serverRelativeURL in the OpenAPI index (with the content hash): a new one is read again. */
  document: string;
  served: boolean;
}

/** A pod labelled as a balloon that fleetscope does not own (a workload; never written). */
export interface Impostor {
  namespace: string;
  name: string;
  uid: string;
  node: string;
}

export interface ClusterBalloons {
  cluster: string;
  at: number;
  cycleId: string;
  nodes: Record<string, NodeState>;
  /** Why nothing is resized: the cluster has no pods/resize. Asked again after `unsupportedUntil`. */
  unsupported?: string;
  unsupportedUntil?: number;
  /** KEP-5836: the server dropped the node field (its gate is off); no key is added before this time. */
  resizePreemptionOffUntil?: number;
  /** KEP-5836: whether core/v1's OpenAPI (this document, its URL carrying its hash) has the node field. */
  resizePreemptionField?: FieldDetection;
  /** Errors of the last cycle (per node or cluster-wide). */
  errors: string[];
  /** Pods labelled as balloons that fleetscope does not own, seen by the last cycle. */
  impostors?: Impostor[];
  version: number;
}

export interface BalloonItems {
  policies: BalloonPolicy[];
  requests: ExplicitRequest[];
  state?: ClusterBalloons;
}

const encode = (state: Omit<ClusterBalloons, 'version'>) =>
  deflateRawSync(Buffer.from(JSON.stringify(state)));
const decode = (body: Uint8Array) => JSON.parse(inflateRawSync(body).toString('utf8'));

export class BalloonStore {
  private readonly table: Table;
  readonly stats = { reads: 0, writes: 0, stateBytes: 0 };

  constructor(db: DynamoDBDocumentClient, tableName: string) {
    this.table = new Table(db, tableName);
  }

  /** Everything balloons keep about a cluster, in one query. */
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

  /** Writes the cycle's state if nobody else wrote since `previous` was read; false when someone did. */
  async saveState(state: Omit<ClusterBalloons, 'version'>, previous: number | undefined): Promise<boolean> {
    const body = encode(state);
    this.stats.stateBytes = body.byteLength;
    const version = (previous ?? 0) + 1;
    const item = { ...keyOf(clusterPk(state.cluster), STATE), body, version };
    const ok = await this.table.put(item, previous === undefined ? IF_ABSENT : ifVersion(previous));
    if (ok) this.stats.writes++;
    return ok;
  }

  async putPolicy(cluster: string, policy: BalloonPolicy): Promise<void> {
    await this.table.put({
      ...keyOf(clusterPk(cluster), POLICY + policy.name),
      policy,
      updatedAt: Date.now(),
    });
    this.stats.writes++;
  }

  /** Deletes a policy; false when there was none by that name. */
  async deletePolicy(cluster: string, name: string): Promise<boolean> {
    return this.deleteIfPresent(keyOf(clusterPk(cluster), POLICY + name));
  }

  async putRequest(cluster: string, request: ExplicitRequest): Promise<void> {
    await this.table.put({ ...keyOf(clusterPk(cluster), REQUEST + request.node), request });
    this.stats.writes++;
  }

  /** Deletes the node's explicit size only if it is still the one asked for at `requestedAt`. */
  async deleteRequestIf(cluster: string, node: string, requestedAt: number): Promise<boolean> {
    const deleted = await this.table.delete(keyOf(clusterPk(cluster), REQUEST + node), {
      ConditionExpression: '#q.#t = :t',
      ExpressionAttributeNames: { '#q': 'request', '#t': 'requestedAt' },
      ExpressionAttributeValues: { ':t': requestedAt },
    });
    if (deleted) this.stats.writes++;
    return deleted;
  }

  async deleteRequest(cluster: string, node: string): Promise<boolean> {
    return this.deleteIfPresent(keyOf(clusterPk(cluster), REQUEST + node));
  }

  private async deleteIfPresent(key: Item): Promise<boolean> {
    const deleted = await this.table.delete(key, IF_PRESENT);
    if (deleted) this.stats.writes++;
    return deleted;
  }

  /** Removes every balloon item of a cluster (the feature turned off, or the cluster deregistered). */
  async clear(cluster: string): Promise<number> {
    const items = await this.table.query(clusterPk(cluster), { beginsWith: PREFIX });
    for (const item of items) await this.table.delete(keyOf(clusterPk(cluster), String(item[SK])));
    this.stats.writes += items.length;
    return items.length;
  }
}
