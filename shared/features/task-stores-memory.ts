/**
 * The task stores in process (the port: TaskStores in ./spec.ts), for unit tests: the cluster state
 * and the balloons' store in memory, the claims' identities as given (none: a cluster in no ClusterSet),
 * every write passing the task's fence as the DynamoDB adapter's do.
 */
import type { BalloonStore } from '../balloons/store.js';
import { MemoryBalloonStore } from '../balloons/store-memory.js';
import { MemoryClusterState } from './cluster-state-memory.js';
import type { TaskContext, TaskStores } from './spec.js';

/** The balloons' store's writes: each passes the fence first. */
const BALLOON_WRITES: readonly (keyof BalloonStore)[] = [
  'saveState',
  'putPolicy',
  'deletePolicy',
  'putRequest',
  'deleteRequestIf',
  'deleteRequest',
  'clear',
];

/** `port` with every method named in `writes` first passing `fence`. */
function fencedPort<T extends object>(port: T, writes: readonly (keyof T)[], fence: () => Promise<void>): T {
  return new Proxy(port, {
    get: (target, prop, receiver) => {
      const v = Reflect.get(target, prop, receiver);
      if (typeof v !== 'function') return v;
      if (!writes.includes(prop as keyof T)) return v.bind(target);
      return async (...args: unknown[]) => {
        await fence();
        return v.apply(target, args);
      };
    },
  });
}

export function memoryTaskStores(
  state = new MemoryClusterState(),
  balloons: BalloonStore = new MemoryBalloonStore(),
  claims: TaskContext['claims'] = { getIdentity: async () => undefined },
): TaskStores {
  return {
    fenced: (fence) => ({
      state: state.fenced(() => fence('state write')),
      balloons: fencedPort(balloons, BALLOON_WRITES, () => fence('balloon state write')),
      claims,
    }),
  };
}
