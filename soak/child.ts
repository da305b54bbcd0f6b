/**
 * One soak runtime: the local runtime in its own process (so SIGKILL is real), on the soak's shared
 * state, running the catalogue's schedules when the soak says so. Its simulated clock is the one the
 * soak sends with each cycle. Replies carry the events published and the dead letters of the cycle.
 */

import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { startLocalRuntime } from '../local/runtime.js';
import { setFeatureClock } from '../shared/features/clock.js';
import { clusterAccess } from '../shared/fleet/cluster-access.js';
import { registerCluster } from '../shared/fleet/register.js';
import { DynamoRegistry } from '../shared/fleet/registry-dynamo.js';
import type { KubeconfigRef } from '../shared/k8s/kubeconfig-ref.js';
import { setNodeScopeClock } from '../shared/nodescope/clock.js';
import { DEFAULTS, ENV } from '../shared/platform/config.js';
import { deps } from '../shared/platform/deps.js';
import { EVENT_SOURCE } from '../shared/platform/events.js';

export type ToChild =
  | { type: 'register'; now: number; targets: { name: string; ref: KubeconfigRef }[] }
  | { type: 'cycle'; cycle: number; now: number; poison?: PoisonEvent[] }
  | { type: 'stop' };

export type FromChild =
  | { type: 'ready' }
  /** error: why a registration failed (a fault: the soak registers a cluster again mid-run). */
  | { type: 'registered'; error?: string }
  | {
      type: 'cycle-done';
      cycle: number;
      events: { detailType: string; detail: unknown }[];
      deadLetters: unknown[];
      /** The malformed events this runtime put on its bus this cycle (their soakPoison ids). */
      poisoned: string[];
    };

/** A malformed event the soak sends, marked by `detail.soakPoison`: it must end as a dead letter. */
export interface PoisonEvent {
  detailType: string;
  detail: { soakPoison: string } & Record<string, unknown>;
}

const stateDir = process.env.SOAK_STATE_DIR;
if (!stateDir || !process.send) throw new Error('soak child: needs SOAK_STATE_DIR and an IPC channel');
const send = (m: FromChild) => process.send?.(m);

/**
 * A control plane whose clock is off (./skew.ts): everything this process reads as the time (the
 * soak's clock it is sent, and the wall clock the cluster's Date is compared with) runs SOAK_SKEW_MS
 * ahead (or behind). The clusters keep theirs: waits, leases and deadlines must run on those.
 */
const skewMs = Number(process.env.SOAK_SKEW_MS ?? 0);
if (!Number.isFinite(skewMs)) throw new Error('soak child: SOAK_SKEW_MS must be a number of ms');
if (skewMs !== 0) {
  const wall = Date.now.bind(Date);
  Date.now = () => wall() + skewMs;
}
let now = 0;
setNodeScopeClock(() => now);
// Uses, task polls and claims on the same clock: "wait 10 minutes for uses" is five soak cycles.
setFeatureClock(() => now);
const runtime = await startLocalRuntime({ stateDir, retryDelayMs: 20 });
let eventsSent = 0;
let deadSent = 0;

process.on('message', async (m: ToChild) => {
  if (m.type === 'register') {
    now = m.now + skewMs; // features are announced to each cluster as it registers: on the soak's clock
    const store = new DynamoRegistry(runtime.db, runtime.table);
    try {
      for (const t of m.targets) {
        if (await store.get(t.name)) continue;
        await registerCluster(
          { name: t.name, kubeconfig: t.ref, labels: { 'fleetscope.io/source': 'soak' } },
          { store, publisher: deps().publisher, verify: (n, r) => clusterAccess().verify(n, r) },
        );
      }
      await runtime.bus.drain();
      send({ type: 'registered' });
    } catch (err) {
      send({ type: 'registered', error: String((err as Error)?.message ?? err).slice(0, 300) });
    }
  } else if (m.type === 'cycle') {
    now = m.now + skewMs;
    const poisoned = await putPoison(m.poison ?? []);
    await runtime.scheduler.runOnce();
    await runtime.bus.drain();
    const events = runtime.bus.log
      .slice(eventsSent)
      .map((e) => ({ detailType: e.detailType, detail: e.detail }));
    eventsSent = runtime.bus.log.length;
    const deadLetters = runtime.invoker.deadLetters.slice(deadSent);
    deadSent = runtime.invoker.deadLetters.length;
    send({ type: 'cycle-done', cycle: m.cycle, events, deadLetters, poisoned });
  } else if (m.type === 'stop') {
    await runtime.stop();
    process.exit(0);
  }
});
send({ type: 'ready' });

/** Puts the malformed events on the bus through the EventBridge API, as any producer would. */
async function putPoison(poison: PoisonEvent[]): Promise<string[]> {
  if (!poison.length) return [];
  const eb = new EventBridgeClient({});
  try {
    await eb.send(
      new PutEventsCommand({
        Entries: poison.map((p) => ({
          EventBusName: process.env[ENV.bus] ?? DEFAULTS.bus,
          Source: EVENT_SOURCE,
          DetailType: p.detailType,
          Detail: JSON.stringify(p.detail),
        })),
      }),
    );
  } finally {
    eb.destroy();
  }
  return poison.map((p) => p.detail.soakPoison);
}
