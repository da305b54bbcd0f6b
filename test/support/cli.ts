import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from '../../local/runtime.js';

export interface CliRun {
  code: number;
  out: string;
  err: string;
}

export const BIN = join(REPO_ROOT, 'bin', 'fleetscope.js');

/**
 * Runs `fleetscope ...` as its own process, as an operator would, on this Node (24). Endpoint overrides
 * of the test process are dropped so the CLI uses its own embedded stand-ins on `stateDir`.
 */
export function runFleetscope(
  args: string[],
  opts: {
    stateDir?: string;
    stdin?: string;
    cwd?: string;
    env?: Record<string, string>;
    /** Through bin/fleetscope, the shell launcher `npm link` puts on PATH (test/cli/bin.ts). */
    launcher?: string;
  } = {},
): Promise<CliRun> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...opts.env };
  for (const k of Object.keys(env))
    if (k.startsWith('AWS_ENDPOINT_URL') || k === 'FLEETSCOPE_TABLE') delete env[k];
  const full = opts.stateDir ? [...args, '--state-dir', opts.stateDir] : args;
  return new Promise((resolve) => {
    const child = execFile(
      opts.launcher ?? process.execPath,
      opts.launcher ? full : [BIN, ...full],
      { env, cwd: opts.cwd ?? REPO_ROOT, timeout: 90_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, out: stdout.trimEnd(), err: stderr.trimEnd() });
      },
    );
    if (opts.stdin !== undefined) child.stdin?.end(opts.stdin);
  });
}

/**
 * Runs `fleetscope ...` inside this process (much faster than a new process; the local runtime puts
 * the environment back when it stops), capturing what it prints.
 */
export async function runFleetscopeInProcess(
  args: string[],
  opts: { stateDir?: string } = {},
): Promise<CliRun> {
  const { main } = await import('../../cli/main.js');
  const out: string[] = [];
  const err: string[] = [];
  const log = console.log;
  const error = console.error;
  console.log = (...a: unknown[]) => void out.push(a.map(String).join(' '));
  console.error = (...a: unknown[]) => void err.push(a.map(String).join(' '));
  try {
    const code = await main(opts.stateDir ? [...args, '--state-dir', opts.stateDir] : args);
    return { code, out: out.join('\n'), err: err.join('\n') };
  } finally {
    console.log = log;
    console.error = error;
  }
}

/**
 * Starts a long-running `fleetscope ...` (sim, run without --once) as its own process and resolves
 * once its standard output satisfies `ready`; `stop` sends SIGINT (or the signal given) and resolves
 * with how it ended. The process is the CLI itself, as bin/fleetscope runs it: no tsx in between,
 * whose signal relay kills a child that does not answer within 30 ms (a loaded CI machine) with
 * SIGKILL and exits 143.
 */
export async function startFleetscope(
  args: string[],
  ready: (out: string) => boolean,
  timeoutMs = 60_000,
): Promise<{ out: () => string; stop: (signal?: NodeJS.Signals) => Promise<CliRun> }> {
  const { spawn } = await import('node:child_process');
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env))
    if (k.startsWith('AWS_ENDPOINT_URL') || k === 'FLEETSCOPE_TABLE') delete env[k];
  const child = spawn(process.execPath, [BIN, ...args], { env, cwd: REPO_ROOT });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const ended = new Promise<CliRun>((resolve) =>
    child.on('exit', (code) => resolve({ code: code ?? 1, out: out.trimEnd(), err: err.trimEnd() })),
  );
  const deadline = Date.now() + timeoutMs;
  while (!ready(out)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`fleetscope ${args.join(' ')} did not get ready: ${out}\n${err}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    out: () => out,
    stop: async (signal = 'SIGINT') => {
      child.kill(signal);
      return ended;
    },
  };
}
