/**
 * A fault of the soak (issue 16, finding 2): an in-cluster component with a skewed clock. In every
 * cluster, after each cycle, the agent of soak/agent reads its Feature object and reports its use in the
 * Feature status, echoing the epoch it read, with a time an hour behind (even clusters) or ahead (odd
 * ones). It stops slowly: after it first reads off it still uses the feature (reports on) for two more
 * reports. Before each report, the feature as the control plane stored it is judged against the uses
 * in the cluster ("no transition completed while a use of the current epoch reports on"), so a
 * transition that ended early is caught on the cycle it happened, not only at the end.
 */
import type { Simulator } from '../local/sim/index.js';
import { FEATURE_CRD } from '../shared/features/crd.js';
import { parseRef } from '../shared/features/model.js';
import type { FeatureStore } from '../shared/features/store.js';
import { ClusterClient } from '../shared/k8s/client.js';
import { AGENT_COMPONENT, AGENT_FEATURE } from './declared.js';
import { inClusterUses, judgeEpochUses } from './invariants/features.js';
import type { AgentOutcome } from './records.js';

const HOUR = 3_600_000;
/** Reports of on after the agent first read off (it is still winding down). */
const WIND_DOWN = 2;
const REF = parseRef(AGENT_FEATURE);
const OBJECT = { group: FEATURE_CRD.group, version: FEATURE_CRD.version, plural: FEATURE_CRD.plural, ...REF };

interface FeatureStatus {
  value?: 'on' | 'off';
  usesEpoch?: number;
}

export class SkewedAgent {
  readonly outcome: AgentOutcome = {
    reports: 0,
    failed: 0,
    heldOn: 0,
    read: { on: 0, off: 0 },
    checked: 0,
    violations: [],
  };
  private readonly using = new Map<string, { on: boolean; windDown?: number }>();
  private readonly clients = new Map<string, ClusterClient>();

  constructor(
    private readonly sim: Simulator,
    private readonly store: FeatureStore,
  ) {}

  /** After a cycle: judge each cluster's feature, then report there. */
  async step(now: number): Promise<void> {
    for (const [i, c] of this.sim.clusters.entries()) {
      await this.judge(c.name);
      await this.report(c.name, now + (i % 2 === 0 ? -HOUR : HOUR));
    }
  }

  async close(): Promise<void> {
    for (const c of this.clients.values()) await c.close();
  }

  private async judge(cluster: string): Promise<void> {
    const record = await this.store.get(cluster, REF);
    if (!record) return;
    const object = this.sim.cluster(cluster).store.get('features.fleetscope.io', REF.name, REF.namespace);
    const o = judgeEpochUses([{ cluster, record, uses: inClusterUses(object) }]);
    this.outcome.checked += o.checked;
    for (const v of o.violations) if (this.outcome.violations.length < 20) this.outcome.violations.push(v);
  }

  private async report(cluster: string, skewedNow: number): Promise<void> {
    const client = this.client(cluster);
    try {
      const read = (
        (await client.custom.getNamespacedCustomObject(OBJECT)) as { status?: FeatureStatus } | undefined
      )?.status;
      if (!read?.value) return; // not mirrored yet
      this.outcome.read[read.value]++;
      const { value, held } = this.decide(cluster, read.value);
      const use = {
        value,
        time: new Date(skewedNow).toISOString(),
        ...(read.usesEpoch !== undefined ? { epoch: read.usesEpoch } : {}),
      };
      await client.patch('agent reports its use', 'merge', (o) =>
        client.custom.patchNamespacedCustomObjectStatus(
          { ...OBJECT, body: { status: { uses: { [AGENT_COMPONENT]: use } } } },
          o,
        ),
      );
      this.outcome.reports++;
      if (held) {
        this.outcome.heldOn++;
        // Only a report that reached the cluster counts toward the wind-down: one a fault refused was
        // never seen, and the wait for uses must still meet the on it holds for.
        this.windingDown(cluster);
      }
    } catch {
      this.outcome.failed++; // a fault: it reports again after the next cycle
    }
  }

  /** What it reports: what it read, but on for a while after it first read off. */
  private decide(cluster: string, read: 'on' | 'off'): { value: 'on' | 'off'; held: boolean } {
    const s = this.using.get(cluster) ?? { on: false };
    this.using.set(cluster, s);
    if (read === 'on') {
      s.on = true;
      s.windDown = undefined;
      return { value: 'on', held: false };
    }
    s.windDown ??= WIND_DOWN;
    if (s.on && s.windDown > 0) return { value: 'on', held: true };
    s.on = false;
    s.windDown = undefined;
    return { value: 'off', held: false };
  }

  private windingDown(cluster: string): void {
    const s = this.using.get(cluster);
    if (s?.windDown !== undefined) s.windDown--;
  }

  private client(cluster: string): ClusterClient {
    let c = this.clients.get(cluster);
    if (!c) {
      c = ClusterClient.fromKubeconfig(this.sim.kubeconfig(), { cluster, context: cluster });
      this.clients.set(cluster, c);
    }
    return c;
  }
}
