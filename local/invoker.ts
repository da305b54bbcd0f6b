import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { functionSpec } from '../shared/capabilities.js';
import type { LambdaHandler } from '../shared/platform/handler.js';
import { lambdaContext } from './lambda-context.js';

export interface DeadLetter {
  functionId: string;
  source: string;
  event: unknown;
  error: string;
  attempts: number;
  at: string;
}

export interface InvocationStats {
  invocations: number;
  failures: number;
  retries: number;
  /** Wall-clock time spent in the handler, summed over invocations. */
  totalMs: number;
}

/** Lambda's asynchronous invocation: one try and two retries, then the on-failure destination. */
export const ASYNC_ATTEMPTS = 3;

/**
 * Runs the very handler objects that Lambda runs (each function's `entry` module, `handler` export),
 * with the function's timeout, Lambda's async retry policy and a dead-letter list.
 */
export class LocalInvoker {
  private readonly handlers = new Map<string, Promise<LambdaHandler>>();
  /** Free "containers" of each function and the invocations waiting for one (see invoke). */
  private readonly slots = new Map<string, { free: number; waiting: (() => void)[] }>();
  readonly deadLetters: DeadLetter[] = [];
  readonly stats = new Map<string, InvocationStats>();
  /** Called when an invocation ends (the fleet benchmark times each cluster's completion). */
  onInvoked?: (functionId: string, ms: number, ok: boolean) => void;

  constructor(
    private readonly repoRoot: string,
    private readonly retryDelayMs = 200,
    /** Concurrent invocations per function, like Lambda's reserved concurrency; default one. */
    private readonly concurrencyOf: (functionId: string) => number = () => 1,
  ) {}

  private handler(functionId: string): Promise<LambdaHandler> {
    let h = this.handlers.get(functionId);
    if (!h) {
      const spec = functionSpec(functionId);
      h = import(pathToFileURL(join(this.repoRoot, handlerPath(spec.entry))).href).then((m) => {
        if (typeof m.handler !== 'function') throw new Error(`${spec.entry} does not export a handler`);
        return m.handler as LambdaHandler;
      });
      this.handlers.set(functionId, h);
    }
    return h;
  }

  private stat(functionId: string): InvocationStats {
    let s = this.stats.get(functionId);
    if (!s) {
      s = { invocations: 0, failures: 0, retries: 0, totalMs: 0 };
      this.stats.set(functionId, s);
    }
    return s;
  }

  /**
   * One synchronous invocation; rejects on error or when the function's timeout passes.
   *
   * By default a function runs one invocation at a time here, like one warm Lambda container, in the
   * order they came. Lambda runs concurrent invocations in separate containers; sharing one process,
   * they share the function's module-level logger and its keys, so log lines may name the wrong cluster
   * when a concurrency above one is asked for (the fleet benchmark, which logs nothing).
   */
  async invoke(functionId: string, event: unknown): Promise<unknown> {
    await this.acquire(functionId);
    try {
      return await this.invokeNow(functionId, event);
    } finally {
      this.release(functionId);
    }
  }

  private slot(functionId: string) {
    let s = this.slots.get(functionId);
    if (!s) {
      s = { free: Math.max(1, this.concurrencyOf(functionId)), waiting: [] };
      this.slots.set(functionId, s);
    }
    return s;
  }

  private async acquire(functionId: string): Promise<void> {
    const s = this.slot(functionId);
    if (s.free > 0) {
      s.free--;
      return;
    }
    await new Promise<void>((r) => s.waiting.push(r));
  }

  private release(functionId: string): void {
    const s = this.slot(functionId);
    const next = s.waiting.shift();
    if (next) next();
    else s.free++;
  }

  private async invokeNow(functionId: string, event: unknown): Promise<unknown> {
    const spec = functionSpec(functionId);
    const handler = await this.handler(functionId);
    const stat = this.stat(functionId);
    stat.invocations++;
    let timer: NodeJS.Timeout | undefined;
    const started = performance.now();
    let ok = false;
    try {
      return await Promise.race([
        handler(structuredClone(event), lambdaContext(spec.id, spec.timeoutSeconds, spec.memoryMb)),
        new Promise((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`${functionId} timed out after ${spec.timeoutSeconds} s`)),
            spec.timeoutSeconds * 1000,
          );
          timer.unref();
        }),
      ]).then((r) => {
        ok = true;
        return r;
      });
    } catch (err) {
      stat.failures++;
      throw err;
    } finally {
      clearTimeout(timer);
      const ms = performance.now() - started;
      stat.totalMs += ms;
      this.onInvoked?.(functionId, ms, ok);
    }
  }

  /** An asynchronous invocation: retried like Lambda's, dead-lettered when every attempt fails. */
  async invokeAsync(functionId: string, event: unknown, source: string): Promise<boolean> {
    return (await this.invokeAsyncOutcome(functionId, event, source)).ok;
  }

  /** As invokeAsync, with what the last attempt returned or threw (`fleetscope run` reports it). */
  async invokeAsyncOutcome(functionId: string, event: unknown, source: string): Promise<AsyncOutcome> {
    let lastError: unknown;
    for (let attempt = 1; attempt <= ASYNC_ATTEMPTS; attempt++) {
      try {
        return { ok: true, result: await this.invoke(functionId, event), attempts: attempt };
      } catch (err) {
        lastError = err;
        if (attempt < ASYNC_ATTEMPTS) {
          this.stat(functionId).retries++;
          await new Promise((r) => setTimeout(r, this.retryDelayMs * 2 ** (attempt - 1)));
        }
      }
    }
    const error = lastError instanceof Error ? lastError.message : String(lastError);
    this.deadLetters.push({
      functionId,
      source,
      event,
      error,
      attempts: ASYNC_ATTEMPTS,
      at: new Date().toISOString(),
    });
    return { ok: false, error, attempts: ASYNC_ATTEMPTS };
  }
}

/** How an asynchronous invocation ended: its result, or the last error once every attempt failed. */
export interface AsyncOutcome {
  ok: boolean;
  result?: unknown;
  error?: string;
  attempts: number;
}

/**
 * Where a handler's module is: its bundle when this code itself runs from the dist/ bundle (so handler
 * and CLI share one copy of each module and its state), else its TypeScript source.
 */
function handlerPath(entry: string): string {
  return BUNDLED ? join('dist', entry.replace(/\.ts$/, '.js')) : entry;
}
const BUNDLED = /\/dist\/chunks\/[^/]+\.js$/.test(import.meta.url);
