/**
 * The state directory's record of the process serving its DynamoDB (`dynamodb.json`), and the leases
 * of the processes using it (`leases/<pid>`). Several fleetscope processes (npm start, CLI commands, the
 * soak's runtimes) share one state this way: LevelDB admits one process, so one server process holds
 * it and every other process speaks the DynamoDB protocol to it over loopback.
 */
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';

export interface ServerRecord {
  endpoint: string;
  pid: number;
}

export const recordPath = (stateDir: string) => join(stateDir, 'dynamodb.json');
export const leasesDir = (stateDir: string) => join(stateDir, 'leases');
export const dataDir = (stateDir: string) => join(stateDir, 'dynamodb');
export const serverLogPath = (stateDir: string) => join(stateDir, 'state-server.log');

export function readRecord(stateDir: string): ServerRecord | undefined {
  try {
    const r = JSON.parse(readFileSync(recordPath(stateDir), 'utf8'));
    if (typeof r?.endpoint === 'string' && Number.isInteger(r?.pid))
      return { endpoint: r.endpoint, pid: r.pid };
  } catch {
    /* absent or half-written by a killed process: as if absent */
  }
  return undefined;
}

/** Written whole or not at all (rename), so a reader never sees half a record. */
export function writeRecord(stateDir: string, record: ServerRecord): void {
  const tmp = `${recordPath(stateDir)}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(record));
  renameSync(tmp, recordPath(stateDir));
}

/** Removes the record only if it is still this server's (a successor may have written its own). */
export function removeRecord(stateDir: string, pid: number): void {
  if (readRecord(stateDir)?.pid === pid) rmSync(recordPath(stateDir), { force: true });
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function takeLease(stateDir: string, pid = process.pid): () => void {
  mkdirSync(leasesDir(stateDir), { recursive: true });
  const path = join(leasesDir(stateDir), String(pid));
  writeFileSync(path, '');
  return () => rmSync(path, { force: true });
}

/** Leases of live processes; those of dead ones (killed without releasing) are removed. */
export function liveLeases(stateDir: string): number[] {
  let names: string[];
  try {
    names = readdirSync(leasesDir(stateDir));
  } catch {
    return [];
  }
  const live: number[] = [];
  for (const n of names) {
    const pid = Number(n);
    if (Number.isInteger(pid) && isAlive(pid)) live.push(pid);
    else rmSync(join(leasesDir(stateDir), n), { force: true });
  }
  return live;
}

/**
 * Whether a DynamoDB-protocol server answers at the endpoint (any AWS JSON answer will do). Through
 * node:http, which the SDK loads anyway: fetch would load undici, a tenth of a command's start.
 */
export function answers(endpoint: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      endpoint,
      {
        method: 'POST',
        headers: {
          'x-amz-target': 'DynamoDB_20120810.ListTables',
          'content-type': 'application/x-amz-json-1.0',
        },
        timeout: 2000,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.headers['x-amzn-requestid'] !== undefined));
        res.on('error', () => resolve(false));
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end('{}');
  });
}
