/**
 * Features in the soak: the operator flips a feature of some clusters off and on again during the run
 * (the store write `fleetscope features set` makes, on the soak's clock, so that the reconcilers see it
 * at their next pass), and puts the balloon policy back once balloons are on again (turning balloons off
 * cleared it with the rest of their state).
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { BALLOONS } from '../shared/balloons/events.js';
import { loadCatalog } from '../shared/features/catalog.js';
import { setDesired } from '../shared/features/desired.js';
import { FLEETSCOPE_NAMESPACE, parseRef } from '../shared/features/model.js';
import type { FeatureStore } from '../shared/features/store.js';
import { DynamoFeatureStore } from '../shared/features/store-dynamo.js';
import { ensurePolicy } from './balloons.js';
import { flipCycle, type SoakConfig } from './config.js';
import type { FlipDone } from './records.js';

export class FeatureOperator {
  readonly done: FlipDone[] = [];
  /** Balloon policies put back after balloons were turned on again. */
  policiesRestored = 0;
  private readonly store: FeatureStore;

  constructor(
    private readonly cfg: SoakConfig,
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly names: string[],
    private readonly balloonClusters: string[],
  ) {
    this.store = new DynamoFeatureStore(db, table);
  }

  /** The flips due at this cycle. */
  async flip(cycle: number, now: number): Promise<void> {
    const due = this.cfg.flips.filter(
      (f) => f.cluster < this.names.length && flipCycle(this.cfg, f) === cycle,
    );
    if (due.length === 0) return;
    const catalog = await loadCatalog(this.store);
    for (const f of due) {
      const cluster = this.names[f.cluster] as string;
      const spec = catalog.need(parseRef(f.feature));
      const desired = f.desired === 'default' ? undefined : f.desired;
      const r = await setDesired(this.store, spec, cluster, desired, 'soak operator', {}, now);
      this.done.push({ cycle, cluster, feature: f.feature, desired: f.desired, changed: r.changed });
    }
  }

  /** Clusters whose balloons were flipped: the policy goes back once they are On again. */
  async restorePolicies(): Promise<void> {
    const flipped = new Set(
      this.done
        .filter((d) => d.feature === BALLOONS && this.balloonClusters.includes(d.cluster))
        .map((d) => d.cluster),
    );
    for (const cluster of flipped) {
      const r = await this.store.get(cluster, { namespace: FLEETSCOPE_NAMESPACE, name: BALLOONS });
      if (r?.state !== 'On') continue;
      if (await ensurePolicy(this.db, this.table, cluster)) this.policiesRestored++;
    }
  }
}
