/**
 * `fleetscope recommendations history` through bin/fleetscope, on a state filled by a real `run --once`
 * over the simulator: a DaemonSet whose resizes were sent (capped at +50%), one whose resizes a
 * LimitRange holds; kubectl habits (-o json|name, --no-headers), the exit codes of cli/exit-codes.ts,
 * and the holds under `recommendations list`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import { agentDaemonSet, START, VPA_RESOURCE, vpaObject } from '../nodescope/helpers.js';
import { runFleetscopeInProcess } from '../support/cli.js';
import { fleetscope } from './bin.js';

let sim: Simulator;
let dir: string;
let stateDir: string;
const cli = (...args: string[]) => fleetscope(args, { stateDir });
const SENT = ['--cluster', 'c1', '--daemonset', 'monitoring/agent'];
const HELD = ['--cluster', 'c1', '--daemonset', 'guarded/agent'];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fleetscope-history-'));
  stateDir = join(dir, 'state');
  const kubeconfig = join(dir, 'kubeconfig.yaml');
  const agent = (namespace: string) =>
    agentDaemonSet({
      namespace,
      containers: [
        {
          name: 'collector',
          requests: { cpu: '100m', memory: '256Mi' },
          limits: { cpu: '200m', memory: '512Mi' },
        },
      ],
      load: { cpu: 300, memory: '200Mi', noise: 0.01 },
    });
  sim = await startSimulator({
    clusters: [
      { name: 'c1', nodes: 3, seed: 62, vpaCrd: true, daemonSets: [agent('monitoring'), agent('guarded')] },
    ],
    now: START,
  });
  const store = sim.cluster('c1').store;
  for (const namespace of ['monitoring', 'guarded']) {
    const vpa = vpaObject({ mode: 'InPlace', namespace }) as {
      metadata: { annotations: Record<string, string> };
    };
    vpa.metadata.annotations['fleetscope.io/max-increase'] = '50%';
    store.put(VPA_RESOURCE, vpa);
  }
  store.put('limitranges', {
    metadata: { name: 'lr', namespace: 'guarded' },
    spec: { limits: [{ type: 'Container', max: { cpu: '250m' } }] },
  });
  await sim.writeKubeconfig(kubeconfig);
  for (const args of [
    ['cluster', 'register', '--name', 'c1', '--kubeconfig', kubeconfig, '--context', 'c1'],
    ['run', '--once'],
  ]) {
    const r = await runFleetscopeInProcess(args, { stateDir });
    expect(r.code, `${args.join(' ')}: ${r.err}`).toBe(0);
  }
}, 120_000);
afterAll(async () => {
  await sim?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('recommendations history', () => {
  it('shows per node what was sent and what the caps held back, in the shared units', async () => {
    const r = await cli('recommendations', 'history', ...SENT);
    expect([r.code, r.err]).toEqual([0, '']);
    const lines = r.out.split('\n');
    expect(lines[0]).toMatch(/^NODE +TIME +OUTCOME +CONTAINER +CPU REQUEST +MEMORY REQUEST +WHY$/);
    const rows = lines.slice(1);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row).toMatch(
        / requested +collector +100m → 150m \(\+50m, \+50%\) +256Mi → \d+Mi .* capped: container "collector" cpu request/,
      );
    }
    const bare = await cli('recommendations', 'history', ...SENT, '--no-headers');
    expect(bare.out.split('\n')).toEqual(rows);
  });

  it('carries the same entries in -o json, and one name per node in -o name', async () => {
    const doc = JSON.parse((await cli('recommendations', 'history', ...SENT, '-o', 'json')).out);
    expect(doc.cluster).toBe('c1');
    expect(doc.daemonSet).toBe('monitoring/agent');
    const nodes: string[] = doc.nodes.map((n: { node: string }) => n.node);
    expect(nodes.length).toBeGreaterThan(0);
    const first = doc.nodes[0].entries[0];
    expect(first).toMatchObject({
      outcome: 'requested',
      capped: expect.arrayContaining(['container "collector" cpu request']),
    });
    expect(first.at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(first.changes[0].after.requests).toMatchObject({ cpuMillicores: 150, cpu: '150m' });
    const names = await cli('recommendations', 'history', ...SENT, '-o', 'name');
    expect(names.out.split('\n')).toEqual(nodes.map((n) => `c1/monitoring/agent/${n}`));
    const one = JSON.parse(
      (await cli('recommendations', 'history', ...SENT, '--node', nodes[0] as string, '-o', 'json')).out,
    );
    expect(one.nodes.map((n: { node: string }) => n.node)).toEqual([nodes[0]]);
  });

  it('says which guard held a resize, and `recommendations list` says it under the table', async () => {
    const r = await cli('recommendations', 'history', ...HELD);
    expect(r.code).toBe(0);
    for (const row of r.out.split('\n').slice(1))
      expect(row).toMatch(
        / guarded-by LimitRange lr +collector +100m → 150m .* container "collector": cpu limit 300m above the maximum 250m/,
      );
    const list = await cli('recommendations', 'list', '--cluster', 'c1');
    expect(list.out).toMatch(
      /\nheld: c1 guarded\/agent: \d pods? held by LimitRange lr \(container "collector": cpu limit 300m above the maximum 250m\)/,
    );
    const json = JSON.parse((await cli('recommendations', 'list', '--cluster', 'c1', '-o', 'json')).out);
    const held = json.find((d: { namespace: string }) => d.namespace === 'guarded');
    expect(held.guards.held[0]).toMatchObject({ by: 'LimitRange lr' });
  });

  it('exits 1 where there is no history, 2 for a command line that is wrong', async () => {
    const none = await cli('recommendations', 'history', ...SENT, '--node', 'no-such-node');
    expect([none.code, none.out]).toEqual([1, '']);
    expect(none.err).toBe(
      'fleetscope recommendations: no resize history for monitoring/agent on node no-such-node in cluster c1',
    );
    const usage = await cli('recommendations', 'history', '--cluster', 'c1');
    expect(usage.code).toBe(2);
    expect(usage.err).toMatch(/history needs --daemonset NAMESPACE\/NAME/);
    expect((await cli('recommendations', 'history', ...SENT, '-o', 'xml')).code).toBe(2);
  });
});
