/**
 * Errors a person can act on (issue 18): each names what is wrong in words, once, with the command's
 * prefix, and exits by one rule (1: the command ran and the world said no; 2: the command line is wrong).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Refreshed, refreshTable } from '../../cli/commands/cluster-refresh.js';
import { readStackOutputs } from '../../cli/context.js';
import { startLocalRuntime } from '../../local/runtime.js';
import { DynamoRegistry } from '../../shared/fleet/registry-dynamo.js';
import { runFleetscopeInProcess } from '../support/cli.js';

describe('errors a person can act on', () => {
  let dir: string;
  const run = (...args: string[]) => runFleetscopeInProcess(args, { stateDir: join(dir, 'state') });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetscope-errors-'));
    const runtime = await startLocalRuntime({ stateDir: join(dir, 'state') });
    try {
      await new DynamoRegistry(runtime.db, runtime.table).add({
        name: 'c1',
        kubeconfig: { kind: 'file', path: join(dir, 'none.yaml'), context: 'c1' },
        labels: {},
        registeredAt: new Date().toISOString(),
      });
    } finally {
      await runtime.stop();
    }
  }, 60_000);
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('says a missing input file or output directory in words, naming it, exit 1', async () => {
    const input = await runFleetscopeInProcess(['recommend', '--input', join(dir, 'nope.json')]);
    expect([input.code, input.err]).toEqual([
      1,
      `fleetscope recommend: cannot read ${join(dir, 'nope.json')}: no such file`,
    ]);
    const out = await run('report', '--out', join(dir, 'no-dir', 'r.html'));
    expect(out.code).toBe(1);
    expect(out.err).toBe(
      `fleetscope report: cannot write ${join(dir, 'no-dir', 'r.html')}: the directory ${join(dir, 'no-dir')} does not exist`,
    );
    for (const r of [input, out]) expect(r.err).not.toMatch(/ENOENT/);
  }, 60_000);

  it('prefixes a DaemonSet with no recommendations like every other failure, exit 1', async () => {
    const r = await run('recommendations', 'get', '--cluster', 'c1', '--daemonset', 'monitoring/nosuch');
    expect([r.code, r.err]).toEqual([
      1,
      'fleetscope recommendations: no node-scoped recommendations for monitoring/nosuch in cluster c1',
    ]);
  }, 60_000);

  it('takes a negative number after a space as the value it is', async () => {
    const r = await run('run', '--once', '--speedup', '-2');
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--speedup needs a decimal number of at least 1, got "-2"/);
    expect(r.err).not.toMatch(/ambiguous/);
  });

  it("says an unreachable cluster's error once in cluster refresh", () => {
    const error = 'cluster "c1": get version failed: connection failed: ECONNREFUSED';
    const before = { cluster: 'c1', reachable: true, metricsApi: 'available' as const, observedAt: 't0' };
    const after = {
      cluster: 'c1',
      reachable: false,
      metricsApi: 'unknown' as const,
      error,
      observedAt: 't1',
    };
    const rows: Refreshed[] = [
      {
        cluster: 'c1',
        before,
        after,
        changes: [
          { field: 'reachable', from: true, to: false },
          { field: 'error', from: null, to: error },
        ],
      },
      // Still down at the next refresh: nothing changed, and the error is still said, once.
      { cluster: 'c2', before: after, after, changes: [] },
    ];
    const table = refreshTable(rows, false).join('\n');
    expect(table.split('ECONNREFUSED').length - 1).toBe(2);
    expect(table).toMatch(/c2\s+no\s+unchanged; error: cluster "c1"/);
  });

  it('--aws: says why the stack outputs could not be read', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, {
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      AWS_ENDPOINT_URL_CLOUDFORMATION: 'http://127.0.0.1:1',
      AWS_MAX_ATTEMPTS: '1',
    });
    try {
      const err = await readStackOutputs({ stack: 'Fleetscope' }).catch((e: Error) => e);
      expect(String(err)).toMatch(/cannot read the outputs of stack "Fleetscope" \(.*ECONNREFUSED.*\)/);
    } finally {
      process.env = saved;
    }
  }, 60_000);
});
