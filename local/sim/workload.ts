/**
 * Load profiles: a deterministic function of (node, container, simulated time) giving CPU and memory
 * usage, and the OOM kills that follow when memory reaches the container's limit. metrics.k8s.io
 * reports these usages; the kubelet simulation turns the kills into restartCount / lastState.
 */
import { parseCpu, parseMemory } from '../../shared/kernel/quantity.js';
import { fnv1a, unit } from './ids.js';

export interface LoadProfile {
  /** Base CPU per container: millicores, or a quantity such as "150m". Default: 40% of the CPU request, else 10m. */
  cpu?: number | string;
  /** Base memory working set per container: bytes, or a quantity such as "200Mi". Default: 60% of the request, else 32Mi. */
  memory?: number | string;
  /** Overrides of cpu/memory by container name. */
  containers?: Record<string, { cpu?: number | string; memory?: number | string }>;
  /**
   * Node-to-node spread of usage. 'uniform': the same on every node. 'heterogeneous': deterministic
   * factors spread log-uniformly over `perNodeRange` (default [0.25, 4]); with two or more nodes the
   * lowest and highest factors are exactly the range ends. An object gives explicit factors by node
   * index ("0", "1", ...) or node name; nodes not listed get 1.
   */
  perNode?: 'uniform' | 'heterogeneous' | Record<string, number>;
  perNodeRange?: [number, number];
  /** Whether the node factor also scales memory (default true). */
  scaleMemory?: boolean;
  /** Relative amplitude (0..1) of a 24-hour cycle on CPU; memory follows with half the amplitude. */
  diurnalAmplitude?: number;
  /** UTC hour of the daily peak (default 14). */
  peakHourUtc?: number;
  /** Relative per-sample noise on CPU (0..1, default 0.05), deterministic per node, container and time. */
  noise?: number;
  /** Memory growth per hour since the container started, as a fraction of its base (a leak). */
  memoryGrowthPerHour?: number;
  /** Explicit OOM kills at simulated times (ms since the epoch), on the node indices listed (default all). */
  oomKills?: { atMs: number; nodes?: number[]; containers?: string[] }[];
}

export interface ContainerResources {
  cpuRequestM?: number;
  cpuLimitM?: number;
  memRequest?: number;
  memLimit?: number;
}

