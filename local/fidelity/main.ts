/**
 * `npm run fidelity`: records every request the capability suites send to the simulator, replays the
 * recordings against a real kube-apiserver of each version in FLEETSCOPE_KUBE_ASSETS, and prints where
 * the simulator's answers differ from the real server's; then runs the behaviour scenarios
 * (behaviour.ts) on the simulator and on a whole real cluster and prints where the simulator's kubelet,
 * scheduler and DaemonSet controller decide otherwise than the real ones.
 *
 *   npm run fidelity [-- --versions 1.33,1.36] [--recordings DIR] [--json FILE] [SUITE...]
 *   npm run fidelity -- --only api|behaviour [--scenarios NAME,...]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startRealApiserver } from '../envtest/apiserver.js';
import { findKubeAssets, type KubeAssets } from '../envtest/assets.js';
import { DEFAULT_VERSION_ENV } from '../sim/cluster.js';
import { RECORD_ENV } from '../sim/recorder.js';
import { runBehaviour, type ScenarioResult } from './behaviour.js';
import { type ReplayResult, replayRecording } from './replay.js';
import { printBehaviour, printReport, type VersionReport } from './report.js';

/** The suites whose simulator traffic is fleetscope's own: every capability that talks to a cluster. */
export const CAPABILITY_SUITES = [
  'test/claims',
  'test/nodescope',
  'test/balloons',
  'test/features',
  'test/rbac',
  'test/resize',
  'test/cycle',
  'test/inventory',
];
const ROOT = resolve(import.meta.dirname, '../..');
const PARALLEL = 2;

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      versions: { type: 'string' },
      recordings: { type: 'string' },
      json: { type: 'string' },
      only: { type: 'string' },
      scenarios: { type: 'string' },
    },
  });
  const lookup = findKubeAssets();
  if (!lookup.ok) {
    process.stderr.write(`fidelity: ${lookup.why}; it needs real kube-apiserver binaries and etcd\n`);
    return 2;
  }
  if (values.only && !['api', 'behaviour'].includes(values.only)) {
    process.stderr.write(`fidelity: --only takes api or behaviour, not ${values.only}\n`);
    return 2;
  }
  const suites = positionals.length ? positionals : CAPABILITY_SUITES;
  const versions = values.versions?.split(',') ?? [...lookup.assets.apiservers.keys()].reverse();
  const reports: VersionReport[] = [];
  for (const version of values.only === 'behaviour' ? [] : versions) {
    const full =
      [...lookup.assets.apiservers.keys()].find((v) => v === version || v.startsWith(`${version}.`)) ??
      version;
    // The simulator answers as the version it is told to be: record at the real server's own.
    const dir = values.recordings ?? record(suites, full);
    reports.push(await replayAll(lookup.assets, full, recordingsAt(dir, full)));
  }
  if (reports.length) printReport(reports, process.stdout);
  let behaviour: ScenarioResult[] = [];
  if (values.only !== 'api') {
    if (lookup.assets.clusters.size === 0) {
      process.stderr.write(
        'fidelity: no kube-scheduler, kube-controller-manager and kubemark in the assets: the behaviour scenarios need a whole cluster\n',
      );
      return 2;
    }
    behaviour = await runBehaviour(lookup.assets, values.scenarios?.split(','));
    if (behaviour.length === 0) {
      process.stderr.write(`fidelity: no scenario matches ${values.scenarios}\n`);
      return 2;
    }
    printBehaviour(behaviour, process.stdout);
  }
  if (values.json) writeFileSync(values.json, JSON.stringify({ api: reports, behaviour }, mapsAsObjects, 2));
  return 0;
}

function record(suites: string[], version: string): string {
  const dir = mkdtempSync(join(tmpdir(), `fleetscope-fidelity-${version}-`));
  process.stdout.write(
    `recording the simulator's traffic (as ${version}) of ${suites.join(' ')} into ${dir}\n`,
  );
  const run = spawnSync(process.execPath, [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', ...suites], {
    cwd: ROOT,
    env: { ...process.env, [RECORD_ENV]: dir, [DEFAULT_VERSION_ENV]: version },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (run.status !== 0)
    process.stdout.write(`(the suites exited ${run.status}; replaying what they recorded)\n`);
  return dir;
}

interface Recordings {
  files: string[];
  otherVersions: number;
  withoutResize: number;
}

/**
 * The recordings made by a simulated cluster of the same minor version: a suite that pins its cluster
 * to another version (1.32's resize rules, say) is judged only by a server of that version, and one
 * configured without pods/resize (as a server with InPlacePodVerticalScaling off) by none here.
 */
function recordingsAt(dir: string, version: string): Recordings {
  const minor = (v: string) => v.split('.').slice(0, 2).join('.');
  const out: Recordings = { files: [], otherVersions: 0, withoutResize: 0 };
  for (const f of readdirSync(dir)
    .filter((n) => n.endsWith('.jsonl'))
    .sort()) {
    const file = join(dir, f);
    const start = JSON.parse(readFileSync(file, 'utf8').split('\n', 1)[0] ?? '{}') as {
      version?: string;
      resize?: boolean;
    };
    if (minor(start.version ?? '') !== minor(version)) out.otherVersions++;
    else if (start.resize === false) out.withoutResize++;
    else out.files.push(file);
  }
  return out;
}

async function replayAll(
  assets: KubeAssets,
  version: string,
  { files, otherVersions, withoutResize }: Recordings,
): Promise<VersionReport> {
  const results: ReplayResult[] = [];
  const queue = [...files];
  let done = 0;
  const worker = async () => {
    for (let file = queue.shift(); file; file = queue.shift()) {
      const api = await startRealApiserver(assets, { version });
      try {
        results.push(await replayRecording(file, api));
      } finally {
        await api.stop();
      }
      process.stdout.write(`\r${version}: ${++done}/${files.length} recordings replayed`);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  process.stdout.write('\n');
  return { version, results, otherVersions, withoutResize };
}

function mapsAsObjects(_key: string, value: unknown): unknown {
  return value instanceof Map ? Object.fromEntries(value) : value;
}

main().then(
  (code) => process.exit(code),
  (e) => {
    process.stderr.write(`fidelity: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);
