/**
 * Opening a state directory that other fleetscope processes may be using at the same time: take a
 * lease, find the recorded server (or start one, detached), and speak DynamoDB to it. Two processes
 * opening at once may both start a server; LevelDB's lock lets one win and the other exits.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, tsxImport } from '../root.js';
import { answers, isAlive, readRecord, serverLogPath, takeLease } from './record.js';

// Run from the CLI bundle (dist/, fresh: bin/fleetscope.js rebuilds a stale one), the server is the
// bundled one, which starts without transpiling; from the sources (npm start, tests) it is server.ts.
const FROM_BUNDLE = import.meta.url.includes('/dist/');
const SERVER_ARGS = FROM_BUNDLE
  ? [join(REPO_ROOT, 'dist', 'local', 'state', 'server.js')]
  : ['--import', tsxImport(), join(REPO_ROOT, 'local', 'state', 'server.ts')];
const EXIT_LOCKED = 3;
const START_TIMEOUT_MS = 30_000;

export interface SharedState {
  endpoint: string;
  /** Whether this process started the server (it still outlives this process while others use it). */
  started: boolean;
  release(): void;
}

export class StateInUseError extends Error {
  override name = 'StateInUseError';
}

const early = new Map<string, Promise<SharedState>>();

/**
 * Starts opening a state directory now, for a later connectState in this process: the CLI calls it
 * before loading a command's modules, so a server that has to start does so while they load.
 */
export function openStateEarly(stateDir: string): void {
  if (early.has(stateDir)) return;
  const opening = openState(stateDir);
  opening.catch(() => {}); // met by connectState, or by nobody when the command never opens it
  early.set(stateDir, opening);
}

export async function connectState(stateDir: string): Promise<SharedState> {
  const opening = early.get(stateDir);
  early.delete(stateDir);
  return opening ?? openState(stateDir);
}

async function openState(stateDir: string): Promise<SharedState> {
  mkdirSync(stateDir, { recursive: true });
  // The lease comes first, so a server that is about to go idle sees it and stays.
  const release = takeLease(stateDir);
  try {
    const found = await recordedServer(stateDir);
    if (found) return { endpoint: found, started: false, release };
    return { endpoint: await startServer(stateDir), started: true, release };
  } catch (err) {
    release();
    throw err;
  }
}

async function recordedServer(stateDir: string): Promise<string | undefined> {
  const r = readRecord(stateDir);
  if (r && isAlive(r.pid) && (await answers(r.endpoint))) return r.endpoint;
  return undefined;
}

async function startServer(stateDir: string): Promise<string> {
  const log = openSync(serverLogPath(stateDir), 'a');
  let exit: number | null | undefined;
  try {
    const child = spawn(process.execPath, [...SERVER_ARGS, stateDir], {
      detached: true,
      stdio: ['ignore', 'ignore', log],
      env: process.env,
    });
    child.once('exit', (code) => {
      exit = code;
    });
    child.unref();
  } finally {
    closeSync(log);
  }
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    const found = await recordedServer(stateDir);
    if (found) return found; // ours, or a racing opener's that won the lock
    if (exit === EXIT_LOCKED && !(await settleRace(stateDir)))
      throw new StateInUseError(
        `state directory ${stateDir} is locked by a process that does not share it (a fleetscope older ` +
          'than shared state, or a stopped one still exiting); stop that process or use another --state-dir',
      );
    if (exit !== undefined && exit !== EXIT_LOCKED)
      throw new Error(
        `could not serve state directory ${stateDir} (exit ${exit}); see ${serverLogPath(stateDir)}`,
      );
  }
  throw new Error(
    `state directory ${stateDir}: its server did not start within ${START_TIMEOUT_MS / 1000} s`,
  );
}

/** A lost lock race: the winner records itself within moments. */
async function settleRace(stateDir: string): Promise<boolean> {
  for (let i = 0; i < 40; i++) {
    if (await recordedServer(stateDir)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}
