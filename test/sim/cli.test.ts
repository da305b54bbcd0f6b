/** fleetscope sim: argument parsing, the demo fleet, and a real run that serves until SIGTERM. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../cli/command.js';
import { demoFleet, parseSimArgs } from '../../cli/commands/sim.js';
import { type CliRun, startFleetscope } from '../support/cli.js';
import { testDir } from '../support/temp.js';

describe('fleetscope sim arguments', () => {
  it('parses the options', () => {
    expect(
      parseSimArgs([
        '--clusters',
        '2',
        '--nodes=20',
        '--kubeconfig-out',
        '/tmp/k',
        '--port-base',
        '7000',
        '--metrics',
        'absent',
        '--seed',
        '3',
      ]),
    ).toMatchObject({
      clusters: 2,
      nodes: 20,
      out: '/tmp/k',
      portBase: 7000,
      metrics: 'absent',
      seed: 3,
      version: '1.35.0',
      manualClock: false,
    });
  });

  it.each([
    [[], '--clusters is required'],
    [
      ['--clusters', '0', '--nodes', '1', '--kubeconfig-out', 'x'],
      '--clusters needs an integer from 1 to 100',
    ],
    [['--clusters', '1', '--nodes', 'many', '--kubeconfig-out', 'x'], '--nodes needs an integer'],
    [['--clusters', '1', '--nodes', '1'], '--kubeconfig-out is required'],
    [['--clusters', '1', '--nodes', '1', '--kubeconfig-out', 'x', '--metrics', 'maybe'], '--metrics must be'],
    [['--clusters', '1', '--nodes', '1', '--kubeconfig-out', 'x', '--bogus'], 'unknown option'],
    [['--apiserver', 'k.yaml'], '--nodes is required'],
    [
      ['--apiserver', 'k.yaml', '--nodes', '2', '--clusters', '1'],
      '--clusters does not apply with --apiserver',
    ],
    [['--apiserver', 'k.yaml', '--nodes', '2', '--kubeconfig-out', 'x'], '--kubeconfig-out does not apply'],
    [['--apiserver', 'k.yaml', '--nodes', '2', '--manual-clock'], '--manual-clock does not apply'],
    [
      ['--apiserver', 'k.yaml', '--nodes', '2', '--kubernetes-version', '1.35'],
      '--kubernetes-version does not',
    ],
    [['--apiserver', 'k.yaml', '--nodes', '2', '--metrics', 'unavailable'], '--metrics unavailable does not'],
    [['--clusters', '1', '--nodes', '1', '--kubeconfig-out', 'x', '--context', 'c'], '--context goes with'],
  ])('rejects %j', (args, message) => {
    expect(() => parseSimArgs(args)).toThrow(UsageError);
    expect(() => parseSimArgs(args)).toThrow(message);
  });

  it('parses --apiserver: nodes for an existing server, no simulated cluster', () => {
    expect(
      parseSimArgs(['--apiserver', 'k.yaml', '--context', 'test', '--nodes', '4', '--metrics', 'absent']),
    ).toMatchObject({ apiserver: 'k.yaml', context: 'test', nodes: 4, metrics: 'absent', seed: 1 });
  });

  it('builds demo-1..demo-N with DaemonSets whose load spreads across nodes', () => {
    const fleet = demoFleet({ clusters: 3, nodes: 5, seed: 1, metrics: 'available', version: '1.35.0' });
    expect(fleet.map((c) => c.name)).toEqual(['demo-1', 'demo-2', 'demo-3']);
    expect(new Set(fleet.map((c) => c.seed)).size).toBe(3);
    for (const c of fleet) {
      expect(c.daemonSets?.length).toBeGreaterThanOrEqual(2);
      expect(c.daemonSets?.every((d) => d.load?.perNode === 'heterogeneous')).toBe(true);
    }
  });
});

describe('fleetscope sim process', () => {
  it('writes the kubeconfig, serves the clusters, and stops cleanly on SIGTERM', async () => {
    const out = path.join(testDir('sim-cli-'), 'kubeconfig.yaml');
    const sim = await startFleetscope(
      ['sim', '--clusters', '2', '--nodes', '3', '--kubeconfig-out', out],
      (o) => o.includes('Ctrl-C stops the simulator.'),
    );
    let ended: CliRun;
    try {
      expect(sim.out()).toMatch(/context demo-1\s+https:\/\/127\.0\.0\.1:\d+/);
      expect(sim.out()).toMatch(/context demo-2\s+https:\/\/127\.0\.0\.1:\d+/);
      const kc = new KubeConfig();
      kc.loadFromString(readFileSync(out, 'utf8'));
      kc.setCurrentContext('demo-2');
      const nodes = await kc.makeApiClient(CoreV1Api).listNode();
      expect(nodes.items).toHaveLength(3);
    } finally {
      ended = await sim.stop('SIGTERM');
    }
    expect(ended.code, ended.err).toBe(0);
    expect(ended.out).toContain('stopped (SIGTERM)');
  });
});
