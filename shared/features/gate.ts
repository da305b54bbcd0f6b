/**
 * The client flow (KEP-3920): before it acts on a cluster, every worker reads the feature's state for that
 * cluster, acts only as the state allows, and reports a use (the component, the value it saw, when).
 * One query, and a write only when the use changed or is old; a worker never waits on the reconciler.
 *
 *   On                  -> on: act
 *   TurningOn           -> on once only waits for uses are left (what the feature needs is in place);
 *                          off before that
 *   Off, TurningOff     -> off: do not act (turning off starts by every worker stopping)
 *   no record yet       -> the default (the reconciler has not announced the feature to this cluster)
 */
import { CAPABILITIES } from '../capabilities.js';
import type { OutgoingEvent } from '../platform/publisher.js';
import { featureNow } from './clock.js';
import { valueFor } from './machine.js';
import { type FeatureRef, type FeatureState, inTransition, type Value } from './model.js';
import type { FeatureStore } from './store.js';

export { setFeatureClock } from './clock.js';
export { valueFor };

/** A use younger than this is not written again with the same value. */
export const USE_REFRESH_MS = 15 * 60_000;

export interface GateDecision {
  feature: FeatureRef;
  state: FeatureState | 'unannounced';
  /** What the component sees and reports. */
  value: Value;
  allowed: boolean;
}

export interface GatePorts {
  /** Where the records are read and uses reported (a worker's: ./gate-dynamo.ts). */
  store: Pick<FeatureStore, 'view' | 'reportUse'>;
  /** Announces a use whose value changed (a transition waiting for uses is looked at again at once). */
  publish?: (events: OutgoingEvent<'FeatureUseReported'>[]) => Promise<void>;
  now?: () => number;
  warn?: (message: string, fields: Record<string, unknown>) => void;
}

/**
 * Reads the feature for the cluster and reports this component's use. A failure to report is logged,
 * never fatal: the next invocation reports again, and a wait for uses waits for a report anyway.
 */
export async function checkFeature(
  ports: GatePorts,
  cluster: string,
  feature: FeatureRef & { default: Value },
  component: string,
): Promise<GateDecision> {
  const store = ports.store;
  const view = await store.view(cluster, feature);
  const value = valueFor(view.record, feature.default);
  const now = (ports.now ?? featureNow)();
  const mine = view.uses.find((u) => u.component === component);
  // The use echoes the epoch of the last clearing it read with the value (a wait for uses counts it by that).
  const epoch = view.record?.usesEpoch;
  if (!mine || mine.value !== value || mine.epoch !== epoch || now - mine.at >= USE_REFRESH_MS) {
    try {
      await store.reportUse(cluster, feature, {
        component,
        value,
        at: now,
        ...(epoch !== undefined ? { epoch } : {}),
        source: 'fleetscope',
      });
      if (mine?.value !== value && view.record && inTransition(view.record.state))
        await ports.publish?.([useEvent(cluster, feature, component, value, now)]);
    } catch (err) {
      ports.warn?.('could not report a feature use', { component, error: (err as Error).message });
    }
  }
  return {
    feature: { namespace: feature.namespace, name: feature.name },
    state: view.record?.state ?? 'unannounced',
    value,
    allowed: value === 'on',
  };
}

/**
 * The one call every worker makes before it acts on a cluster for a capability: the capability's
 * feature (declared next to it) as the cluster has it, this component's use reported.
 */
export async function gate(
  ports: GatePorts,
  cluster: string,
  capability: string,
  component: string,
): Promise<GateDecision> {
  const spec = CAPABILITIES.find((c) => c.id === capability)?.feature;
  if (!spec) throw new Error(`capability "${capability}" declares no feature`);
  return checkFeature(ports, cluster, spec, component);
}

function useEvent(
  cluster: string,
  f: FeatureRef,
  component: string,
  value: Value,
  at: number,
): OutgoingEvent<'FeatureUseReported'> {
  return {
    detailType: 'FeatureUseReported',
    detail: {
      cluster,
      namespace: f.namespace,
      feature: f.name,
      component,
      value,
      at: new Date(at).toISOString(),
    },
    resources: [`cluster/${cluster}`],
  };
}