export interface Usage {
  /** CPU in nanocores. */
  cpuNanos: number;
  /** Working set in bytes (page aligned). */
  memoryBytes: number;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** While demand stays at or above the limit, the container is OOM-killed once per CrashLoopBackOff cap. */
export const CRASH_LOOP_PERIOD_MS = 5 * 60_000;

const qty = (v: number | string | undefined, parse: (s: string) => number): number | undefined =>
  v === undefined ? undefined : typeof v === 'number' ? v : parse(v);

/** The node factor of a profile for one node: 1 for uniform, else the heterogeneous or explicit factor. */
export function nodeFactor(
  p: LoadProfile,
  nodeIndex: number,
  nodeName: string,
  nodeCount: number,
  salt: string,
): number {
  const mode = p.perNode ?? 'uniform';
  if (mode === 'uniform') return 1;
  if (typeof mode === 'object') return mode[nodeName] ?? mode[String(nodeIndex)] ?? 1;
  const [lo, hi] = p.perNodeRange ?? [0.25, 4];
  const position = heterogeneousPosition(nodeIndex, nodeCount, salt);
  return lo * (hi / lo) ** position;
}

/**
 * A position in [0, 1] per node: for the nodes known at start, a deterministic permutation of evenly
 * spaced points (so the range ends are always reached); nodes added later get a hashed position.
 */
const saltHashes = new Map<string, number>();

function heterogeneousPosition(index: number, count: number, salt: string): number {
  let h = saltHashes.get(salt);
  if (h === undefined) {
    h = fnv1a(salt);
    saltHashes.set(salt, h);
  }
  if (count <= 1) return index < count ? 0.5 : unit(h, index);
  if (index >= count) return unit(h, index);
  return permutationRank(index, count, h) / (count - 1);
}

/** rank of `index` in a permutation of 0..count-1 built from a multiplier coprime to count. */
function permutationRank(index: number, count: number, seed: number): number {
  let step = (seed % count) | 1;
  while (gcd(step, count) !== 1) step = (step + 2) % count || 1;
  const offset = (seed >>> 8) % count;
  return (index * step + offset) % count;
}

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

export interface ContainerLoad {
  baseCpuM: number;
  baseMemory: number;
  factor: number;
  profile: LoadProfile;
}

/** Resolves a container's base usage from its profile and resources. */
export function containerLoad(
  p: LoadProfile,
  container: string,
  res: ContainerResources,
  factor: number,
): ContainerLoad {
  const o = p.containers?.[container] ?? {};
  const cpu = qty(o.cpu ?? p.cpu, parseCpu) ?? (res.cpuRequestM ? res.cpuRequestM * 0.4 : 10);
  const mem =
    qty(o.memory ?? p.memory, parseMemory) ?? (res.memRequest ? res.memRequest * 0.6 : 32 * 2 ** 20);
  return { baseCpuM: cpu, baseMemory: mem, factor, profile: p };
}

function diurnal(p: LoadProfile, t: number): number {
  const a = p.diurnalAmplitude ?? 0;
  if (!a) return 1;
  const hour = (t % DAY) / HOUR;
  return 1 + a * Math.cos((2 * Math.PI * (hour - (p.peakHourUtc ?? 14))) / 24);
}

/** Memory demand (before any limit) `sinceRestartMs` after the container last started. */
export function memoryDemand(l: ContainerLoad, t: number, sinceRestartMs: number): number {
  const p = l.profile;
  const scale = p.scaleMemory === false ? 1 : l.factor;
  const growth = 1 + ((p.memoryGrowthPerHour ?? 0) * Math.max(0, sinceRestartMs)) / HOUR;
  const d = 1 + (diurnal(p, t) - 1) * 0.5;
  return l.baseMemory * scale * growth * d;
}

/** Usage of one container at time t (a metrics-server sample). */
export function containerUsage(
  l: ContainerLoad,
  res: ContainerResources,
  t: number,
  lastStartMs: number,
  noiseKey: number,
): Usage {
  const p = l.profile;
  const noise = p.noise ?? 0.05;
  const jitter = noise ? 1 + noise * (2 * unit(noiseKey, Math.floor(t / 15_000)) - 1) : 1;
  let cpuM = l.baseCpuM * l.factor * diurnal(p, t) * jitter;
  if (res.cpuLimitM) cpuM = Math.min(cpuM, res.cpuLimitM);
  let mem = memoryDemand(l, t, t - lastStartMs);
  if (res.memLimit) mem = Math.min(mem, res.memLimit * 0.99);
  return {
    cpuNanos: Math.max(0, Math.round(cpuM * 1e6)),
    memoryBytes: Math.max(4096, Math.floor(mem / 4096) * 4096),
  };
}

export interface OomState {
  restartCount: number;
  /** When the container last (re)started. */
  lastStartMs: number;
  /** The last OOM kill, if any. */
  lastKillMs?: number;
}

/**
 * Advances a container's OOM state from `from` to `to`: growth- or demand-driven kills whenever memory
 * reaches the limit, and the profile's explicit kills. Returns the state unchanged when nothing happens.
 * Explicit kills restart the container but do not shift the growth-driven schedule within one advance
 * (a simplification: the two rarely meet in one profile).
 */
export function advanceOom(
  l: ContainerLoad,
  res: ContainerResources,
  state: OomState,
  from: number,
  to: number,
  nodeIndex: number,
  container: string,
): OomState {
  if (to <= from) return state;
  let s = state;
  const limit = res.memLimit;
  if (limit) {
    for (let guard = 0; guard < 10_000; guard++) {
      const kill = nextLimitKill(l, limit, s.lastStartMs, Math.max(from, s.lastStartMs));
      if (kill === undefined || kill > to) break;
      s = { restartCount: s.restartCount + 1, lastStartMs: kill, lastKillMs: kill };
    }
  }
  for (const k of l.profile.oomKills ?? []) {
    if (k.atMs <= from || k.atMs > to) continue;
    if (k.nodes && !k.nodes.includes(nodeIndex)) continue;
    if (k.containers && !k.containers.includes(container)) continue;
    if (s.lastKillMs === k.atMs) continue;
    s = {
      restartCount: s.restartCount + 1,
      lastStartMs: Math.max(s.lastStartMs, k.atMs),
      lastKillMs: k.atMs,
    };
  }
  return s;
}

/** The first time after `after` at which memory demand reaches `limit`, for a container started at `start`. */
function nextLimitKill(l: ContainerLoad, limit: number, start: number, after: number): number | undefined {
  const p = l.profile;
  const scale = p.scaleMemory === false ? 1 : l.factor;
  // Ignore the diurnal term for kill times: it would make them depend on the sampling of the curve.
  const base = l.baseMemory * scale;
  if (base >= limit) {
    const n = Math.floor((after - start) / CRASH_LOOP_PERIOD_MS) + 1;
    return start + n * CRASH_LOOP_PERIOD_MS;
  }
  const g = p.memoryGrowthPerHour ?? 0;
  if (g <= 0) return undefined;
  const hours = (limit / base - 1) / g;
  const at = start + Math.max(1000, hours * HOUR);
  // A limit lowered below the current demand kills at once.
  return Math.max(at, after + 1);
}

/** Whether a container can ever be OOM-killed under this profile, so the kubelet skips the others cheaply. */
export function mayOom(l: ContainerLoad, res: ContainerResources): boolean {
  if (l.profile.oomKills?.length) return true;
  if (!res.memLimit) return false;
  if ((l.profile.memoryGrowthPerHour ?? 0) > 0) return true;
  const scale = l.profile.scaleMemory === false ? 1 : l.factor;
  return l.baseMemory * scale >= res.memLimit;
}
