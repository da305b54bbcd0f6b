/**
 * The process that serves a state directory's DynamoDB (dynalite on LevelDB) on a loopback port and
 * records the port in the directory. Started detached by the first fleetscope process that opens the
 * state (connect.ts); it lives while any process holds a lease on the state, so a runtime killed with
 * SIGKILL loses nothing, and exits a few seconds after the last lease goes.
 *
 * Exit codes: 0 idle or stopped, 3 the LevelDB is locked by a process that does not share it.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { ClassicLevel } from 'classic-level';
import { DEFAULTS, ENV } from '../../shared/platform/config.js';
import { ensureTables, startLocalDynamo } from '../dynamo.js';
import { dataDir, liveLeases, readRecord, removeRecord, writeRecord } from './record.js';

export const EXIT_LOCKED = 3;
const IDLE_MS = Number(process.env.FLEETSCOPE_STATE_SERVER_IDLE_MS ?? 3000);
const POLL_MS = 250;

async function main(stateDir: string): Promise<number> {
  const say = (m: string) => process.stderr.write(`${new Date().toISOString()} pid ${process.pid}: ${m}\n`);
  if (await lockedElsewhere(dataDir(stateDir))) {
    say('the state is locked by another process');
    return EXIT_LOCKED;
  }
  // dynalite opens LevelDB lazily and throws its open error from a callback: a racing server that
  // took the lock between the probe and here shows up as that uncaught error.
  process.on('uncaughtException', (err) => {
    say(`stopping: ${err.message}`);
    process.exit(/closed|lock/i.test(err.message) ? EXIT_LOCKED : 1);
  });
  const dynamo = await startLocalDynamo({ path: dataDir(stateDir) });
  await ensureTables(dynamo.endpoint, {
    table: process.env[ENV.table] ?? DEFAULTS.table,
    idempotencyTable: process.env[ENV.idempotencyTable] ?? DEFAULTS.idempotencyTable,
  });
  writeRecord(stateDir, { endpoint: dynamo.endpoint, pid: process.pid });
  say(`serving ${dynamo.endpoint}`);
  let idleSince = Date.now();
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      // The directory removed (a test's temp dir) or taken over: nothing left to serve.
      if (!existsSync(stateDir) || readRecord(stateDir)?.pid !== process.pid) return done('record gone');
      if (liveLeases(stateDir).length > 0) idleSince = Date.now();
      else if (Date.now() - idleSince > IDLE_MS) done('no process uses the state');
    }, POLL_MS);
    const done = (why: string) => {
      clearInterval(timer);
      say(`stopping: ${why}`);
      resolve();
    };
    process.once('SIGTERM', () => done('SIGTERM'));
    process.once('SIGINT', () => done('SIGINT'));
  });
  removeRecord(stateDir, process.pid);
  await dynamo.stop();
  return 0;
}

/** LevelDB admits one process: open and close it once to learn whether another holds it. */
async function lockedElsewhere(path: string): Promise<boolean> {
  mkdirSync(path, { recursive: true });
  const db = new ClassicLevel(path);
  try {
    await db.open();
    await db.close();
    return false;
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause;
    if (cause?.code === 'LEVEL_LOCKED') return true;
    throw err;
  }
}

const dir = process.argv[2];
if (!dir) {
  process.stderr.write('usage: server.ts STATE_DIR\n');
  process.exit(2);
}
main(dir).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`state server failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
