/**
 * A fault of the soak (issue 16, finding 1; issue 34): a reconciler paused past its claim at a step
 * that writes. After a feature flip, a reconciler of the soak's own process runs a pass over that
 * feature and freezes at the first write of a task that is not a wait (a create, an apply, a delete,
 * a patch: its fence held, the write about to be sent), its heartbeat frozen with it, while the
 * runtimes' reconcilers go on; it resumes once its claim has lapsed and another has taken the task
 * over. A pass that met only waits ends without freezing, and the next flip starts another. Every
 * fence it met is counted by the kind of its task (a wait's writes: clearing uses; a create, an apply,
 * a delete, a hook's patches), and so is the one it froze at. The invariant "no task's writes seen
 * twice" holds it to no write passing its fence after that, and fails a run where it never froze at a
 * write (the dangerous path never hit).
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Simulator } from '../local/sim/index.js';
import { loadCatalog } from '../shared/features/catalog.js';
import { parseRef } from '../shared/features/model.js';
import { reconcileCluster } from '../shared/features/reconciler.js';
import { type FeatureSpec, tasksOf } from '../shared/features/spec.js';
import { DynamoFeatureStore } from '../shared/features/store-dynamo.js';
import { titleOf } from '../shared/features/task-kinds.js';
import { dynamoTaskStores } from '../shared/features/task-stores-dynamo.js';
import { ClusterClient } from '../shared/k8s/client.js';
import type { PausedOutcome } from './records.js';

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

  private running = false;

  /** Whether a pass may start: none is running, and none froze yet. */
  get canStart(): boolean {
    return !this.running && !this.outcome?.froze;
  }

  get froze(): boolean {
    return this.outcome?.froze === true;
  }

  start(cluster: string, feature: string): void {
    const o: PausedOutcome = {
      cluster,
      feature,
      froze: false,
      fences: this.outcome?.fences ?? {},
      passes: (this.outcome?.passes ?? 0) + 1,
      fencedAfter: this.outcome?.fencedAfter ?? 0,
      claimsLost: this.outcome?.claimsLost ?? 0,
    };
    this.outcome = o;
    this.running = true;
    const gate = new Promise<void>((r) => {
      this.release = r;
    });
    const client = ClusterClient.fromKubeconfig(this.sim.kubeconfig(), { cluster, context: cluster });
    const store = new DynamoFeatureStore(this.db, this.table);
    this.run = (async () => {
      const catalog = await loadCatalog(store);
      const kindOf = taskKinds(catalog.need(parseRef(feature)));
      await reconcileCluster(
        {
          store,
          catalog,
          tasks: dynamoTaskStores(this.db, this.table),
          connect: async () => client,
          now: () => this.sim.clock.now(),
          id: 'soak/paused',
          heartbeatMs: 0, // frozen with the process
          mirror: false,
          // Frozen at the first write of a task that is not a wait: its fence held, the write not sent.
          // A write whose fence held after it resumed would reach the cluster a second time.
          onFence: async (m) => {
            if (this.resumed) {
              o.fencedAfter++;
              return;
            }
            const kind = kindOf(m.task);
            o.fences[kind] = (o.fences[kind] ?? 0) + 1;
            if (!o.froze && m.task && !kind.startsWith('wait-')) {
              o.froze = true;
              o.task = m.task;
              o.frozeAt = kind;
              await gate;
            }
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
      .finally(() => {
        this.running = false;
        return client.close();
      });
  }

  /** Lets it go on (its claim lapsed meanwhile), and waits for its pass to end. */
  async resume(): Promise<void> {
    if (!this.froze) return;
    this.resumed = true;
    this.release?.();
    await this.run;
  }
}

/** A task's kind by its title, among the feature's tasks both ways ("unknown" for none of them). */
function taskKinds(spec: FeatureSpec): (title: string | undefined) => string {
  const kinds = new Map<string, string>();
  for (const t of [...tasksOf(spec, 'On'), ...tasksOf(spec, 'Off')]) kinds.set(titleOf(t), t.task);
  return (title) => (title !== undefined && kinds.get(title)) || 'unknown';
}
