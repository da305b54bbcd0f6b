/**
 * The floor a balloon cycle's CPU time is compared with: the same API responses (the two balloon
 * objects, every node, every pod, node metrics) fetched on one keep-alive TLS connection and
 * JSON-parsed, and nothing else, in a fresh process.
 */
import { apiFetcher, measureFloor } from './fetcher.js';
import { balloonReads } from './floor-reads.js';

const api = apiFetcher(process.env.BENCH_KUBECONFIG ?? '');
await measureFloor(api, () => balloonReads(api));
process.exit(0);
