/**
 * A fault of the soak (issue 16, finding 1): a reconciler paused past its claim. Right after the first
 * feature flip, a reconciler of the soak's own process claims that feature's first task and freezes
 * there (its heartbeat frozen with it), while the runtimes' reconcilers go on; it resumes once its claim
 * has lapsed and another has taken the task over. The invariant "no task's writes seen twice" holds it
 * to no write passing its fence after that.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Simulator } from '../local/sim/index.js';
import { loadCatalog } from '../shared/features/catalog.js';
import { parseRef } from '../shared/features/model.js';
import { reconcileCluster } from '../shared/features/reconciler.js';
import { FeatureStore } from '../shared/features/store.js';
import { ClusterClient } from '../shared/k8s/client.js';

export interface PausedOutcome {
  cluster: string;
  feature: string;
  /** It froze holding a task's claim (the fault was hit), and which task. */
  froze: boolean;
  task?: string;
  /** Writes whose fence held after it resumed (each would have reached the cluster a second time). */
  fencedAfter: number;
  claimsLost: number;
  error?: string;
}

export class PausedReconciler {
  outcome?: PausedOutcome;
  private run?: Promise<void>;
  private release?: () => void;
  private resumed = false;

  constructor(
    private readonly db: DynamoDBDocumentClient,
    private readonly table: string,
    private readonly sim: Simulator,
  ) {}

  get started(): boolean {
    return this.run !== undefined;
  }

  start(cluster: string, feature: string): void {
    const o: PausedOutcome = { cluster, feature, froze: false, fencedAfter: 0, claimsLost: 0 };
    this.outcome = o;
    const gate = new Promise<void>((r) => {
      this.release = r;
    });
    const client = ClusterClient.fromKubeconfig(this.sim.kubeconfig(), { cluster, context: cluster });
    const store = new FeatureStore(this.db, this.table);
    this.run = (async () => {
      const catalog = await loadCatalog(store);
      await reconcileCluster(
        {
          store,
          catalog,
          db: this.db,
          table: this.table,
          connect: async () => client,
          now: () => this.sim.clock.now(),
          id: 'soak/paused',
          heartbeatMs: 0, // frozen with the process
          mirror: false,
          // Frozen once it holds a task's claim, before performing it.
          onStep: async (m) => {
            if (m.step === 'claimed' && !o.froze) {
              o.froze = true;
              o.task = m.task;
              await gate;
            }
          },
          // A write whose fence held after it resumed: it would reach the cluster.
          onFence: () => {
            if (this.resumed) o.fencedAfter++;
          },
          count: (m) => {
            if (m === 'FeatureClaimsLost') o.claimsLost++;
          },
        },
        cluster,
        parseRef(feature),
      );
    })()
      .catch((err) => {
        o.error = String((err as Error)?.message ?? err).slice(0, 300);
      })
      .finally(() => client.close());
  }

  /** Lets it go on (its claim lapsed meanwhile), and waits for its pass to end. */
  async resume(): Promise<void> {
    this.resumed = true;
    this.release?.();
    await this.run;
  }
}
