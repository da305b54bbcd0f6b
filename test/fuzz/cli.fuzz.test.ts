/**
 * CLI inputs: fuzzed values for the commands that write are accepted or refused with a message (never
 * a stack trace), and a refused command writes nothing; commands that only read refuse a state
 * directory that does not exist; `sim` does not overwrite a kubeconfig unless asked.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator } from '../../local/sim/index.js';
import { connectState, type SharedState } from '../../local/state/connect.js';
import { resetClusterConnector } from '../../shared/fleet/cluster-access.js';
import { DEFAULTS } from '../../shared/platform/config.js';
import { runFleetscope, runFleetscopeInProcess } from '../support/cli.js';
import { testDir } from '../support/temp.js';
import { fingerprint } from './helpers.js';

const STACK = /\n\s+at .+:\d+:\d+/;

describe('fuzzed CLI inputs', () => {
  let dir: string;
  let kubeconfig: string;
  let shared: SharedState;
  let db: DynamoDBDocumentClient;
  let sim: Awaited<ReturnType<typeof startSimulator>>;

  beforeAll(async () => {
    dir = (await import('node:fs')).mkdtempSync(join((await import('node:os')).tmpdir(), 'fleetscope-fuzz-'));
    sim = await startSimulator({ clusters: [{ name: 'fz', nodes: 1, seed: 5 }] });
    kubeconfig = join(dir, 'kubeconfig.yaml');
    await sim.writeKubeconfig(kubeconfig);
    shared = await connectState(join(dir, 'state'));
    db = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint: shared.endpoint,
        region: 'us-east-1',
        credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
      }),
    );
    const reg = await cli([
      'cluster',
      'register',
      '--name',
      'fz',
      '--kubeconfig',
      kubeconfig,
      '--context',
      'fz',
    ]);
    expect(reg.code).toBe(0);
  });
  afterAll(async () => {
    await resetClusterConnector();
    db?.destroy();
    shared?.release();
    await sim?.stop();
    (await import('node:fs')).rmSync(dir, { recursive: true, force: true });
  });

  const cli = (args: string[]) => runFleetscopeInProcess(args, { stateDir: join(dir, 'state') });
  const text = fc.oneof(
    fc.string({ maxLength: 30 }),
    fc.constantFrom(
      '',
      '-',
      '--x',
      'UPPER',
      'a.b.c',
      'x'.repeat(300),
      'id.k8s.io',
      'team.example.com',
      'fz',
      'blue',
    ),
  );
  const writes = fc.oneof(
    fc
      .tuple(text, text)
      .map(([name, ctx]) => [
        'cluster',
        'register',
        '--name',
        name,
        '--kubeconfig',
        kubeconfig,
        '--context',
        ctx,
      ]),
    fc
      .tuple(text, text)
      .map(([name, value]) => ['claims', 'set', '--cluster', 'fz', '--name', name, '--value', value]),
    fc.tuple(text).map(([name]) => ['claims', 'delete', '--cluster', 'fz', '--name', name]),
    fc.tuple(text, text).map(([cluster, set]) => ['clusterset', 'join', '--cluster', cluster, '--set', set]),
    fc.tuple(text).map(([name]) => ['cluster', 'deregister', '--name', name]),
    fc.tuple(text, text).map(([flag, value]) => ['claims', 'config', `--${flag}`, value]),
    fc
      .tuple(fc.oneof(text, fc.constant('fz')), fc.oneof(text, fc.constant('widgets/widgets')), text)
      .map(([cluster, feature, desired]) => [
        'features',
        'set',
        '--cluster',
        cluster,
        '--feature',
        feature,
        '--desired',
        desired,
      ]),
    fc
      .tuple(text, fc.oneof(text, fc.constant('1,100%')), text)
      .map(([to, waves, pause]) => [
        'features',
        'rollout',
        '--feature',
        'claims',
        '--to',
        to,
        '--waves',
        waves,
        '--pause',
        pause,
      ]),
  );

  it('a refused write writes nothing, and no input ends in a stack trace', async () => {
    const tables = [DEFAULTS.table, DEFAULTS.idempotencyTable];
    const codes: Record<number, number> = {};
    await fc.assert(
      fc.asyncProperty(writes, async (args) => {
        const before = await fingerprint(db, tables);
        const r = await cli(args);
        codes[r.code] = (codes[r.code] ?? 0) + 1;
        expect([0, 1, 2]).toContain(r.code);
        expect(`${r.out}\n${r.err}`).not.toMatch(STACK);
        if (r.code !== 0) {
          expect(r.err.length).toBeGreaterThan(0);
          expect(await fingerprint(db, tables)).toBe(before);
        }
      }),
      { numRuns: 30, seed: 2026 },
    );
    // Refusals after the state was opened (exit 1) as well as at parsing (2), and accepted writes.
    expect(Object.keys(codes).sort()).toEqual(['0', '1', '2']);
  }, 300_000);

  it('commands that only read refuse a state directory that does not exist, and do not create it', async () => {
    const missing = join(testDir('fleetscope-ro-'), 'no-such-state');
    for (const args of [
      ['cluster', 'list'],
      ['clusterset', 'list'],
      ['claims', 'get'],
      ['recommendations', 'list'],
      ['recommendations', 'get', '--cluster', 'c', '--daemonset', 'a/b'],
    ]) {
      const r = await runFleetscopeInProcess(args, { stateDir: missing });
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.err).toContain(`state directory ${missing} does not exist`);
      expect(existsSync(missing)).toBe(false);
    }
  });

  it('sim refuses to overwrite an existing kubeconfig unless --force', async () => {
    const file = join(testDir('fleetscope-simout-'), 'kubeconfig');
    writeFileSync(file, 'my real kubeconfig');
    const r = await runFleetscope(['sim', '--clusters', '1', '--nodes', '1', '--kubeconfig-out', file]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`${file} exists; pass --force to overwrite it`);
    expect(readFileSync(file, 'utf8')).toBe('my real kubeconfig');
  });
});
