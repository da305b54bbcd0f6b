/**
 * kubectl-style output on every data command: -o json and -o yaml parse to the same document (so they
 * carry the same fields), --json is -o json, and a bad -o is one usage line.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import { runFleetscopeInProcess } from '../support/cli.js';

let sim: Simulator;
let dir: string;
let stateDir: string;
let history: string;

const t = (h: number) => new Date(Date.UTC(2026, 0, 1, h)).toISOString();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fleetscope-cli-output-'));
  stateDir = join(dir, 'state');
  sim = await startSimulator({ clusters: [{ name: 'alpha', nodes: 2 }] });
  const kubeconfig = join(dir, 'kubeconfig.yaml');
  await sim.writeKubeconfig(kubeconfig);
  const reg = await runFleetscopeInProcess(
    ['cluster', 'register', '--name', 'alpha', '--kubeconfig', kubeconfig, '--context', 'alpha'],
    { stateDir },
  );
  expect(reg.code).toBe(0);
  history = join(dir, 'history.json');
  const hours = Array.from({ length: 48 }, (_, h) => h);
  await writeFile(
    history,
    JSON.stringify({
      containers: [
        {
          name: 'agent',
          cpuSamples: hours.map((h) => ({ t: t(h), millicores: 100 + (h % 5) * 10 })),
          memorySamples: hours.map((h) => ({ t: t(h), bytes: 200 * 2 ** 20 })),
          requests: { cpu: '250m', memory: '128Mi' },
        },
      ],
    }),
  );
});
afterAll(async () => {
  await sim?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function run(args: string[]) {
  const local = args[0] === 'recommend' ? {} : { stateDir };
  const r = await runFleetscopeInProcess(args, local);
  expect(r.err, args.join(' ')).toBe('');
  expect(r.code, args.join(' ')).toBe(0);
  return r.out;
}

describe('-o and the shared vocabulary', () => {
  // Every data command's -o json|yaml|table: test/cli/data-commands.sim.test.ts, from the registry.
  it('lists the registered cluster with its fields in both formats', async () => {
    const rows = parse(await run(['cluster', 'list', '-o', 'yaml'])) as { cluster: { name: string } }[];
    expect(rows.map((r) => r.cluster.name)).toEqual(['alpha']);
  });

  it('recommend: amounts as unit-named numbers beside quantities, current requests next to the target', async () => {
    const doc = JSON.parse(await run(['recommend', '--input', history, '-o', 'json']));
    const [c] = doc.containers;
    expect(c.requests).toEqual({
      cpuMillicores: 250,
      memoryBytes: 128 * 2 ** 20,
      cpu: '250m',
      memory: '128Mi',
    });
    expect(c.target).toMatchObject({ cpuMillicores: expect.any(Number), cpu: expect.any(String) });
    const table = await run(['recommend', '--input', history, '-o', 'table']);
    expect(table.split('\n')[0]).toMatch(/^CONTAINER\s+CPU\s+MEMORY/);
    expect(table).toMatch(/250m → \S+ \([+-]\S+, [+-]\d+%\)/);
    expect(table).toMatch(/128Mi → \S+ \([+-]\S+, [+-]\d+%\)/);
  });

  it('a bad -o is one usage line and where to get help, not the whole usage', async () => {
    const r = await runFleetscopeInProcess(['cluster', 'list', '-o', 'xml'], { stateDir });
    expect(r.code).toBe(2);
    expect(r.err.split('\n')).toEqual([
      'fleetscope cluster: -o xml: use one of table, wide, json, yaml, name, jsonpath=TEMPLATE',
      'run "fleetscope cluster --help" for usage',
    ]);
  });

  it('--version prints the version', async () => {
    const r = await runFleetscopeInProcess(['--version']);
    expect(r.out).toMatch(/^fleetscope \d+\.\d+\.\d+$/);
  });
});

describe('an unknown cluster is "not registered" on every command', () => {
  it.each([
    ['recommendations', 'list', '--cluster', 'nope'],
    ['recommendations', 'get', '--cluster', 'nope', '--daemonset', 'a/b'],
    ['recommendations', 'checkpoints', '--cluster', 'nope', '--daemonset', 'a/b'],
    ['recommendations', 'install-crd', '--cluster', 'nope'],
    ['claims', 'get', '--cluster', 'nope'],
    ['claims', 'check', '--cluster', 'nope'],
    ['claims', 'dns', '--cluster', 'nope', '--service', 's', '--namespace', 'n', '--hostname', 'h'],
    ['clusterset', 'join', '--cluster', 'nope', '--set', 's'],
    ['balloons', 'status', '--cluster', 'nope'],
    ['cluster', 'deregister', '--name', 'nope'],
    ['features', 'get', '--cluster', 'nope', '--feature', 'balloons'],
    ['features', 'set', '--cluster', 'nope', '--feature', 'balloons', '--desired', 'off'],
    ['features', 'history', '--cluster', 'nope', '--feature', 'balloons'],
  ])('%s %s', async (...args) => {
    const r = await runFleetscopeInProcess(args, { stateDir });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/cluster "nope" is not registered/);
  });
});

describe('an empty result says why', () => {
  it('recommendations list names the reason per cluster', async () => {
    const out = await run(['recommendations', 'list']);
    expect(out).toMatch(
      /^no node-scoped DaemonSets:\n {2}alpha: (no cycle has run yet|no metrics API|no VPA asks for node scope)/,
    );
  });
});
