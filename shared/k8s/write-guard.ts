/**
 * A guard around every write a piece of code sends to a cluster, whichever client or API it goes
 * through (client-node's typed APIs and the raw reader alike): `before` may refuse the write (throw),
 * `after` learns that it was accepted. It follows the async context, so a feature transition's task is
 * fenced to its claim without the task's code (a capability's hook) knowing about it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

export interface WriteGuard {
  /** Called before each write is sent; throws to refuse it. */
  before(operation: string): Promise<void>;
  /** Called after the server accepted it (2xx). */
  after(operation: string): Promise<void>;
  /**
   * After a create (which no precondition can fence): whether what was just created may stay. False
   * when the writer lost its right to write while the create was in flight and the world moved on
   * without it: the creator then removes what it created.
   */
  confirm?(operation: string): Promise<boolean>;
}

const current = new AsyncLocalStorage<WriteGuard>();

/** Runs `fn` with every cluster write it makes (directly or not) passing through `guard`. */
export const withWriteGuard = <T>(guard: WriteGuard, fn: () => Promise<T>): Promise<T> =>
  current.run(guard, fn);

/** Runs `fn` with no guard: a writer taking back its own refused create. */
export const unguarded = <T>(fn: () => Promise<T>): Promise<T> => current.exit(fn);

/** The guard of the code running now, if any. */
export const writeGuard = (): WriteGuard | undefined => current.getStore();
