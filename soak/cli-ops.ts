/**
 * Operators at work during the soak: CLI commands, each its own process on the same state as the
 * running runtimes, that change ClusterSet memberships and IDs, two at a time so they contend (two
 * clusters joining one ClusterSet with one ID: exactly one may win).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from '../local/runtime.js';

const BIN = join(REPO_ROOT, 'bin', 'fleetscope.js');
const SETS = ['blue', 'green'];

export function randomOp(clusters: string[], random: () => number): string[] {
  const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)] as T;
  const cluster = pick(clusters);
  switch (Math.floor(random() * 5)) {
    case 0:
      return ['clusterset', 'join', '--cluster', cluster, '--set', pick(SETS)];
    case 1:
      return ['clusterset', 'move', '--cluster', cluster, '--to', pick(SETS)];
    case 2:
      return ['clusterset', 'leave', '--cluster', cluster];
    case 3:
      return ['claims', 'set', '--cluster', cluster, '--name', 'id.k8s.io', '--value', 'soak-shared-id'];
    default:
      return ['claims', 'set', '--cluster', cluster, '--name', 'id.k8s.io', '--default'];
  }
}

export interface CliResult {
  args: string[];
  code: number;
  output: string;
}

export function runCli(args: string[], stateDir: string): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env))
    if (k.startsWith('AWS_ENDPOINT_URL') || k === 'FLEETSCOPE_TABLE') delete env[k];
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args, '--state-dir', stateDir],
      { env, cwd: REPO_ROOT, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ args, code, output: `${stdout}${stderr}` });
      },
    );
  });
}
