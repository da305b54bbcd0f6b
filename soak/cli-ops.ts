/**
 * Operators at work during the soak: CLI commands, each its own process on the same state as the
 * running runtimes, that change ClusterSet memberships and IDs, two at a time so they contend (two
 * clusters joining one ClusterSet with one ID: exactly one may win).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { tsxImport } from '../local/root.js';
import { REPO_ROOT } from '../local/runtime.js';
import type { CliResult } from './records.js';

const BIN = join(REPO_ROOT, 'bin', 'fleetscope.js');
const KILLED = join(REPO_ROOT, 'soak', 'killed-cli.ts');
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

export function runCli(args: string[], stateDir: string): Promise<CliResult> {
  return run([BIN, ...args, '--state-dir', stateDir], args, {});
}

/** The CLI killed with SIGKILL just before its DynamoDB write number `atWrite` (./killed-cli.ts). */
export async function runKilledCli(
  args: string[],
  stateDir: string,
  atWrite: number,
): Promise<CliResult & { killed: boolean }> {
  const r = await run(['--import', tsxImport(), KILLED, ...args, '--state-dir', stateDir], args, {
    SOAK_KILL_AT_WRITE: String(atWrite),
  });
  return { ...r, killed: r.signal === 'SIGKILL' };
}

function run(
  argv: string[],
  args: string[],
  extra: NodeJS.ProcessEnv,
): Promise<CliResult & { signal?: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const k of Object.keys(env))
    if (k.startsWith('AWS_ENDPOINT_URL') || k === 'FLEETSCOPE_TABLE') delete env[k];
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      argv,
      { env, cwd: REPO_ROOT, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        const signal = error?.signal ?? undefined;
        resolve({ args, code, output: `${stdout}${stderr}`, ...(signal ? { signal } : {}) });
      },
    );
  });
}
