// Bundles the CLI (and the Lambda handlers its local runtime invokes) into dist/, so `fleetscope` starts
// from compiled JavaScript instead of transpiling TypeScript at every start. Commands stay lazy: esbuild
// splits each dynamic import into its own chunk, so `--help` loads neither the AWS SDK nor the simulator.
// Handlers share those chunks, so the CLI and the handlers it runs in-process share module state.
import { copyFileSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const DIST = join(ROOT, 'dist');
const STAMP = join(DIST, '.built');
const SOURCES = ['cli', 'shared', 'local', 'functions', 'package-lock.json'];

/** The newest modification time among the CLI's sources (a few hundred files: milliseconds). */
function newestSource(path = '') {
  const paths = path ? [path] : SOURCES.map((s) => join(ROOT, s));
  let newest = 0;
  for (const p of paths) {
    const st = statSync(p, { throwIfNoEntry: false });
    if (!st) continue;
    newest = Math.max(newest, st.mtimeMs);
    if (st.isDirectory()) for (const e of readdirSync(p)) newest = Math.max(newest, newestSource(join(p, e)));
  }
  return newest;
}

export function isStale() {
  const built = statSync(STAMP, { throwIfNoEntry: false });
  return !built || built.mtimeMs < newestSource();
}

export async function build() {
  const { build: esbuild } = await import('esbuild');
  // Built beside dist/ and swapped in, so a concurrent start never sees half a bundle.
  const tmp = `${DIST}.${process.pid}`;
  const handlers = readdirSync(join(ROOT, 'functions')).filter((f) => f.endsWith('.ts'));
  await esbuild({
    absWorkingDir: ROOT,
    // The state server too: the first command on a state directory starts it, and tsx would cost it a second.
    entryPoints: ['cli/main.ts', 'local/state/server.ts', ...handlers.map((f) => `functions/${f}`)],
    outdir: tmp,
    outbase: '.',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    // Dependencies bundled too: resolving and loading hundreds of node_modules files (the AWS SDK's
    // above all) was most of a start. Native and self-locating packages stay external.
    external: [
      'dynalite',
      'classic-level',
      'leveldown',
      'esbuild',
      'tsx',
      'vitest',
      'aws-cdk-lib',
      'aws-cdk',
    ],
    banner: {
      js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
    },
    chunkNames: 'chunks/[name]-[hash]',
    sourcemap: 'linked',
    logLevel: 'warning',
  });
  // local/sim/protobuf.ts reads this beside itself (new URL(..., import.meta.url)): beside its chunk.
  mkdirSync(join(tmp, 'chunks'), { recursive: true });
  copyFileSync(join(ROOT, 'local/sim/kubectl-types.proto'), join(tmp, 'chunks/kubectl-types.proto'));
  copyFileSync(join(ROOT, 'local/sim/pod-full.proto'), join(tmp, 'chunks/pod-full.proto'));
  writeFileSync(join(tmp, '.built'), '');
  const old = `${DIST}.old.${process.pid}`;
  try {
    renameSync(DIST, old);
  } catch {}
  renameSync(tmp, DIST);
  rmSync(old, { recursive: true, force: true });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await build();
