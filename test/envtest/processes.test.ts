/**
 * No process of a test cluster outlives the process that started it: whether that one is SIGKILLed (a
 * runner's timeout: the watchdog), SIGTERMed or SIGINTed, exits or dies of an uncaught error, every
 * process group it launched is gone, children of the leader included.
 */
import { execFileSync, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { groupAlive, launch, liveGroups, terminate } from '../../local/envtest/processes.js';

const FIXTURE = resolve(import.meta.dirname, 'fixtures/hold-groups.ts');

/** Runs the fixture, waits for its process ids, then does `end` to it; resolves with the ids. */
async function startedThen(how: string, end: (pid: number) => void): Promise<number[]> {
  // One process (not the tsx launcher, which would run the fixture in a child of its own).
  const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, how], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const pids = await new Promise<number[]>((done, fail) => {
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) done((JSON.parse(line) as { pids: number[] }).pids);
    });
    child.once('exit', (code) => fail(new Error(`fixture exited (${code}) before printing its ids`)));
  });
  for (const pid of pids) expect(groupAlive(pid)).toBe(true);
  if (child.pid) end(child.pid);
  await new Promise((r) => (child.exitCode === null ? child.once('exit', r) : r(undefined)));
  return pids;
}

async function allGone(pids: number[], withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (pids.every((p) => !groupAlive(p))) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

describe('process groups of a test cluster', () => {
  const ends: [string, string, (pid: number) => void][] = [
    ['SIGKILLed (the watchdog)', 'hang', (pid) => process.kill(pid, 'SIGKILL')],
    ['SIGTERMed', 'hang', (pid) => process.kill(pid, 'SIGTERM')],
    ['SIGINTed', 'hang', (pid) => process.kill(pid, 'SIGINT')],
    ['dead of an uncaught error', 'throw', () => {}],
    ['exited', 'exit', () => {}],
  ];
  for (const [name, how, end] of ends)
    it(`none is left when the owner is ${name}`, async () => {
      const pids = await startedThen(how, end);
      // The watchdog polls every second; the hooks are synchronous.
      expect(await allGone(pids, 5_000)).toBe(true);
    });

  it('terminate() ends the whole group, the leader and what it started', async () => {
    const child = launch('sh', ['-c', 'sleep 300 & sleep 300 & wait'], '/dev/null');
    const pid = child.pid as number;
    await new Promise((r) => setTimeout(r, 200));
    const members = () =>
      execFileSync('ps', ['-o', 'pid=', '-g', String(pid)], { encoding: 'utf8' })
        .trim()
        .split(/\s+/)
        .filter(Boolean);
    expect(members().length).toBeGreaterThanOrEqual(3);
    expect(liveGroups()).toContain(pid);
    await terminate(child, 2_000);
    expect(await allGone([pid], 2_000)).toBe(true);
    expect(liveGroups()).not.toContain(pid);
  });
});
