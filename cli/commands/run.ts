/**
 * `fleetscope run`: the capabilities' cycles against the registered clusters, without `npm start`: the
 * very workers the scheduler's fan-out reaches, invoked through the local bus one cluster at a time so
 * each cluster's outcome is reported as it completes. The state is the state directory's shared server,
 * so a running `npm start` (or another command) sees the same registry and records.
 */
import type { RegisteredCluster } from '../../shared/fleet/cluster.js';
import { ownedBy } from '../../shared/fleet/cluster.js';
import { workRequests } from '../../shared/fleet/dispatch.js';
import { readConfig } from '../../shared/platform/config.js';
import {
  outcomeOf,
  type RunStep,
  runnableCapabilities,
  runnableFor,
  runPlan,
} from '../../shared/run-plan.js';
import { type CliCommand, decimalFlag, UsageError } from '../command.js';
import { type CliContext, parseFlags, registeredCluster, withContext } from '../context.js';
import { outputFormat, outputOptions } from '../output.js';
import { FLEET, ProgressReporter, wallSeconds } from './run-progress.js';

const usage = `usage: fleetscope run [--once] [--capability ID ...] [--cluster NAME ...] [--speedup X]
                      [-o table|wide|json|yaml] [--state-dir DIR]

Runs the capabilities' cycles (the functions the schedules run: ${runnableCapabilities().join(', ')}) against
the registered clusters this control plane owns, in the scheduler's order, and reports one line per
cluster and capability as each completes (a live progress line too when standard output is a terminal).

  --once            one pass, then a summary; exit 1 when any cycle failed (a cluster unreachable, a
                    worker that failed every attempt, a cycle that reported errors)
                    without it: one pass now, then each schedule on its period until Ctrl-C
  --capability ID   only this capability (repeatable; nodescope runs in the cycle; balloons is its
                    minute pass, grow on demand, and its sizing runs in the cycle)
  --cluster NAME    only this registered cluster (repeatable); fleet-wide schedules (claims-reconcile,
                    features-reconcile) then do not run
  --speedup X       divide the schedules' periods by X (the clusters' clocks and the waits inside the
                    cycles, such as a feature's wait for uses, keep their own time)
  -o FORMAT         table (default), wide (adds schedule and time), json or yaml (the results at the end)
  --state-dir DIR   local state (default .fleetscope, or FLEETSCOPE_STATE_DIR), shared with npm start
                    (local only: a deployed stack runs its own schedules)

exit codes: 0 every cycle succeeded, 1 one failed, 2 usage error`;

const options = {
  'state-dir': { type: 'string' },
  once: { type: 'boolean' },
  capability: { type: 'string', multiple: true },
  cluster: { type: 'string', multiple: true },
  speedup: { type: 'string' },
  ...outputOptions,
} as const;

export const command: CliCommand = {
  name: 'run',
  summary: "run the capabilities' cycles against the registered clusters (once, or on their schedules)",
  usage,
  outputs: { '': 'data' },
  async run(args) {
    const { values, positionals } = parseFlags(args, options);
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    const capabilities = capabilitiesOf(values.capability);
    const speedup = values.speedup === undefined ? 1 : decimalFlag('--speedup', values.speedup, { min: 1 });
    const format = outputFormat(values);
    return withContext(values, async (ctx) => {
      const clusters = await clustersOf(ctx, values.cluster);
      const plan = runPlan(capabilities).filter((s) => s.kind === 'per-cluster' || !values.cluster);
      const reporter = new ProgressReporter(format, { clusters: clusters.map((c) => c.name), plan });
      if (clusters.length === 0)
        reporter.note(
          'no clusters registered (fleetscope cluster register adds one): only fleet-wide schedules run',
        );
      if (values.once) {
        await runPass(ctx, plan, clusters, reporter);
        return reporter.finish();
      }
      return runOnSchedules(ctx, plan, clusters, reporter, { speedup, stop: interrupted() });
    });
  },
};

/** The capabilities asked for (all when none), each one the catalogue runs; a usage error otherwise. */
export function capabilitiesOf(ids: string[] | undefined): string[] {
  const out = new Set<string>();
  for (const id of ids ?? []) {
    const runnable = runnableFor(id);
    if (!runnable)
      throw new UsageError(`--capability ${id}: use one of ${runnableCapabilities().join(', ')}`);
    out.add(runnable);
  }
  return [...out];
}

