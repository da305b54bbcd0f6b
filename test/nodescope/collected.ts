/**
 * Whether an object is gone after a full garbage collection: for tests that something kept in process
 * does not keep alive what it should not (V8's gc, exposed at run time: no command-line flag needed).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

export async function collected(ref: WeakRef<object>): Promise<boolean> {
  // A WeakRef keeps its target until the job that made or read it ends; then a full collection decides.
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  return ref.deref() === undefined;
}
