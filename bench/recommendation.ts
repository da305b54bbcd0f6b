/**
 * `npx tsx bench/recommendation.ts`: micro-benchmark of shared/recommendation's hot paths as nodescope's
 * fold uses them, on realistic 8-day states (a sample every 5 minutes, as a nodescope cycle takes them;
 * per-node load factors, a daily cycle, noise, some OOM kills). Prints µs per operation; figures only,
 * nothing here is asserted by the test suite.
 *
 *   encodeState / decodeState   per state
 *   recommend                   per container, for a pod of 2 containers (nodescope's per-node call)
 *   recommend DaemonSet-wide    per merged state (every node's state of a container merged, 2 containers)
 *   add samples                 per (CPU + memory) sample pair on a decoded state (a cycle's replay)
 *
 * BENCH_STATES (default 2000) sets the number of states, BENCH_ROUNDS (default 15) the rounds; each
 * figure is the median over the rounds, after 5 warm-up rounds (the garbage each round makes is
 * collected within the rounds, as in a real fold; a forced GC between rounds would shrink the young
 * generation and make every round slower than a steady process).
 */
import type { Bytes, EpochMillis, Millicores } from '../shared/kernel/units.js';
import {
  addCpuSample,
  addMemorySample,
  createState,
  decodeState,
  encodeState,
  mergeStates,
  recommend,
  recordOom,
  type ScopeState,
} from '../shared/recommendation/index.js';

const STATES = Number(process.env.BENCH_STATES ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const WARMUP = 5;
const DAY = 86_400_000;
const STEP = 5 * 60_000;
const MiB = 2 ** 20;

function rng(seed: number): () => number {
  let a = seed >>> 0 || 1;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Profile {
  cpu: number;
  diurnal: number;
  noise: number;
  memory: number;
  memoryNoise: number;
  oomEveryDays?: number;
}

// A main container (agent-like: diurnal, noisy, sometimes OOM-killed) and a small sidecar per node.
const MAIN: Profile = {
  cpu: 150,
  diurnal: 0.5,
  noise: 0.3,
  memory: 300 * MiB,
  memoryNoise: 0.1,
  oomEveryDays: 3,
};
const SIDECAR: Profile = { cpu: 8, diurnal: 0.2, noise: 0.6, memory: 24 * MiB, memoryNoise: 0.05 };

const start = Date.UTC(2025, 0, 6, 0, 0, 0);
const end = start + 8 * DAY;

/** One scope's 8 days, fed through the public API; `factor` is the node's load relative to the profile. */
function history(p: Profile, factor: number, seed: number, from: number, to: number, s?: ScopeState) {
  const r = rng(seed);
  const state = s ?? createState((from + Math.floor(r() * 15_000)) as EpochMillis);
  let nextOom = p.oomEveryDays ? from + (0.5 + r() * p.oomEveryDays) * DAY : Number.POSITIVE_INFINITY;
  for (let t = from; t < to; t += STEP) {
    const at = t + Math.floor(r() * 15_000);
    const daily = 1 + p.diurnal * Math.sin((2 * Math.PI * (at % DAY)) / DAY);
    const cpu = Math.max(1, Math.round(p.cpu * factor * daily * (1 + p.noise * (2 * r() - 1))));
    const mem = Math.floor((p.memory * factor * (1 + p.memoryNoise * r())) / 4096) * 4096;
    addCpuSample(state, at as EpochMillis, cpu as Millicores);
    addMemorySample(state, at as EpochMillis, mem as Bytes);
    if (at >= nextOom) {
      recordOom(state, (at + 1000) as EpochMillis, Math.floor(p.memory * factor * 1.1) as Bytes);
      nextOom += (0.5 + r() * (p.oomEveryDays ?? 1)) * DAY;
    }
  }
  return state;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

/**
 * µs per op: the median over ROUNDS rounds, after WARMUP rounds for the JIT, of `run`, which does
 * `ops` operations. `prepare` (not timed) runs before each round.
 */
function measure(ops: number, run: () => unknown, prepare?: () => void): number {
  let sink: unknown;
  const times: number[] = [];
  for (let i = 0; i < WARMUP + ROUNDS; i++) {
    prepare?.();
    const t0 = performance.now();
    sink = run();
    const dt = performance.now() - t0;
    if (i >= WARMUP) times.push((dt * 1000) / ops);
  }
  if (sink === Symbol.for('never')) console.log(sink);
  return median(times);
}

const t0 = performance.now();
const pods = STATES / 2;
const mains: ScopeState[] = [];
const sidecars: ScopeState[] = [];
for (let i = 0; i < pods; i++) {
  const factor = 0.25 * 16 ** rng(i + 1)();
  mains.push(history(MAIN, factor, 2 * i + 11, start, end));
  sidecars.push(history(SIDECAR, factor, 2 * i + 12, start, end));
}
const states = [...mains, ...sidecars];
const encoded = states.map(encodeState);
const totalBytes = encoded.reduce((a, b) => a + b.length, 0);
const buckets = (s: ScopeState) => s.aggregate.cpuUsage.histogram.bucketWeight.filter((w) => w !== 0).length;
console.log(
  `shared/recommendation micro-benchmark: ${states.length} states (${pods} pods of 2 containers), 8 days at one sample per 5 min; ` +
    `${(totalBytes / states.length).toFixed(0)} B encoded and ${(states.reduce((a, s) => a + buckets(s), 0) / states.length).toFixed(1)} non-empty CPU buckets per state on average; built in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
);

const rows: [string, number][] = [];
rows.push([
  'encodeState (per state)',
  measure(states.length, () => {
    let n = 0;
    for (const s of states) n += encodeState(s).length;
    return n;
  }),
]);
rows.push([
  'decodeState (per state)',
  measure(encoded.length, () => {
    let n = 0;
    for (const b of encoded) n += decodeState(b).aggregate.totalSamplesCount;
    return n;
  }),
]);
rows.push([
  'recommend (per container, pods of 2)',
  measure(2 * pods, () => {
    let n = 0;
    for (let i = 0; i < pods; i++)
      n += recommend([
        { name: 'agent', state: mains[i] as ScopeState, requests: { cpu: 300 as Millicores }, limits: {} },
        { name: 'sidecar', state: sidecars[i] as ScopeState },
      ]).length;
    return n;
  }),
]);
rows.push([
  'recommend DaemonSet-wide (per state merged)',
  measure(states.length, () =>
    recommend([
      { name: 'agent', state: mains },
      { name: 'sidecar', state: sidecars },
    ]),
  ),
]);
rows.push([
  'mergeStates (per state merged)',
  measure(states.length, () => [mergeStates(mains), mergeStates(sidecars)]),
]);
// One more 5-minute cycle replayed on fresh copies of the states (decoding is not counted).
const later = end + 60 * 60_000;
rows.push([
  'add CPU + memory sample (per pair)',
  (() => {
    let copies: ScopeState[] = [];
    return measure(
      encoded.length,
      () => {
        for (let k = 0; k < copies.length; k++) {
          const s = copies[k] as ScopeState;
          addCpuSample(s, (later + k) as EpochMillis, 100 as Millicores);
          addMemorySample(s, (later + k) as EpochMillis, (200 * MiB) as Bytes);
        }
      },
      () => {
        copies = encoded.map(decodeState);
      },
    );
  })(),
]);
for (const [name, us] of rows) console.log(`  ${name.padEnd(44)} ${us.toFixed(2).padStart(8)} µs`);
