/**
 * The child processes of a test cluster (etcd, kube-apiserver, controller-manager, scheduler, hollow
 * nodes), each the leader of its own process group, so that whatever it starts dies with it. None may
 * outlive the process that started it, however that one ends:
 * - stopped: SIGTERM to the group, SIGKILL after a grace period;
 * - this process exits (a failed test, a runner that calls process.exit) or gets SIGINT/SIGTERM/SIGHUP:
 *   every group is killed synchronously before it goes;
 * - this process is SIGKILLed (a runner's timeout): a detached watchdog, started with the first child,
 *   sees its owner gone within a second and kills every group listed in its file.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A child's process id, which is also its process group's. */
const live = new Map<number, ChildProcess>();
let registry: string | undefined;
let watchdog: ChildProcess | undefined;

/**
 * Starts `binary args` as the leader of a new process group, its output appended to `log`, with only
 * PATH and `env` in its environment (no credential of this process leaks into a component).
 */
export function launch(
  binary: string,
  args: string[],
  log: string,
  env: Record<string, string> = {},
): ChildProcess {
  installHooks();
  writeFileSync(log, '');
  const child = spawn('sh', ['-c', 'exec "$0" "$@" >>"$LOG" 2>&1', binary, ...args], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env, LOG: log },
    stdio: 'ignore',
    detached: true,
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start ${binary}`);
  live.set(pid, child);
  writeRegistry();
  child.once('exit', () => {
    live.delete(pid);
    writeRegistry();
  });
  return child;
}

/** SIGTERM to the child's group, SIGKILL after `graceMs`; resolves once the child has exited. */
export async function terminate(child: ChildProcess, graceMs = 10_000): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return;
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    killGroup(pid, 'SIGTERM');
    const timer = setTimeout(() => killGroup(pid, 'SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }
  // The leader is gone; anything it started in its group goes too.
  killGroup(pid, 'SIGKILL');
}

/** Whether any process of group `pid` is still alive (signal 0 probes without killing). */
export function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The process groups this process has running now. */
export function liveGroups(): number[] {
  return [...live.keys()];
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

function killAll(): void {
  for (const pid of live.keys()) killGroup(pid, 'SIGKILL');
  live.clear();
  writeRegistry();
}

function installHooks(): void {
  if (registry) return;
  const dir = mkdtempSync(join(tmpdir(), 'fleetscope-groups-'));
  registry = join(dir, 'groups');
  writeFileSync(registry, '');
  process.once('exit', () => {
    killAll();
    if (watchdog?.pid) killGroup(watchdog.pid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = () => {
      killAll();
      process.off(signal, onSignal);
      // Only this listener held the signal: end as the signal's default would.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    };
    process.on(signal, onSignal);
  }
  // The watchdog outlives a SIGKILLed owner: it polls the owner and then kills the listed groups.
  watchdog = spawn(
    'sh',
    [
      '-c',
      'while kill -0 "$0" 2>/dev/null; do sleep 1; done; for g in $(cat "$1" 2>/dev/null); do kill -KILL "-$g" 2>/dev/null; done; rm -rf "$(dirname "$1")"',
      String(process.pid),
      registry,
    ],
    { stdio: 'ignore', detached: true },
  );
  watchdog.unref();
}

function writeRegistry(): void {
  if (registry) writeFileSync(registry, [...live.keys()].join('\n'));
}
