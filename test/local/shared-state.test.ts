import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { startLocalDynamo } from '../../local/dynamo.js';
import { startLocalRuntime } from '../../local/runtime.js';
import { connectState } from '../../local/state/connect.js';
import { dataDir, readRecord } from '../../local/state/record.js';
import { DynamoRegistry } from '../../shared/fleet/registry-dynamo.js';
import { runFleetscope } from '../support/cli.js';
import { testDir } from '../support/temp.js';

const cluster = (name: string) => ({
  name,
  kubeconfig: { kind: 'file' as const, path: '/nonexistent', context: name },
  labels: {},
  registeredAt: new Date().toISOString(),
});

describe('one state directory, several processes', () => {
  it('a CLI command works while a runtime holds the state, and each sees what the other wrote', async () => {
    const dir = testDir('fleetscope-shared-');
    const runtime = await startLocalRuntime({ stateDir: dir, retryDelayMs: 5 });
    try {
      await new DynamoRegistry(runtime.db, runtime.table).add(cluster('from-runtime'));
      const listed = await runFleetscope(['cluster', 'list'], { stateDir: dir });
      expect(listed.err).toBe('');
      expect(listed.code).toBe(0);
      expect(listed.out).toContain('from-runtime');
      const gone = await runFleetscope(['cluster', 'deregister', '--name', 'from-runtime'], {
        stateDir: dir,
      });
      expect(gone.code).toBe(0);
      expect(await new DynamoRegistry(runtime.db, runtime.table).get('from-runtime')).toBeUndefined();
      // Both speak to the server recorded in the directory, which outlives neither's lease.
      expect(runtime.dynamoEndpoint).toBe(readRecord(dir)?.endpoint);
    } finally {
      await runtime.stop();
    }
  });

  it('state written by one process is there for the next, after the server went idle', async () => {
    const dir = testDir('fleetscope-shared-');
    const first = await startLocalRuntime({ stateDir: dir, retryDelayMs: 5 });
    await new DynamoRegistry(first.db, first.table).add(cluster('kept'));
    const pid = readRecord(dir)?.pid as number;
    await first.stop();
    process.kill(pid, 'SIGKILL'); // as if the machine lost the server: the next opener starts another
    await new Promise((r) => setTimeout(r, 200));
    const second = await startLocalRuntime({ stateDir: dir, retryDelayMs: 5 });
    try {
      expect(readRecord(dir)?.pid).not.toBe(pid);
      expect((await new DynamoRegistry(second.db, second.table).get('kept'))?.name).toBe('kept');
    } finally {
      await second.stop();
    }
  });

  // Issue 31, item 2: commands started together, as the server goes away, must all read the whole
  // registry (one once saw none, another "not registered"), never an empty answer read as the truth.
  it('commands started at once while the server goes away each read the whole registry', {
    timeout: 120_000,
  }, async () => {
    const dir = testDir('fleetscope-shared-');
    const first = await startLocalRuntime({ stateDir: dir, retryDelayMs: 5 });
    for (const name of ['a-1', 'a-2']) await new DynamoRegistry(first.db, first.table).add(cluster(name));
    await first.stop();
    const rounds = [
      () => process.kill(readRecord(dir)?.pid as number, 'SIGKILL'), // lost: the openers race to start one
      () => undefined, // left alone: it goes idle as they open
    ];
    for (const [i, round] of rounds.entries()) {
      round();
      const got = await Promise.all(
        [0, 1, 2].map(() => runFleetscope(['cluster', 'list', '-o', 'name'], { stateDir: dir })),
      );
      for (const r of got)
        expect([i, r.code, r.out.split('\n').filter(Boolean), r.err]).toEqual([i, 0, ['a-1', 'a-2'], '']);
    }
  });

  it('a state locked by a process that does not share it is refused with a clear message', async () => {
    const dir = testDir('fleetscope-shared-');
    const holder = await startLocalDynamo({ path: dataDir(dir) }); // holds the LevelDB, records nothing
    try {
      const r = await runFleetscope(['cluster', 'list'], { stateDir: dir });
      expect(r.code).toBe(1);
      expect(r.err).toContain(`state directory ${dir} is locked by a process that does not share it`);
      expect(r.err).not.toMatch(/\n\s+at /); // no stack trace
      expect(readFileSync(`${dir}/state-server.log`, 'utf8')).toContain('locked by another process');
    } finally {
      await holder.stop();
    }
  });

  it('a server started from the sources starts whatever the working directory (tsx is found from the checkout)', async () => {
    const dir = testDir('fleetscope-shared-');
    const elsewhere = testDir('fleetscope-cwd-'); // no node_modules here or above
    const cwd = process.cwd();
    process.chdir(elsewhere);
    try {
      const state = await connectState(dir);
      state.release();
      expect(state.started).toBe(true);
      expect(readRecord(dir)?.endpoint).toBe(state.endpoint);
    } finally {
      process.chdir(cwd);
      const pid = readRecord(dir)?.pid;
      if (pid) process.kill(pid, 'SIGTERM');
    }
  });
});
