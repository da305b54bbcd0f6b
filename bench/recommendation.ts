/**
 * `npx tsx bench/recommendation.ts [--against REV]`: micro-benchmark of shared/recommendation's hot
 * paths as nodescope's fold uses them, on realistic 8-day states (a sample every 5 minutes, as a
 * nodescope cycle takes them; per-node load factors, a daily cycle, noise, some OOM kills). Prints µs
 * per operation; figures only, nothing here is asserted by the test suite.
 *
 *   encodeState / decodeState   per state
 *   recommend                   per container, for a pod of 2 containers (nodescope's per-node call)
 *   recommend DaemonSet-wide    per merged state (every node's state of a container merged, 2 containers)
 *   add samples                 per (CPU + memory) sample pair on a decoded state (a cycle's replay)
 *
 * Each figure twice: the first pass over all states in a fresh process (what a Lambda invocation
 * pays, the JIT still tiering up) and, warm, the median of BENCH_ROUNDS (default 15) passes after 5
 * more (each round's garbage is collected within the rounds, as in a real fold). BENCH_STATES
 * (default 2000) sets the number of states.
 *
 * --against REV runs the same measurements, in a fresh process first, on the library as of git
 * revision REV (`git archive` into a temporary directory) and prints both: before and after. The
 * revision before the optimisation of the hot paths is 87ecf56.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prng as rng } from '../shared/kernel/prng.js';
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
 * µs per op of `run`, which does `ops` operations: its first round (cold: what a fresh Lambda process
 * pays, the JIT still tiering up) and the median over ROUNDS rounds after WARMUP more. `prepare` (not
 * timed) runs before each round.
 */
function measure(ops: number, run: () => unknown, prepare?: () => void): { first: number; warm: number } {
  let sink: unknown;
  const times: number[] = [];
  for (let i = 0; i < 1 + WARMUP + ROUNDS; i++) {
    prepare?.();
    const t0 = performance.now();
    sink = run();
    times.push(((performance.now() - t0) * 1000) / ops);
  }
  if (sink === Symbol.for('never')) console.log(sink);
  return { first: times[0] as number, warm: median(times.slice(1 + WARMUP)) };
}

type Rows = [string, { first: number; warm: number }][];

function run(): { about: string; rows: Rows } {
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
  const built = performance.now() - t0;
  const rows: Rows = [];
  let encoded: Uint8Array[] = [];
  rows.push([
    'encodeState (per state)',
    measure(states.length, () => {
      encoded = states.map(encodeState);
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
          {
            name: 'agent',
            state: mains[i] as ScopeState,
            requests: { cpu: 300 as Millicores, memory: (600 * MiB) as Bytes },
            limits: { memory: (2400 * MiB) as Bytes },
          },
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
  let copies: ScopeState[] = [];
  rows.push([
    'add CPU + memory sample (per pair)',
    measure(
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
    ),
  ]);
  const totalBytes = encoded.reduce((a, b) => a + b.length, 0);
  const buckets = (s: ScopeState) =>
    s.aggregate.cpuUsage.histogram.bucketWeight.filter((w) => w !== 0).length;
  const about =
    `${states.length} states (${pods} pods of 2 containers), 8 days at one sample per 5 min, ` +
    `${(totalBytes / states.length).toFixed(0)} B encoded and ${(states.reduce((a, s) => a + buckets(s), 0) / states.length).toFixed(1)} non-empty CPU buckets per state on average (built in ${(built / 1000).toFixed(1)} s)`;
  return { about, rows };
}

/** This very script run against the library as of a git revision, in a fresh process. */
function runAgainst(rev: string): { about: string; rows: Rows } {
  const root = join(import.meta.dirname, '..');
  const dir = mkdtempSync(join(tmpdir(), 'fleetscope-recommendation-bench-'));
  try {
    execFileSync('sh', [
      '-c',
      `git -C "${root}" archive "${rev}" shared/recommendation shared/kernel package.json | tar -x -C "${dir}"`,
    ]);
    mkdirSync(join(dir, 'bench'));
    copyFileSync(import.meta.filename, join(dir, 'bench', 'recommendation.ts'));
    const out = execFileSync(process.execPath, ['--import', 'tsx', join(dir, 'bench', 'recommendation.ts')], {
      cwd: root,
      env: { ...process.env, BENCH_JSON: '1' },
      encoding: 'utf8',
      maxBuffer: 1 << 20,
    });
    return JSON.parse(out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const f = (v: number) => v.toFixed(2).padStart(9);
const againstAt = process.argv.indexOf('--against');
if (process.env.BENCH_JSON) process.stdout.write(JSON.stringify(run()));
else if (againstAt < 0) {
  const { about, rows } = run();
  console.log(`shared/recommendation micro-benchmark: ${about}`);
  console.log(`  ${'µs per operation'.padEnd(44)}     first      warm`);
  for (const [name, m] of rows) console.log(`  ${name.padEnd(44)} ${f(m.first)} ${f(m.warm)}`);
  console.log('  first: the first pass over all states in a fresh process; warm: median of later passes');
} else {
  const rev = process.argv[againstAt + 1];
  if (!rev) throw new Error('--against needs a git revision');
  const before = runAgainst(rev);
  const { about, rows } = run();
  console.log(`shared/recommendation micro-benchmark: ${about}`);
  console.log(
    `  ${'µs per operation'.padEnd(44)} ${rev.slice(0, 9).padStart(9)} first / warm       now first / warm    speed-up first / warm`,
  );
  rows.forEach(([name, m], i) => {
    const b = before.rows[i]?.[1] ?? { first: Number.NaN, warm: Number.NaN };
    console.log(
      `  ${name.padEnd(44)} ${f(b.first)} ${f(b.warm)}    ${f(m.first)} ${f(m.warm)}    ${`${(b.first / m.first).toFixed(1)}x`.padStart(14)} ${`${(b.warm / m.warm).toFixed(1)}x`.padStart(6)}`,
    );
  });
  console.log('  first: the first pass over all states in a fresh process; warm: median of later passes');
}
