/** metrics-server's usage quantities as integers (millicores, bytes); 0 when absent or unreadable. */
import { parseCpu, parseMemory } from '../kernel/quantity.js';

const safe = (f: () => number): number => {
  try {
    return f();
  } catch {
    return 0;
  }
};
export const cpuOfUsage = (q: string | undefined): number => (q === undefined ? 0 : safe(() => parseCpu(q)));
export const memoryOfUsage = (q: string | undefined): number =>
  q === undefined ? 0 : safe(() => parseMemory(q));
