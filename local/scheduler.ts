import { allSchedules, schedulesInOrder } from '../shared/capabilities.js';
import { oneTickOf, type ScheduleSpec } from '../shared/platform/catalogue.js';
import type { LocalBus } from './bus.js';
import type { LocalInvoker } from './invoker.js';

/** Milliseconds since the epoch on the clock the schedules run on (the demo's: the simulated clusters'). */
export type ScheduleClock = () => number;

/**
 * The wall clock compressed `speedup` times from now: what the schedules run on when no simulator keeps
 * a clock (a real fleet under `npm start --speedup X`).
 */
export function speedupClock(speedup: number, wall: () => number = Date.now): ScheduleClock {
  const t0 = wall();
  return () => t0 + (wall() - t0) * speedup;
}

/**
 * The local stand-in for EventBridge Scheduler: the same schedules the stack deploys, each invoking its
 * target with its input. Periods are measured on the schedule clock, the one the control plane's waits,
 * leases and backoffs read too (see startLocalRuntime), so a compressed clock compresses all of them
 * alike. `runOnce` runs every schedule exactly once in dependency order, waiting for the work each one
 * fans out through the bus before starting the next; `runDue` runs those whose period has passed.
 */
export class LocalScheduler {
  private timer: NodeJS.Timeout | undefined;
  /** When each schedule last ran, on the schedule clock. */
  private readonly lastRun = new Map<string, number>();

  constructor(
    private readonly invoker: LocalInvoker,
    private readonly bus: LocalBus,
    private readonly clock: ScheduleClock = Date.now,
    private readonly schedules: ScheduleSpec[] = allSchedules(),
  ) {}

  async runOnce(onSchedule?: (s: ScheduleSpec) => void): Promise<void> {
    for (const schedule of oneTickOf(schedulesInOrder(this.schedules))) {
      onSchedule?.(schedule);
      await this.fire(schedule);
    }
  }

  /**
   * Runs, in dependency order, each schedule whose period has passed on the schedule clock since it last
   * ran (or that never ran); returns those it ran.
   */
  async runDue(onTick?: (s: ScheduleSpec) => void): Promise<ScheduleSpec[]> {
    const now = this.clock();
    const due = schedulesInOrder(this.schedules).filter((s) => {
      const last = this.lastRun.get(s.id);
      return last === undefined || now - last >= s.everyMinutes * 60_000;
    });
    // A schedule that leaves its ticks to another (the follow, to the cycle) waits a period of its own.
    const run = oneTickOf(due);
    for (const s of due) if (!run.includes(s)) this.lastRun.set(s.id, now);
    for (const schedule of run) {
      await this.fire(schedule);
      onTick?.(schedule);
    }
    return run;
  }

  /**
   * Looks every `pollMs` of wall time for schedules due on the schedule clock; `onTick` runs after each
   * one's fan-out has finished. A pass still running when the next poll comes is not overlapped.
   */
  start(pollMs: number, onTick: (s: ScheduleSpec) => void): void {
    let running = false;
    this.timer = setInterval(async () => {
      if (running) return;
      running = true;
      try {
        await this.runDue(onTick);
      } finally {
        running = false;
      }
    }, pollMs);
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private async fire(schedule: ScheduleSpec): Promise<void> {
    this.lastRun.set(schedule.id, this.clock());
    await this.invoker.invokeAsync(schedule.target, schedule.input, `schedule:${schedule.id}`);
    await this.bus.drain();
  }
}

/** The schedules' periods on the one clock they run on, and what that clock is. */
export function schedulesLine(schedules: ScheduleSpec[], speedup: number): string {
  const periods = schedules.map((s) => `${s.id} every ${s.everyMinutes} min`).join(', ');
  if (speedup === 1) return `running on the schedules: ${periods}`;
  return `running at --speedup ${speedup} (one wall second is ${speedup} s of sim time, the clock of the schedules, the clusters and every wait): ${periods}`;
}
