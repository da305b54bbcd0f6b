/**
 * `fleetscope ...` exactly as a user runs it: the shell launcher bin/fleetscope (what `npm link` puts on
 * PATH), which execs the project's Node 24 on the bundle. Endpoint overrides of the test process are
 * dropped so the CLI uses its own embedded stand-ins on the state directory.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from '../../local/runtime.js';
import type { CliRun } from '../support/cli.js';

export const LAUNCHER = join(REPO_ROOT, 'bin', 'fleetscope');

export function fleetscope(
  args: string[],
  opts: { stateDir?: string; cwd?: string; env?: Record<string, string>; stdin?: string } = {},
): Promise<CliRun> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...opts.env };
  for (const k of Object.keys(env))
    if (k.startsWith('AWS_ENDPOINT_URL') || k === 'FLEETSCOPE_TABLE') delete env[k];
  const full = opts.stateDir ? [...args, '--state-dir', opts.stateDir] : args;
  return new Promise((resolve) => {
    const child = execFile(
      LAUNCHER,
      full,
      { env, cwd: opts.cwd ?? REPO_ROOT, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, out: stdout.trimEnd(), err: stderr.trimEnd() });
      },
    );
    if (opts.stdin !== undefined) child.stdin?.end(opts.stdin);
  });
}
