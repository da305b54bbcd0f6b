import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from '../../local/runtime.js';

export interface CliRun {
  code: number;
  out: string;
  err: string;
}

const BIN = join(REPO_ROOT, 'bin', 'fleetscope.js');

/**
 * Runs `fleetscope ...` as its own process, as an operator would, on this Node (24). Endpoint overrides
 * of the test process are dropped so the CLI uses its own embedded stand-ins on `stateDir`.
 */
export function runFleetscope(
  args: string[],
  opts: { stateDir?: string; stdin?: string } = {},
): Promise<CliRun> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env))
    if (k.startsWith('AWS_ENDPOINT_URL') || k === 'FLEETSCOPE_TABLE') delete env[k];
  const full = opts.stateDir ? [...args, '--state-dir', opts.stateDir] : args;
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, ...full],
      { env, cwd: REPO_ROOT, timeout: 90_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, out: stdout.trimEnd(), err: stderr.trimEnd() });
      },
    );
    if (opts.stdin !== undefined) child.stdin?.end(opts.stdin);
  });
}
