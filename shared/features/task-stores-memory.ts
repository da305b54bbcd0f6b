/**
 * The task stores in process (the port: TaskStores in ./spec.ts), for unit tests: the cluster state in
 * memory, every write passing the task's fence. There is no table: a hook of a capability whose store is
 * not behind a port yet (it reads `db`) fails, naming why.
 */
import { MemoryClusterState } from './cluster-state-memory.js';
import type { TaskContext, TaskStores } from './spec.js';

const noTable = new Proxy({} as TaskContext['db'], {
  get: () => {
    throw new Error('no DynamoDB table in memory: this hook needs its capability store behind a port');
  },
});

export function memoryTaskStores(state = new MemoryClusterState()): TaskStores {
  return {
    fenced: (fence) => ({ state: state.fenced(() => fence('state write')), db: noTable, table: 'memory' }),
  };
}