/** The clusters to run against: those named (each must be registered), else every registered one. */
async function clustersOf(ctx: CliContext, names: string[] | undefined): Promise<RegisteredCluster[]> {
  if (!names?.length) return ctx.registry.list();
  const out: RegisteredCluster[] = [];
  for (const name of new Set(names)) out.push(await registeredCluster(ctx, name));
  return out;
}

/** One pass of the plan: each step's work, drained (with what it caused) before the next step starts. */
export async function runPass(
  ctx: CliContext,
  plan: RunStep[],
  clusters: RegisteredCluster[],
  reporter: ProgressReporter,
): Promise<void> {
  for (const step of plan) await runStep(ctx, step, clusters, reporter);
}

async function runStep(
  ctx: CliContext,
  step: RunStep,
  clusters: RegisteredCluster[],
  reporter: ProgressReporter,
): Promise<void> {
  const runtime = ctx.runtime;
  if (!runtime) throw new Error('run needs the local runtime');
  const base = { capability: step.capability, schedule: step.schedule.id };
  if (step.kind === 'fleet-wide') {
    reporter.started(base.schedule, 1);
    const t0 = performance.now();
    const o = await runtime.invoker.invokeAsyncOutcome(step.schedule.target, step.schedule.input, 'run');
    await runtime.bus.drain();
    const outcome = o.ok ? outcomeOf(o.result) : { ok: false, text: o.error ?? 'failed' };
    const text = `${base.schedule}: ${outcome.text}`;
    reporter.completed({ ...base, cluster: FLEET, ok: outcome.ok, text, ms: performance.now() - t0 });
    return;
  }
  const me = readConfig().controlPlane;
  const mine = clusters.filter((c) => ownedBy(c, me));
  for (const c of clusters.filter((c) => !ownedBy(c, me)))
    reporter.completed({
      ...base,
      cluster: c.name,
      ok: true,
      text: `skipped: owned by ${c.owner}`,
      ms: 0,
      notOurs: true,
    });
  reporter.started(base.schedule, mine.length);
  await Promise.all(
    mine.map(async (c) => reporter.completed({ ...base, cluster: c.name, ...(await work(ctx, step, c)) })),
  );
  await runtime.bus.drain();
}

/** One cluster's work request, delivered as the dispatch function's would be, and how it ended. */
async function work(ctx: CliContext, step: RunStep, c: RegisteredCluster) {
  const t0 = performance.now();
  const [request] = workRequests(step.capability, [c], new Date());
  const deliveries = await ctx.runtime!.bus.deliver(request!);
  const outcomes = deliveries.map((d) =>
    d.ok ? outcomeOf(d.result) : { ok: false, text: `${d.functionId} failed: ${d.error}` },
  );
  return {
    ok: outcomes.length > 0 && outcomes.every((o) => o.ok),
    text: outcomes.map((o) => o.text).join('; ') || 'no worker takes this capability',
    ms: performance.now() - t0,
  };
}

/** Resolves on Ctrl-C (SIGINT) or SIGTERM. */
function interrupted(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}

/**
 * A pass now, then each step on its schedule's period (compressed by `speedup`) until `stop`; a step
 * never overlaps itself. Ends with the summary of everything that ran.
 */
export async function runOnSchedules(
  ctx: CliContext,
  plan: RunStep[],
  clusters: RegisteredCluster[],
  reporter: ProgressReporter,
  opts: { speedup: number; stop: Promise<void> },
): Promise<number> {
  await runPass(ctx, plan, clusters, reporter);
  reporter.note(schedulesLine(plan, opts.speedup));
  const running = new Set<Promise<void>>();
  const timers = plan.map((step) => {
    let busy = false;
    return setInterval(
      () => {
        if (busy) return;
        busy = true;
        const p = runStep(ctx, step, clusters, reporter).finally(() => {
          busy = false;
          running.delete(p);
        });
        running.add(p);
      },
      (step.schedule.everyMinutes * 60_000) / opts.speedup,
    );
  });
  await opts.stop;
  for (const t of timers) clearInterval(t);
  await Promise.allSettled([...running]);
  return reporter.finish();
}

function schedulesLine(plan: RunStep[], speedup: number): string {
  const each = [...new Map(plan.map((s) => [s.schedule.id, s.schedule])).values()].map((s) =>
    speedup === 1
      ? `${s.id} every ${s.everyMinutes} min`
      : `${s.id} every ${wallSeconds((s.everyMinutes * 60_000) / speedup)} (${s.everyMinutes} min / ${speedup})`,
  );
  return `running on the schedules until Ctrl-C${speedup === 1 ? '' : ` at --speedup ${speedup}`}: ${each.join(', ')}`;
}
