/**
 * What `fleetscope run` runs, from the catalogue: the capabilities' schedules in dependency order, each
 * either fanned out to every cluster (a `dispatch` schedule: one work request per cluster, as the
 * dispatch function publishes) or fleet-wide (its target invoked with its input). And how a worker's
 * result reads as an outcome. Pure: the CLI wires it to the local runtime.
 */
import { CAPABILITIES, schedulesInOrder } from './capabilities.js';
import { type Capability, oneTickOf, type ScheduleSpec } from './platform/catalogue.js';

export type RunStep =
  | { kind: 'per-cluster'; schedule: ScheduleSpec; capability: string }
  | { kind: 'fleet-wide'; schedule: ScheduleSpec; capability: string };

/** The capabilities that have schedules of their own: those `run --capability` takes. */
export function runnableCapabilities(caps: Capability[] = CAPABILITIES): string[] {
  return caps.filter((c) => c.schedules.length > 0).map((c) => c.id);
}

/**
 * A capability without schedules runs inside another's (node scope and balloons in the cycle): the
 * capability `run --capability` runs for it, or undefined for one the catalogue does not know.
 */
export function runnableFor(id: string, caps: Capability[] = CAPABILITIES): string | undefined {
  const runnable = runnableCapabilities(caps);
  if (runnable.includes(id)) return id;
  const self = caps.find((c) => c.id === id);
  if (!self) return undefined;
  // The host is the runnable capability it requires and that requires it (node scope <-> the cycle);
  // balloons' own minute schedule (grow on demand) also requires node scope but does not host it.
  const hosts = caps.filter((c) => runnable.includes(c.id) && c.requires?.includes(id));
  return (hosts.find((c) => self.requires?.includes(c.id)) ?? hosts[0])?.id;
}

/** The steps of one pass over `capabilities` (all when empty), in the scheduler's dependency order. */
export function runPlan(capabilities: string[], caps: Capability[] = CAPABILITIES): RunStep[] {
  const owner = new Map(caps.flatMap((c) => c.schedules.map((s) => [s.id, c.id] as const)));
  const wanted = caps.filter((c) => capabilities.length === 0 || capabilities.includes(c.id));
  const schedules = oneTickOf(
    schedulesInOrder(caps.flatMap((c) => c.schedules)).filter((s) =>
      wanted.some((c) => c.id === owner.get(s.id)),
    ),
  );
  return schedules.map((schedule) => {
    const dispatched = schedule.target === 'dispatch' && typeof schedule.input.capability === 'string';
    return dispatched
      ? { kind: 'per-cluster', schedule, capability: schedule.input.capability as string }
      : { kind: 'fleet-wide', schedule, capability: owner.get(schedule.id) as string };
  });
}

export interface StepOutcome {
  ok: boolean;
  /** One line: what the worker found or did, or why it failed. */
  text: string;
}

/**
 * A worker's result as an outcome. Workers record an unreachable cluster rather than throw (the next
 * cycle retries), so a result that carries an error, an unreachable cluster or a failed sync is a
 * failure here too; a skip (feature off, deregistered) is not.
 */
export function outcomeOf(result: unknown): StepOutcome {
  const r = (result ?? {}) as Record<string, unknown>;
  if (typeof r.error === 'string') return { ok: false, text: r.error };
  if (r.reachable === false) return { ok: false, text: 'unreachable' };
  if (typeof r.skipped === 'string') return { ok: true, text: `skipped: ${r.skipped}` };
  // A worker gated by its own feature says only that feature's state (balloons-grow: `off: 'TurningOff'`).
  if (typeof r.off === 'string') return { ok: true, text: `skipped: feature ${r.off}` };
  if (typeof r.state === 'string') {
    const ok = r.state === 'in-sync' || r.state === 'repaired';
    return { ok, text: `claims ${r.state}${typeof r.writes === 'number' ? `, ${r.writes} write(s)` : ''}` };
  }
  if (r.reachable === true) return { ok: true, text: inventoryText(r) };
  if ('nodescope' in r || 'balloons' in r || 'off' in r) return cycleText(r);
  return { ok: true, text: 'done' };
}

function inventoryText(r: Record<string, unknown>): string {
  return [
    r.serverVersion ? `Kubernetes ${r.serverVersion}` : undefined,
    typeof r.nodeCount === 'number' ? `${r.nodeCount} node(s)` : undefined,
    r.metricsApi ? `metrics API ${r.metricsApi}` : undefined,
  ]
    .filter(Boolean)
    .join(', ');
}

function cycleText(r: Record<string, unknown>): StepOutcome {
  const ns = r.nodescope as { daemonSets?: number; scopes?: number; errors?: string[] } | undefined;
  const bl = r.balloons as { nodes?: number } | undefined;
  const off = typeof r.off === 'object' ? (r.off as Record<string, string> | null) : undefined;
  const parts = [
    ns ? `nodescope ${ns.daemonSets ?? 0} DaemonSet(s), ${ns.scopes ?? 0} scope(s)` : undefined,
    bl ? `balloons ${bl.nodes ?? 0} node(s)` : undefined,
    ...Object.entries(off ?? {}).map(([f, state]) => `${f} ${state}`),
  ].filter(Boolean);
  const errors = ns?.errors ?? [];
  return {
    ok: errors.length === 0,
    text: `${parts.join('; ') || 'done'}${errors.length ? ` (errors: ${errors.join('; ')})` : ''}`,
  };
}
