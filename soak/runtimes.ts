/**
 * The soak's runtime processes: started with fork (tsx), killed with SIGKILL, each one's output
 * appended to a log file that the secret scan reads afterwards.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tsxImport } from '../local/root.js';
import type { FromChild, ToChild } from './child.js';

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'child.ts');

export class RuntimeProcess {
  private waiters: ((m: FromChild) => boolean)[] = [];
  private exited = false;
  private exitWaiters: (() => void)[] = [];

  private constructor(
    readonly name: string,
    private readonly child: ChildProcess,
  ) {
    child.on('message', (m: FromChild) => {
      this.waiters = this.waiters.filter((w) => !w(m));
    });
    child.on('exit', () => {
      this.exited = true;
      for (const w of this.exitWaiters.splice(0)) w();
    });
  }

  /** `skewMs`: how far this runtime's clocks run ahead of the soak's (behind when negative). */
  static async start(name: string, stateDir: string, logFile: string, skewMs = 0): Promise<RuntimeProcess> {
    const fd = openSync(logFile, 'a');
    const env: NodeJS.ProcessEnv = { ...process.env, SOAK_STATE_DIR: stateDir, SOAK_SKEW_MS: String(skewMs) };
    // Handler logs on (INFO): the secret scan reads them. Endpoint overrides of this process are not
    // the child's business: it finds the shared state's server itself.
    env.FLEETSCOPE_LOG_LEVEL = 'INFO';
    env.POWERTOOLS_METRICS_DISABLED = 'true';
    // The simulated kubelets answer a resize when the soak's clock moves, not in wall-clock seconds:
    // waiting 3 s to read inflated balloons back would only slow every cycle down.
    env.FLEETSCOPE_BALLOONS_SETTLE_MS = '0';
    for (const k of Object.keys(env))
      if (k.startsWith('AWS_ENDPOINT_URL') || k === 'FLEETSCOPE_TABLE') delete env[k];
    const child = fork(CHILD, [], {
      execArgv: ['--import', tsxImport()],
      env,
      stdio: ['ignore', fd, fd, 'ipc'],
    });
    closeSync(fd);
    const p = new RuntimeProcess(name, child);
    await p.next((m) => m.type === 'ready', 60_000);
    return p;
  }

  send(m: ToChild): void {
    this.child.send(m);
  }

  /** The next message matching `pick`; undefined if the process exits first. */
  next<T extends FromChild>(pick: (m: FromChild) => m is T, timeoutMs?: number): Promise<T | undefined>;
  next(pick: (m: FromChild) => boolean, timeoutMs?: number): Promise<FromChild | undefined>;
  next(pick: (m: FromChild) => boolean, timeoutMs = 600_000): Promise<FromChild | undefined> {
    if (this.exited) return Promise.resolve(undefined);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${this.name}: no answer in ${timeoutMs} ms`)),
        timeoutMs,
      );
      const done = (m: FromChild | undefined) => {
        clearTimeout(timer);
        resolve(m);
      };
      this.waiters.push((m) => {
        if (!pick(m)) return false;
        done(m);
        return true;
      });
      this.exitWaiters.push(() => done(undefined));
    });
  }

  kill(): Promise<void> {
    if (this.exited) return Promise.resolve();
    const gone = new Promise<void>((r) => this.exitWaiters.push(r));
    this.child.kill('SIGKILL');
    return gone;
  }

  async stop(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((r) => this.exitWaiters.push(r));
    this.send({ type: 'stop' });
    await gone;
  }
}
