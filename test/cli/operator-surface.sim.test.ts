/**
 * Issue 31, as an operator meets it through bin/fleetscope: what `run` says of a worker whose feature
 * is off, and the kubectl habits (-o name, -o jsonpath, --no-headers, tables alone on stdout).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DemoFleet, startDemoFleet } from '../../local/demo-fleet.js';
import { fleetscope } from './bin.js';

let fleet: DemoFleet;
let dir: string;
let stateDir: string;
const cli = (...args: string[]) => fleetscope(args, { stateDir });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fleetscope-surface-'));
  stateDir = join(dir, 'state');
  const kubeconfig = join(dir, 'demo.yaml');
  fleet = await startDemoFleet({ clusters: 1, nodes: 3, kubeconfigPath: kubeconfig, clockSpeedup: 0 });
  const reg = await cli(
    'cluster',
    'register',
    '--name',
    'demo-1',
    '--kubeconfig',
    kubeconfig,
    '--context',
    'demo-1',
  );
  expect([reg.code, reg.err]).toEqual([0, '']);
}, 120_000);
afterAll(async () => {
  await fleet?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('run: a worker whose feature is turning off', () => {
  it('says the state in words, in the table and in -o json', async () => {
    const set = await cli(
      'features',
      'set',
      '--cluster',
      'demo-1',
      '--feature',
      'balloons',
      '--desired',
      'off',
    );
    expect(set.code).toBe(0);
    const table = await cli('run', '--once', '--cluster', 'demo-1');
    expect(table.code).toBe(0);
    // "0 T; 1 u; 2 r; ...": a state's name spread into its characters.
    expect(table.out).not.toMatch(/\d [A-Za-z]; \d [A-Za-z];/);
    expect(table.out).toMatch(/^demo-1\s+balloons\s+ok\s+.*\sskipped: feature TurningOff$/m);
    const json = JSON.parse((await cli('run', '--once', '--cluster', 'demo-1', '-o', 'json')).out);
    const balloons = json.results.find((r: { capability: string }) => r.capability === 'balloons');
    expect(balloons.detail).toMatch(/^skipped: feature Turning(Off|On)$|^skipped: feature Off$/);
  }, 180_000);
});

describe('run: a run that reached no cluster', () => {
  it('exits 1 and says why, so a cron job does not read it as done', async () => {
    const empty = join(dir, 'empty-state');
    const r = await fleetscope(['run', '--once'], { stateDir: empty });
    expect(r.code, r.out + r.err).toBe(1);
    expect(r.err).toMatch(/^fleetscope run: no cycle ran on any cluster: none is registered/);
    expect(r.out).toMatch(/\(exit 1\)$/);
    const json = JSON.parse((await fleetscope(['run', '--once', '-o', 'json'], { stateDir: empty })).out);
    expect(json.summary).toMatchObject({ reachedNoCluster: true, failed: 0 });
  }, 120_000);
});

describe("kubectl's habits", () => {
  it('-o name prints one name per object, for xargs', async () => {
    expect(await cli('cluster', 'list', '-o', 'name')).toMatchObject({ code: 0, out: 'demo-1' });
    const features = (await cli('features', 'list', '--cluster', 'demo-1', '-o', 'name')).out.split('\n');
    expect(features).toContain('demo-1/fleetscope-system/balloons');
  }, 60_000);

  it('-o jsonpath=TEMPLATE reads the document -o json prints', async () => {
    expect((await cli('cluster', 'list', '-o', 'jsonpath={[*].cluster.name}')).out).toBe('demo-1');
    const json = JSON.parse((await cli('features', 'list', '--cluster', 'demo-1', '-o', 'json')).out);
    const r = await cli(
      'features',
      'list',
      '--cluster',
      'demo-1',
      '-o',
      'jsonpath={range .features[*]}{.feature}={.state}{"\\n"}{end}',
    );
    expect(r.code).toBe(0);
    expect(r.out.split('\n')).toEqual(
      json.features.map((f: { feature: string; state: string }) => `${f.feature}=${f.state}`),
    );
    const bad = await cli('cluster', 'list', '-o', 'jsonpath={range [*]}{.x}');
    expect([bad.code, bad.err.split('\n')[0]]).toEqual([
      2,
      'fleetscope cluster: -o jsonpath={range [*]}{.x}: {range} without {end}',
    ]);
  }, 60_000);

  it('--no-headers leaves a table its rows alone', async () => {
    // The ages tick between the two calls.
    const lines = async (...args: string[]) =>
      (await cli('cluster', 'list', ...args)).out.replace(/\(\d+s ago\)/g, '(ago)').split('\n');
    const table = await lines();
    const rows = await lines('--no-headers');
    expect(table[0]).toMatch(/^NAME\s/);
    expect(rows).toEqual(table.slice(1));
    const claims = await cli('claims', 'get', '--no-headers');
    expect(claims.out).toMatch(/^demo-1\s/);
    const refused = await cli('cluster', 'list', '--no-headers', '-o', 'json');
    expect(refused.code).toBe(2);
  }, 60_000);

  it('claims get: the table alone on stdout, nothing above it', async () => {
    const r = await cli('claims', 'get');
    expect(r.code).toBe(0);
    expect(r.out.split('\n')[0]).toMatch(/^CLUSTER\s+ID \(id\.k8s\.io\)\s+CLUSTERSET/);
    expect(r.err).toBe('');
  }, 60_000);
});
