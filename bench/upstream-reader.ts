/**
 * An upstream-VPA-like reader, for comparison: the recommender keeps every pod in an informer (one
 * paged list, then a watch from the list's resourceVersion, with bookmarks) and reads every pod's
 * PodMetrics once a minute (metrics-server, all namespaces). Stdin drives it: `metrics` reads the
 * PodMetrics once, `report` prints one JSON line of what it read since the last report (counted on the
 * responses, tapKubernetesApi) with its CPU and peak RSS, and the pods its informer holds.
 */
import { createInterface } from 'node:readline';
import { apiFetcher } from './fetcher.js';
import { tapKubernetesApi } from './wire-tap.js';

type Meta = { namespace?: string; name?: string; resourceVersion?: string };
type Page = { items?: { metadata?: Meta }[]; metadata?: { continue?: string; resourceVersion?: string } };

const tap = tapKubernetesApi();
const api = apiFetcher(process.env.BENCH_KUBECONFIG ?? '');
const pods = new Map<string, unknown>();
const key = (m: Meta | undefined) => `${m?.namespace}/${m?.name}`;
let events = 0;
let cpu0 = process.cpuUsage();

/** The informer's list: pages of 500 (client-go's reflector), every pod kept. */
async function list(): Promise<string> {
  let token: string | undefined;
  let rv = '';
  do {
    const page = (await api.get('/api/v1/pods', { limit: 500, continue: token })) as Page;
    for (const p of page.items ?? []) pods.set(key(p.metadata), p);
    rv ||= page.metadata?.resourceVersion ?? '';
    token = page.metadata?.continue || undefined;
  } while (token);
  return rv;
}

function report(): void {
  const cpu = process.cpuUsage(cpu0);
  cpu0 = process.cpuUsage();
  process.stdout.write(
    `${JSON.stringify({
      ...tap.reset(),
      cpuMs: (cpu.user + cpu.system) / 1000,
      maxRssMiB: process.resourceUsage().maxRSS / 1024,
      pods: pods.size,
      events,
      rewatches,
    })}\n`,
  );
  events = 0;
}

/**
 * The informer's watch from the last resourceVersion seen; as client-go's reflector, a watch the server or the connection ends is
 * started again from the last resourceVersion seen (counted: `rewatches`).
 */
let lastRv = await list();
let rewatches = 0;
let expired = false;
let watch: { stop(): void } | undefined;
function startWatch(): void {
  watch = api.watch(
    '/api/v1/pods',
    { watch: 1, resourceVersion: lastRv, allowWatchBookmarks: 'true', timeoutSeconds: 3600 },
    (e) => {
      const obj = e.object as { metadata?: Meta };
      if (obj.metadata?.resourceVersion) lastRv = obj.metadata.resourceVersion;
      if (e.type === 'BOOKMARK') return;
      events++;
      if (e.type === 'DELETED') pods.delete(key(obj.metadata));
      else if (e.type === 'ERROR') expired = true;
      else pods.set(key(obj.metadata), obj);
    },
    () => {
      rewatches++;
      // An ERROR (410: the revision left the watch cache) lists again before watching, as a reflector.
      const from = expired ? list() : Promise.resolve(lastRv);
      expired = false;
      from.then(
        (rv) => {
          lastRv = rv;
          startWatch();
        },
        // A list that fails after its retries ends the reader with its reason (the bench names it).
        (e: unknown) => {
          console.error('upstream-reader: listing again failed:', e);
          process.exit(1);
        },
      );
    },
  );
}
startWatch();
report();
for await (const line of createInterface({ input: process.stdin })) {
  const what = line.trim();
  if (what === 'metrics') await api.get('/apis/metrics.k8s.io/v1beta1/pods');
  else if (what === 'report') {
    // Let the watch deliver what the server has sent before counting.
    await new Promise((r) => setTimeout(r, 500));
    report();
  } else break;
}
watch?.stop();
api.close();
process.exit(0);
