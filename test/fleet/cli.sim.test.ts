/**
 * The cluster registry from the command line: each command is a separate `fleetscope` process on one
 * state directory, against clusters served by the simulator over HTTPS.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import { runFleetscope, runFleetscopeInProcess } from '../support/cli.js';

let sim: Simulator;
let dir: string;
let kubeconfig: string;
let stateDir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fleetscope-cli-fleet-'));
  stateDir = join(dir, 'state');
  sim = await startSimulator({
    clusters: [
      { name: 'alpha', nodes: 3 },
      { name: 'beta', nodes: 5 },
    ],
  });
  kubeconfig = join(dir, 'kubeconfig.yaml');
  await sim.writeKubeconfig(kubeconfig);
});
afterAll(async () => {
  await sim?.stop();
  await rm(dir, { recursive: true, force: true });
});

// The first test runs each command as its own process (state must persist across processes); the
// others run the same CLI in this process, which is quicker and tests the same code.
describe('fleetscope cluster', () => {
  it('registers in one process and lists in another, with the inventory the registration triggered', async () => {
    const reg = await runFleetscope(
      [
        'cluster',
        'register',
        '--name',
        'alpha',
        '--kubeconfig',
        kubeconfig,
        '--context',
        'alpha',
        '--label',
        'env=dev',
      ],
      { stateDir },
    );
    expect(reg.err).toBe('');
    expect(reg.code).toBe(0);
    expect(reg.out).toContain('registered cluster alpha');

    const list = await runFleetscope(['cluster', 'list', '--json'], { stateDir });
    expect(list.code).toBe(0);
    const rows = JSON.parse(list.out) as {
      cluster: { name: string; labels: Record<string, string> };
      status?: { reachable: boolean; nodeCount: number; kubeSystemUid: string };
    }[];
    expect(rows.map((r) => r.cluster.name)).toEqual(['alpha']);
    expect(rows[0]!.cluster.labels).toEqual({ env: 'dev' });
    expect(rows[0]!.status).toMatchObject({
      reachable: true,
      nodeCount: 3,
      kubeSystemUid: sim.cluster('alpha').kubeSystemUid,
    });
  });

  it('refuses bad input with the reason, and writes nothing', async () => {
    const cases: [string[], RegExp][] = [
      [['--name', 'Not_A_Label', '--kubeconfig', kubeconfig, '--context', 'beta'], /RFC 1123 label/],
      [['--name', 'beta', '--kubeconfig', kubeconfig, '--context', 'gamma'], /context.*gamma[\s\S]*alpha/],
      [['--name', 'beta', '--kubeconfig', join(dir, 'missing.yaml'), '--context', 'beta'], /missing\.yaml/],
      [
        ['--name', 'beta', '--kubeconfig', kubeconfig, '--context', 'beta', '--label', 'bad key=x'],
        /label key/,
      ],
      [['--name', 'alpha', '--kubeconfig', kubeconfig, '--context', 'alpha'], /already registered/],
    ];
    for (const [args, why] of cases) {
      const run = await runFleetscopeInProcess(['cluster', 'register', ...args], { stateDir });
      expect(run.code, args.join(' ')).not.toBe(0);
      expect(run.err).toMatch(why);
    }
    const garbage = join(dir, 'garbage.yaml');
    await writeFile(garbage, 'clusters: [unterminated');
    const bad = await runFleetscopeInProcess(
      ['cluster', 'register', '--name', 'beta', '--kubeconfig', garbage],
      {
        stateDir,
      },
    );
    expect(bad.code).not.toBe(0);
    expect(bad.err).toMatch(/kubeconfig/i);

    const list = await runFleetscopeInProcess(['cluster', 'list', '--json'], { stateDir });
    expect((JSON.parse(list.out) as { cluster: { name: string } }[]).map((r) => r.cluster.name)).toEqual([
      'alpha',
    ]);
  });

  it('refuses an unreachable cluster and writes nothing', async () => {
    sim.faults.inject({ cluster: 'beta', fault: { type: 'status', code: 503 } });
    try {
      const run = await runFleetscopeInProcess(
        ['cluster', 'register', '--name', 'beta', '--kubeconfig', kubeconfig, '--context', 'beta'],
        { stateDir },
      );
      expect(run.code).not.toBe(0);
      expect(run.err).toMatch(/beta.*503|503.*beta/s);
    } finally {
      sim.faults.clear();
    }
    const list = await runFleetscopeInProcess(['cluster', 'list', '--json'], { stateDir });
    expect((JSON.parse(list.out) as { cluster: { name: string } }[]).map((r) => r.cluster.name)).toEqual([
      'alpha',
    ]);
  });

  it('deregisters, and refuses to deregister a cluster that is not registered', async () => {
    expect(
      (await runFleetscopeInProcess(['cluster', 'deregister', '--name', 'alpha'], { stateDir })).code,
    ).toBe(0);
    const again = await runFleetscopeInProcess(['cluster', 'deregister', '--name', 'alpha'], { stateDir });
    expect(again.code).not.toBe(0);
    expect(again.err).toContain('not registered');
    expect((await runFleetscopeInProcess(['cluster', 'list'], { stateDir })).out).toContain(
      'no clusters registered',
    );
  });
});
