/**
 * The floor a cycle's CPU time is compared with: the same API responses fetched (one keep-alive TLS
 * connection, like the cycle) and JSON-parsed, and nothing else. Run in a fresh process, like the cycle.
 * BENCH_MODE: nodescope (default), balloons or both (floor-reads.ts).
 */
import { apiFetcher, measureFloor } from './fetcher.js';
import { readsOf } from './floor-reads.js';

const api = apiFetcher(process.env.BENCH_KUBECONFIG ?? '');
await measureFloor(api, () => readsOf(api, process.env.BENCH_MODE ?? 'nodescope'));
process.exit(0);
