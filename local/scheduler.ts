import { allSchedules, schedulesInOrder } from '../shared/capabilities.js';
import type { ScheduleSpec } from '../shared/platform/catalogue.js';
import type { LocalBus } from './bus.js';
import type { LocalInvoker } from './invoker.js';

/**
 * The local stand-in for EventBridge Scheduler: the same schedules the stack deploys, each invoking its
 * target with its input. `runOnce` runs every schedule exactly once in dependency order, waiting for
 * the work each one fans out through the bus before starting the next.
 */
export class LocalScheduler {
  private timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly invoker: LocalInvoker,
    private readonly bus: LocalBus,
    private readonly schedules: ScheduleSpec[] = allSchedules(),
  ) {}

  async runOnce(onSchedule?: (s: ScheduleSpec) => void): Promise<void> {
    for (const schedule of schedulesInOrder(this.schedules)) {
      onSchedule?.(schedule);
      await this.invoker.invokeAsync(schedule.target, schedule.input, `schedule:${schedule.id}`);
      await this.bus.drain();
    }
  }

  /**
   * Runs each schedule on its own timer. `speedup` compresses time for demos (60 turns a 15-minute
   * schedule into 15 seconds); `onTick` runs after each tick's fan-out has finished.
   */
  start(speedup: number, onTick: (s: ScheduleSpec) => void): void {
    for (const schedule of this.schedules) {
      const every = (schedule.everyMinutes * 60_000) / speedup;
      let running = false;
      this.timers.push(
        setInterval(async () => {
          if (running) return; // never overlap one schedule with itself
          running = true;
          try {
            await this.invoker.invokeAsync(schedule.target, schedule.input, `schedule:${schedule.id}`);
            await this.bus.drain();
            onTick(schedule);
          } finally {
            running = false;
          }
        }, every),
      );
    }
  }

  stop(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
  }
}
