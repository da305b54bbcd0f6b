/**
 * A simulated metrics-server behind metrics.k8s.io/v1beta1 (facts section 3): NodeMetrics and
 * PodMetrics computed from the load profiles at the simulated clock's time, scraped every 15 s per
 * node with a small per-node phase and jitter; quantities as metrics-server writes them (nanocores,
 * Ki); objects absent until two scrapes; labelSelector; fieldSelector only metadata.name/namespace;
 * limit/continue ignored.
 */
import { formatUsageCpu, formatUsageMemory, parseCpu, parseMemory } from '../../shared/kernel/quantity.js';
import { goDuration, rfc3339 } from './clock.js';
import { ApiError } from './errors.js';
import { fnv1a, mix32, unit } from './ids.js';
import type { Json, JsonObject } from './json.js';
import { containerResources, type Kubelet } from './kubelet.js';
import { parseFieldSelector, parseLabelSelector } from './selectors.js';
import type { SimState } from './state.js';
import { containerUsage } from './workload.js';

export const METRIC_RESOLUTION_MS = 15_000;
const API_VERSION = 'metrics.k8s.io/v1beta1';

interface Scrape {
  /** Time of the last scrape of the node. */
  last: number;
  /** Time of the scrape before it (window = last - prev). */
  prev: number;
  timestamp: string;
  window: string;
}

/** Per-request memo: one scrape computation per node, one parsed start time per pod status. */
type Memo = Map<string, Scrape>;

const startTimes = new WeakMap<object, number>();

export class MetricsServer {
  constructor(private readonly cluster: SimState & { readonly kubelet: Pick<Kubelet, 'oomState'> }) {}

  /** The last two scrapes of a node at time `now`: a fixed per-node phase plus tens of ms of jitter. */
  scrape(nodeName: string, now: number, memo?: Memo): Scrape {
    const hit = memo?.get(nodeName);
    if (hit) return hit;
    const h = fnv1a(nodeName, this.cluster.seedHash);
    const phase = h % METRIC_RESOLUTION_MS;
    const n = Math.floor((now - phase) / METRIC_RESOLUTION_MS);
    const at = (k: number) => k * METRIC_RESOLUTION_MS + phase + Math.floor(unit(h, k) * 60) - 30;
    let last = at(n);
    let k = n;
    if (last > now) last = at(--k);
    const prev = at(k - 1);
    const s = { last, prev, timestamp: rfc3339(last), window: goDuration(last - prev) };
    memo?.set(nodeName, s);
    return s;
  }

  private podUsage(pod: Json, t: number): { name: string; cpu: number; mem: number }[] {
    const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
    const loads = this.cluster.containerLoads(pod);
    return (pod.spec.containers ?? []).map((c: Json) => {
      const res = containerResources(c);
      const l = loads.get(c.name);
      const h = fnv1a(c.name, fnv1a(key, this.cluster.seedHash));
      if (!l) {
        // No load profile: a near-idle container (a pause-like process).
        return { name: c.name, cpu: 100_000 + (h % 900_000), mem: (256 + (h % 768)) * 1024 };
      }
      const oom = this.cluster.kubelet.oomState(key, c.name, pod);
      const u = containerUsage(l, res, t, oom.lastStartMs, h);
      return { name: c.name, cpu: u.cpuNanos, mem: u.memoryBytes };
    });
  }

  private readyPod(pod: Json, s: Scrape): boolean {
    const st = pod.status;
    if (st?.phase !== 'Running') return false;
    let started = startTimes.get(st);
    if (started === undefined) {
      started = Date.parse(st.startTime ?? pod.metadata.creationTimestamp);
      startTimes.set(st, started);
    }
    return Number.isFinite(started) && started <= s.prev;
  }

  podMetrics(pod: Json, now: number, memo?: Memo): JsonObject | undefined {
    const s = this.scrape(pod.spec?.nodeName ?? pod.metadata.name, now, memo);
    if (!this.readyPod(pod, s)) return undefined;
    const meta: JsonObject = {
      name: pod.metadata.name,
      namespace: pod.metadata.namespace,
      creationTimestamp: rfc3339(now),
    };
    if (pod.metadata.labels) meta.labels = pod.metadata.labels;
    return {
      metadata: meta,
      timestamp: s.timestamp,
      window: s.window,
      containers: this.podUsage(pod, s.last).map((u) => ({
        name: u.name,
        usage: { cpu: formatUsageCpu(u.cpu), memory: formatUsageMemory(u.mem) },
      })),
    };
  }

