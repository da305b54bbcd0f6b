/**
 * The balloons' store in process: what the unit tests run on, no DynamoDB-protocol server. Its
 * conditions are the DynamoDB adapter's (test/balloons/store-contract.test.ts runs one contract on both):
 * the state is written only over the version read, records come back in their key order (policies by
 * name, sizes by node), and every record is copied in and out as a serialized store would (undefined
 * fields dropped, nothing shared with the caller).
 */
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

interface ClusterRecords {
  policies: Map<string, BalloonPolicy>;
  requests: Map<string, ExplicitRequest>;
  state?: ClusterBalloons;
}

/** A record as it would come back from a store: a copy, without undefined fields. */
const stored = <T>(v: T): T => JSON.parse(JSON.stringify(v));
const byKey = <V>(m: Map<string, V>): V[] =>
  [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => stored(v));

export class MemoryBalloonStore implements BalloonStore {
  private readonly clusters = new Map<string, ClusterRecords>();

  private of(cluster: string): ClusterRecords {
    const known = this.clusters.get(cluster);
    if (known) return known;
    const c: ClusterRecords = { policies: new Map(), requests: new Map() };
    this.clusters.set(cluster, c);
    return c;
  }

  async load(cluster: string): Promise<BalloonItems> {
    const c = this.of(cluster);
    return {
      policies: byKey(c.policies),
      requests: byKey(c.requests),
      ...(c.state ? { state: stored(c.state) } : {}),
    };
  }

  async state(cluster: string): Promise<ClusterBalloons | undefined> {
    const s = this.clusters.get(cluster)?.state;
    return s ? stored(s) : undefined;
  }

  async saveState(
    state: Omit<ClusterBalloons, 'version'>,
    previous: number | undefined,
  ): Promise<StateWrite> {
    const c = this.of(state.cluster);
    if (c.state?.version !== previous) return 'lost-race';
    c.state = { ...stored(state), version: (previous ?? 0) + 1 };
    return 'saved';
  }

  async putPolicy(cluster: string, policy: BalloonPolicy): Promise<void> {
    this.of(cluster).policies.set(policy.name, stored(policy));
  }

  async deletePolicy(cluster: string, name: string): Promise<Removal> {
    return this.of(cluster).policies.delete(name) ? 'removed' : 'absent';
  }

  async putRequest(cluster: string, request: ExplicitRequest): Promise<void> {
    this.of(cluster).requests.set(request.node, stored(request));
  }

  async deleteRequestIf(cluster: string, node: string, requestedAt: number): Promise<RequestRemoval> {
    const requests = this.of(cluster).requests;
    if (requests.get(node)?.requestedAt !== requestedAt) return 'superseded';
    requests.delete(node);
    return 'removed';
  }

  async deleteRequest(cluster: string, node: string): Promise<Removal> {
    return this.of(cluster).requests.delete(node) ? 'removed' : 'absent';
  }

  async clear(cluster: string): Promise<number> {
    const c = this.clusters.get(cluster);
    this.clusters.delete(cluster);
    return c ? c.policies.size + c.requests.size + (c.state ? 1 : 0) : 0;
  }
}
