/**
 * Operating from the CLI: `fleetscope sim --demo`, `cluster register` through its kubeconfig and
 * `fleetscope run --once` give node-scoped recommendations; run reports each cluster and capability,
 * fails a pass that failed, and keeps to the schedules until stopped.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import { runOnSchedules } from '../../cli/commands/run.js';
import { ProgressReporter } from '../../cli/commands/run-progress.js';
import { openContext } from '../../cli/context.js';
import { startSimulator } from '../../local/sim/index.js';
import { runPlan } from '../../shared/run-plan.js';
import { runFleetscopeInProcess, startFleetscope } from '../support/cli.js';

let sim: Awaited<ReturnType<typeof startFleetscope>>;
let dir: string;
let stateDir: string;
let kubeconfig: string;

const cli = (args: string[]) => runFleetscopeInProcess(args, { stateDir });

beforeAll(async () => {
  dir = (await import('node:fs')).mkdtempSync(join((await import('node:os')).tmpdir(), 'fleetscope-run-'));
  stateDir = join(dir, 'state');
  kubeconfig = join(dir, 'demo.yaml');
  sim = await startFleetscope(
    ['sim', '--demo', '--clusters', '2', '--nodes', '3', '--kubeconfig-out', kubeconfig, '-o', 'json'],
    (out) => {
      try {
        return Boolean(JSON.parse(out).clusters);
      } catch {
        return false;
      }
    },
  );
});
afterAll(async () => {
  await sim?.stop();
  (await import('node:fs')).rmSync(dir, { recursive: true, force: true });
});

describe('sim --demo, cluster register, run --once', () => {
  it('gives node-scoped recommendations in one pass', async () => {
    const started = JSON.parse(sim.out());
    expect(started).toMatchObject({ demo: true, kubeconfig, clock: 'wall' });
    expect(started.clusters.map((c: { name: string }) => c.name)).toEqual(['demo-1', 'demo-2']);
    for (const name of ['demo-1', 'demo-2']) {
      const r = await cli([
        'cluster',
        'register',
        '--name',
        name,
        '--kubeconfig',
        kubeconfig,
        '--context',
        name,
      ]);
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
    }
    const t0 = Date.now();
    const run = await cli(['run', '--once']);
    expect(run.err).toBe('');
    expect(run.code).toBe(0);
    expect(Date.now() - t0).toBeLessThan(60_000);
    const lines = run.out.split('\n');
    expect(lines[0]).toMatch(/^CLUSTER\s+CAPABILITY\s+RESULT\s+WALL TIME\s+DETAIL$/);
    for (const [cluster, capability] of [
      ['demo-1', 'inventory'],
      ['demo-2', 'inventory'],
      ['demo-1', 'claims'],
      ['demo-1', 'cycle'],
      ['demo-2', 'cycle'],
    ])
      expect(lines.some((l) => new RegExp(`^${cluster}\\s+${capability}\\s+ok\\s`).test(l))).toBe(true);
    expect(lines.at(-1)).toMatch(/^run: \d+ ok, 0 failed in .* wall time$/);

    const recs = JSON.parse((await cli(['recommendations', 'list', '-o', 'json'])).out);
    expect(recs.map((h: { cluster: string; name: string }) => `${h.cluster} ${h.name}`).sort()).toEqual([
      'demo-1 netd',
      'demo-1 node-agent',
      'demo-2 node-agent',
    ]);
  });

  it('-o json: every result with its outcome, and the summary', async () => {
    const r = await cli(['run', '--once', '--capability', 'inventory', '-o', 'json']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.out);
    expect(doc.results.map((x: { cluster: string }) => x.cluster).sort()).toEqual(['demo-1', 'demo-2']);
    expect(doc.results[0]).toMatchObject({
      capability: 'inventory',
      schedule: 'inventory',
      ok: true,
      detail: expect.stringContaining('3 node(s)'),
      tookMs: expect.any(Number),
    });
    expect(doc.summary).toMatchObject({ ok: 2, failed: 0 });
    expect(
      parse((await cli(['run', '--once', '--capability', 'inventory', '-o', 'yaml'])).out).summary,
    ).toEqual(expect.objectContaining({ ok: 2, failed: 0 }));
  });

  it('--cluster runs one cluster, and no fleet-wide schedule; nodescope runs as the cycle', async () => {
    const r = await cli(['run', '--once', '--cluster', 'demo-2', '--capability', 'nodescope', '-o', 'json']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.out);
    expect(
      doc.results.map((x: { cluster: string; capability: string }) => `${x.cluster} ${x.capability}`),
    ).toEqual(['demo-2 cycle']);
  });

  it('an unknown capability is a usage error naming the valid ones; an unknown cluster is not registered', async () => {
    const bad = await cli(['run', '--once', '--capability', 'nope']);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--capability nope: use one of inventory, claims, balloons, cycle, features/);
    const unknown = await cli(['run', '--once', '--cluster', 'nope']);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/cluster "nope" is not registered/);
  });

  it('a cluster that does not answer fails the pass: its line says FAILED and the exit code is 1', async () => {
    const gone = await startSimulator({ clusters: [{ name: 'gone', nodes: 1 }] });
    const path = join(dir, 'gone.yaml');
    await gone.writeKubeconfig(path);
    expect(
      (await cli(['cluster', 'register', '--name', 'gone', '--kubeconfig', path, '--context', 'gone'])).code,
    ).toBe(0);
    await gone.stop();
    try {
      const r = await cli(['run', '--once', '--cluster', 'gone', '--capability', 'inventory']);
      expect(r.code).toBe(1);
      expect(r.out).toMatch(/^gone\s+inventory\s+FAILED\s/m);
      expect(r.out).toMatch(/run: 0 ok, 1 failed .*\(exit 1\)$/);
    } finally {
      await cli(['cluster', 'deregister', '--name', 'gone']);
    }
  });

  it('without --once: a pass, then each schedule on its (compressed) period until stopped', async () => {
    // The schedules' intervals run on a manual clock: each 100 ms step of it is one period, whatever
    // the machine's load; the cluster's I/O stays real.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const ctx = await openContext({ 'state-dir': stateDir });
    const lines: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((l) => void lines.push(String(l)));
    const inventoried = () => lines.filter((l) => /^demo-1\s+inventory\s+ok/.test(l)).length;
    try {
      const clusters = await ctx.registry.list();
      const plan = runPlan(['inventory']);
      const reporter = new ProgressReporter('table', { clusters: clusters.map((c) => c.name), plan }, false);
      let stop = () => {};
      const stopped = new Promise<void>((r) => {
        stop = r;
      });
      // 15 minutes at --speedup 9000: every 100 ms.
      const running = runOnSchedules(ctx, plan, clusters, reporter, { speedup: 9000, stop: stopped });
      await vi.waitFor(() =>
        expect(lines).toContainEqual(
          // One clock in the line: the periods as they run here, and how they were derived.
          expect.stringMatching(/inventory every 100 ms \(15 min \/ 9000\)/),
        ),
      );
      expect(inventoried()).toBe(1);
      await vi.advanceTimersByTimeAsync(99);
      expect(vi.getTimerCount()).toBe(1);
      expect(inventoried()).toBe(1);
      for (const passes of [2, 3, 4]) {
        await vi.advanceTimersByTimeAsync(passes === 2 ? 1 : 100);
        await vi.waitFor(() => expect(inventoried()).toBe(passes), { timeout: 30_000 });
      }
      stop();
      expect(await running).toBe(0);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
      log.mockRestore();
      await ctx.close();
    }
  });

  it('shares the state with a runtime that holds it (as npm start does)', async () => {
    const { startLocalRuntime } = await import('../../local/runtime.js');
    const holder = await startLocalRuntime({ stateDir, retryDelayMs: 5 });
    try {
      const r = await (await import('../support/cli.js')).runFleetscope([
        'run',
        '--once',
        '--capability',
        'inventory',
        '--state-dir',
        stateDir,
      ]);
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
      const { DynamoRegistry } = await import('../../shared/fleet/registry-dynamo.js');
      const statuses = await new DynamoRegistry(holder.db, holder.table).statuses(['demo-1']);
      expect(Date.now() - Date.parse(statuses.get('demo-1')?.observedAt ?? '')).toBeLessThan(30_000);
    } finally {
      await holder.stop();
    }
  });
});

describe('the live progress line', () => {
  it('is drawn and cleared on a terminal, between the completed lines', () => {
    const writes: string[] = [];
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((s) => {
      writes.push(String(s));
      return true;
    });
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      const r = new ProgressReporter('table', { clusters: ['a'], plan: runPlan(['inventory']) }, true);
      r.started('inventory', 2);
      r.completed({
        cluster: 'a',
        capability: 'inventory',
        schedule: 'inventory',
        ok: true,
        text: 'x',
        ms: 5,
      });
      expect(r.finish()).toBe(0);
    } finally {
      write.mockRestore();
      log.mockRestore();
    }
    const CLEAR = '\r\x1b[K';
    expect(writes.some((w) => w.startsWith(`${CLEAR}inventory: 0/2 done`))).toBe(true);
    expect(writes.some((w) => w.startsWith(`${CLEAR}inventory: 1/2 done`))).toBe(true);
    expect(writes.at(-1)).toBe('\r\x1b[K');
  });

  it('is not drawn when standard output is not a terminal', () => {
    const write = vi.spyOn(process.stdout, 'write');
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      const r = new ProgressReporter('table', { clusters: ['a'], plan: runPlan(['inventory']) }, false);
      r.started('inventory', 1);
      r.completed({
        cluster: 'a',
        capability: 'inventory',
        schedule: 'inventory',
        ok: false,
        text: 'x',
        ms: 5,
      });
      expect(r.finish()).toBe(1);
      expect(write).not.toHaveBeenCalled();
    } finally {
      write.mockRestore();
      log.mockRestore();
    }
  });
});