  nodeMetrics(node: Json, now: number): JsonObject | undefined {
    const name = node.metadata.name;
    const s = this.scrape(name, now);
    const created = Date.parse(node.metadata.creationTimestamp);
    if (!Number.isFinite(created) || created > s.prev) return undefined;
    if (!(node.status?.conditions ?? []).some((c: Json) => c.type === 'Ready' && c.status === 'True'))
      return undefined;
    const pods = this.cluster.store.collection('pods');
    let cpu = 0;
    let mem = 0;
    for (const k of pods.indexed(name)) {
      const p = pods.get(k);
      if (p?.status?.phase !== 'Running') continue;
      for (const u of this.podUsage(p, s.last)) {
        cpu += u.cpu;
        mem += u.mem;
      }
    }
    // The kubelet, container runtime and OS: a share of the node plus noise.
    const capCpu = safe(() => parseCpu(node.status?.capacity?.cpu ?? '0'));
    const capMem = safe(() => parseMemory(node.status?.capacity?.memory ?? '0'));
    const h = fnv1a(name, this.cluster.seedHash);
    cpu += (60 + capCpu * 0.015) * 1e6 * (0.9 + 0.2 * unit(h, Math.floor(s.last / METRIC_RESOLUTION_MS)));
    mem += 500 * 2 ** 20 + capMem * 0.02 + (mix32(h) % 64) * 2 ** 20;
    const meta: JsonObject = { name, creationTimestamp: rfc3339(now) };
    if (node.metadata.labels) meta.labels = node.metadata.labels;
    return {
      metadata: meta,
      timestamp: s.timestamp,
      window: s.window,
      usage: {
        cpu: formatUsageCpu(Math.round(cpu)),
        memory: formatUsageMemory(Math.floor(mem / 4096) * 4096),
      },
    };
  }

  listNodes(q: { labelSelector?: string; fieldSelector?: string }): JsonObject {
    const now = this.cluster.clock.now();
    const labels = parseLabelSelector(q.labelSelector);
    const fields = parseFieldSelector(q.fieldSelector, 'nodes', 'meta');
    const nodes = this.cluster.store.collection('nodes');
    const items: JsonObject[] = [];
    for (const k of nodes.keys()) {
      const n = nodes.get(k);
      if (!labels(n.metadata.labels) || !fields.match(n)) continue;
      const m = this.nodeMetrics(n, now);
      if (m) items.push(m);
    }
    return { kind: 'NodeMetricsList', apiVersion: API_VERSION, metadata: {}, items };
  }

  getNode(name: string): JsonObject {
    const n = this.cluster.store.get('nodes', name);
    const m = n ? this.nodeMetrics(n, this.cluster.clock.now()) : undefined;
    if (!m) throw notFound('nodemetrics', name);
    return { kind: 'NodeMetrics', apiVersion: API_VERSION, ...m };
  }

  listPods(namespace: string | undefined, q: { labelSelector?: string; fieldSelector?: string }): JsonObject {
    const now = this.cluster.clock.now();
    const labels = parseLabelSelector(q.labelSelector);
    const fields = parseFieldSelector(q.fieldSelector, 'pods', 'meta');
    const pods = this.cluster.store.collection('pods');
    const items: JsonObject[] = [];
    const prefix = namespace ? `${namespace}/` : '';
    const memo: Memo = new Map();
    for (const k of pods.keys()) {
      if (prefix && !k.startsWith(prefix)) continue;
      const p = pods.get(k);
      if (!labels(p.metadata.labels) || !fields.match(p)) continue;
      const m = this.podMetrics(p, now, memo);
      if (m) items.push(m);
    }
    return { kind: 'PodMetricsList', apiVersion: API_VERSION, metadata: {}, items };
  }

  getPod(namespace: string, name: string): JsonObject {
    const p = this.cluster.store.get('pods', `${namespace}/${name}`);
    const m = p ? this.podMetrics(p, this.cluster.clock.now()) : undefined;
    if (!m) throw notFound('podmetrics', `${namespace}/${name}`);
    return { kind: 'PodMetrics', apiVersion: API_VERSION, ...m };
  }
}

function safe(f: () => number): number {
  try {
    return f();
  } catch {
    return 0;
  }
}

function notFound(resource: string, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${resource}.metrics.k8s.io "${name}" not found`, {
    name,
    group: 'metrics.k8s.io',
    kind: resource,
  });
}
