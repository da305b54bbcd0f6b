/**
 * `npm run bench`: the parts in turn, each timed, each in its own try, so that a part that fails prints
 * why and the others still run. The exit code says which failed: the sum of their bits (startup 1,
 * reads 2, nodescope 4, balloons 8, grow 16, fleet 32, real 64; 0 when every part ran).
 *
 * The default run is the representative subset (1,000 nodes, 200 fleet clusters, 200 nodes on the real
 * apiserver: docs/developing.md gives its duration); `npm run bench -- --full` (or BENCH_FULL=1) is the
 * full run at 5,000 nodes, 1,000 clusters and 1,000 real nodes. BENCH_NODES, BENCH_FLEET_CLUSTERS and
 * BENCH_REAL_NODES override either; BENCH_ONLY=reads,nodescope
 * runs some parts. The parts (their own files say what they measure):
 *   startup     the CLI's start times (bench/startup.ts)
 *   reads       what a cycle takes from the apiserver, against an upstream-VPA-like reader (bench/reads.ts)
 *   nodescope   node scope's cycle, its DynamoDB use and cost (bench/nodescope.ts)
 *   balloons    the balloons' cycle (bench/balloons.ts)
 *   grow        grow on demand's latency (bench/balloon-grow-latency.ts)
 *   fleet       1,000 small clusters through dispatch and the workers (bench/fleet.ts)
 *   real        the reads on a real kube-apiserver beside the simulator (bench/real-reads.ts; skipped
 *               with a line without FLEETSCOPE_KUBE_ASSETS and etcd)
 */

const PARTS = ['startup', 'reads', 'nodescope', 'balloons', 'grow', 'fleet', 'real'] as const;
type Part = (typeof PARTS)[number];

/** The representative subset's sizes, and the full run's. */
const SIZES = {
  subset: { BENCH_NODES: '1000', BENCH_FLEET_CLUSTERS: '200', BENCH_REAL_NODES: '200' },
  full: { BENCH_NODES: '5000', BENCH_FLEET_CLUSTERS: '1000', BENCH_REAL_NODES: '1000' },
} as const;

/** Each part, loaded only when it runs (its module reads BENCH_NODES when it loads); a part may skip, saying why. */
const RUN: Record<Part, () => Promise<unknown>> = {
  startup: async () => (await import('./startup.js')).startupBench(),
  reads: async () => (await import('./reads.js')).readsBench(),
  nodescope: async () => (await import('./nodescope.js')).nodescopeBench(),
  balloons: async () => (await import('./balloons.js')).balloonBench(),
  grow: async () => (await import('./balloon-grow-latency.js')).growLatencyBench(),
  fleet: async () => (await import('./fleet.js')).runFleetBench(),
  real: async () => (await import('./real-reads.js')).realReadsBench(),
};

function chosen(): Part[] {
  const only = process.env.BENCH_ONLY?.split(',').map((p) => p.trim());
  if (!only) return [...PARTS];
  const bad = only.filter((p) => !(PARTS as readonly string[]).includes(p));
  if (bad.length) throw new Error(`BENCH_ONLY: ${bad.join(', ')} is not one of ${PARTS.join(', ')}`);
  return PARTS.filter((p) => only.includes(p));
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(0)} s`;

async function runAll(): Promise<number> {
  const full = process.argv.includes('--full') || process.env.BENCH_FULL === '1';
  const sizes = full ? SIZES.full : SIZES.subset;
  for (const [k, v] of Object.entries(sizes)) process.env[k] ??= v;
  const parts = chosen();
  console.log(
    `fleetscope bench: ${full ? 'the full run' : 'the representative subset (the full run: npm run bench -- --full)'}, ${process.env.BENCH_NODES} nodes, ${process.env.BENCH_FLEET_CLUSTERS} fleet clusters, ${process.env.BENCH_REAL_NODES} nodes on the real apiserver; parts ${parts.join(', ')}`,
  );
  const t0 = performance.now();
  const outcomes: { part: Part; ms: number; how: string }[] = [];
  for (const part of parts) {
    const start = performance.now();
    console.log(`\n=== ${part}`);
    let how: string;
    try {
      const skipped = await RUN[part]();
      how = typeof skipped === 'string' ? `skipped: ${skipped}` : 'ran';
    } catch (err) {
      how = `FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`;
    }
    const ms = performance.now() - start;
    outcomes.push({ part, ms, how });
    console.log(`=== ${part}: ${how.split('\n')[0]} (${seconds(ms)})`);
  }
  console.log(`\nbench summary (${seconds(performance.now() - t0)} in all):`);
  for (const o of outcomes)
    console.log(`  ${o.part.padEnd(10)} ${seconds(o.ms).padStart(7)}  ${o.how.split('\n')[0]}`);
  let code = 0;
  for (const o of outcomes) if (o.how.startsWith('FAILED')) code |= 1 << PARTS.indexOf(o.part);
  if (code)
    console.log(
      `  exit code ${code}: the sum of the failed parts' bits (${PARTS.map((p, i) => `${p} ${1 << i}`).join(', ')})`,
    );
  return code;
}

runAll().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(255);
  },
);
