/**
 * `fleetscope balloons` on a local state directory, against a simulated cluster: policies set, shown and
 * deleted; an explicit size checked against the node and served at once; status in every format; and
 * bad input refused with the field named and nothing written.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { startLocalRuntime } from '../../local/runtime.js';
import { startSimulator } from '../../local/sim/index.js';
import { EC2_HOURLY_USD } from '../../shared/balloons/prices.js';
import { DynamoBalloonStore } from '../../shared/balloons/store-dynamo.js';
import { resetClusterConnector } from '../../shared/fleet/cluster-access.js';
import { DynamoRegistry } from '../../shared/fleet/registry-dynamo.js';
import { parseCpu, parseMemory } from '../../shared/kernel/quantity.js';
import { runFleetscopeInProcess } from '../support/cli.js';
import { START } from './helpers.js';

describe('fleetscope balloons', () => {
  let dir: string;
  let sim: Awaited<ReturnType<typeof startSimulator>>;
  let node: string;
  const run = (args: string[]) => runFleetscopeInProcess(args, { stateDir: dir });
  const stored = async () => {
    const runtime = await startLocalRuntime({ stateDir: dir });
    try {
      return await new DynamoBalloonStore(runtime.db, runtime.table).load('c1');
    } finally {
      await runtime.stop();
    }
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetscope-balloons-cli-'));
    sim = await startSimulator({ clusters: [{ name: 'c1', nodes: 2, seed: 5 }], now: START });
    const kubeconfig = join(dir, 'kubeconfig.yaml');
    await sim.writeKubeconfig(kubeconfig);
    node = sim.cluster('c1').store.list('nodes')[0].metadata.name;
    const runtime = await startLocalRuntime({ stateDir: dir });
    try {
      await new DynamoRegistry(runtime.db, runtime.table).add({
        name: 'c1',
        kubeconfig: { kind: 'file', path: kubeconfig, context: 'c1' },
        labels: {},
        registeredAt: new Date(START).toISOString(),
      });
    } finally {
      await runtime.stop();
    }
  });
  afterAll(async () => {
    resetClusterConnector();
    await sim?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('says why status is empty: nothing asks for balloons, then no cycle has run since something does', async () => {
    expect((await run(['balloons', 'status'])).out).toMatch(/^no balloons:\n {2}c1: no balloon policy /);
    const policy = ['--cluster', 'c1', '--name', 'why', '--selector', 'kubernetes.io/os=linux'];
    expect(
      (await run(['balloons', 'policy', 'set', ...policy, '--max-cpu', '2', '--max-memory', '4Gi'])).code,
    ).toBe(0);
    expect((await run(['balloons', 'status'])).out).toBe(
      'no balloons:\n  c1: no cycle has run yet (fleetscope run --once --cluster c1)',
    );
    expect((await run(['balloons', 'policy', 'delete', '--cluster', 'c1', '--name', 'why'])).code).toBe(0);
  });

  it('sets, shows and deletes a policy; refuses a bad one naming the field, writing nothing', async () => {
    const bad = await run([
      'balloons',
      'policy',
      'set',
      '--cluster',
      'c1',
      '--name',
      'pool',
      '--selector',
      'pool=a',
      '--max-cpu',
      '4',
      '--max-memory',
      '8Gi',
      '--min-cpu',
      '5',
      '--min-memory',
      '1Gi',
    ]);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/min.cpu: 5 cores exceeds max.cpu 4 cores/);
    expect(
      (
        await run([
          'balloons',
          'policy',
          'set',
          '--cluster',
          'c1',
          '--name',
          'pool',
          '--selector',
          'pool in (',
          '--max-cpu',
          '4',
          '--max-memory',
          '8Gi',
        ])
      ).err,
    ).toMatch(/selector/);
    expect((await stored()).policies).toEqual([]);
    const file = join(dir, 'policy.yaml');
    await writeFile(
      file,
      'name: pool\nselector: pool=a\nmax: { cpu: "4", memory: 8Gi }\nheadroomPercent: 25\n',
    );
    const ok = await run(['balloons', 'policy', 'set', '--cluster', 'c1', '--file', file]);
    expect(ok.code).toBe(0);
    const yaml = parseYaml((await run(['balloons', 'policy', 'get', '--cluster', 'c1', '-o', 'yaml'])).out);
    const json = JSON.parse((await run(['balloons', 'policy', 'get', '--cluster', 'c1', '--json'])).out);
    expect(yaml).toEqual(json);
    expect(json.policies[0]).toMatchObject({
      name: 'pool',
      headroomPercent: 25,
      max: { cpuMillicores: 4000, cpu: '4', memory: '8Gi' },
    });
    expect((await run(['balloons', 'policy', 'get', '--cluster', 'c1'])).out).toMatch(/pool\s+pool=a\s+25%/);
    expect((await run(['balloons', 'policy', 'delete', '--cluster', 'c1', '--name', 'pool'])).code).toBe(0);
    const again = await run(['balloons', 'policy', 'delete', '--cluster', 'c1', '--name', 'pool']);
    expect([again.code, again.err]).toEqual([
      1,
      'fleetscope balloons: cluster c1 has no balloon policy "pool"',
    ]);
  });

  it('refuses an explicit size for an unknown node, above allocatable, or malformed, writing nothing', async () => {
    // Exit 1: the cluster said no (a node that does not exist, like an unknown cluster); 2: the command
    // line is malformed (README, exit codes).
    const cases: [string[], RegExp, number][] = [
      [['--node', 'ghost', '--cpu', '1', '--memory', '1Gi'], /node: "ghost" does not exist/, 1],
      [
        ['--node', node, '--cpu', '999', '--memory', '1Gi'],
        /cpu: 999 cores exceeds node .* allocatable \d+(\.\d+)? cores/,
        1,
      ],
      [['--node', node, '--cpu', 'lots', '--memory', '1Gi'], /cpu: "lots" is not a cpu quantity/, 2],
      [['--node', node, '--cpu', '1', '--memory=-1Gi'], /memory: "-1Gi" is negative/, 2],
      // A negative value after a space is that flag's value, not "ambiguous".
      [['--node', node, '--cpu', '-2', '--memory', '1Gi'], /cpu: "-2" is negative/, 2],
      // issue 28: a unit-less memory is bytes; a zero size never grows the node
      [['--node', node, '--cpu', '1', '--memory', '4'], /memory: "4" is 4 bytes .* 4Gi or 4Mi/, 2],
      [['--node', node, '--cpu', '0', '--memory', '0'], /cpu: must be greater than zero/, 2],
      [
        ['--node', 'Bad_Node', '--cpu', '1', '--memory', '1Gi'],
        /node "Bad_Node" is not an RFC 1123 subdomain/,
        2,
      ],
    ];
    for (const [args, why, code] of cases) {
      const r = await run(['balloons', 'resize', '--cluster', 'c1', ...args]);
      expect(r.code, args.join(' ')).toBe(code);
      expect(r.err).toMatch(why);
      expect(r.err).not.toMatch(/ambiguous/);
    }
    expect((await stored()).requests).toEqual([]);
  });

  it('serves an explicit size at once and shows it in status, in every format', async () => {
    const r = await run([
      'balloons',
      'resize',
      '--cluster',
      'c1',
      '--node',
      node,
      '--cpu',
      '1',
      '--memory',
      '2Gi',
      '--by',
      'test',
    ]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/requested: node .* offers cpu 1 core, memory 2Gi/);
    const json = JSON.parse((await run(['balloons', 'status', '--cluster', 'c1', '-o', 'json'])).out);
    const row = json.clusters[0].nodes.find((n: { node: string }) => n.node === node);
    expect(row).toMatchObject({ pool: 'explicit', desired: { cpuMillicores: 1000, memory: '2Gi' } });
    expect(parseYaml((await run(['balloons', 'status', '--cluster', 'c1', '-o', 'yaml'])).out)).toEqual(json);
    const table = (await run(['balloons', 'status', '--cluster', 'c1'])).out;
    expect(table).toMatch(/CLUSTER\s+NODE\s+POOL\s+ALLOCATABLE\s+BALLOON \(DOESN'T EXIST\)/);
    expect((await run(['balloons', 'status', '--cluster', 'c1', '-o', 'wide'])).out).toMatch(
      /PODS IN THE WAY/,
    );
    expect((await run(['balloons', 'status', '--cluster', 'c1', '-o', 'xml'])).err).toMatch(
      /-o xml: use one of table, wide, json, yaml/,
    );
    const cleared = await run(['balloons', 'resize', '--cluster', 'c1', '--node', node, '--clear']);
    expect(cleared.out).toMatch(/cleared/);
    expect((await stored()).requests).toEqual([]);
  });

  it('status warns of a ballooned pool a node autoscaler manages (Karpenter, from its node label)', async () => {
    const c = sim.cluster('c1');
    const n = c.store.get('nodes', node);
    c.store.put('nodes', {
      ...n,
      metadata: { ...n.metadata, labels: { ...n.metadata.labels, 'karpenter.sh/nodepool': 'general' } },
    });
    const args = ['--cluster', 'c1', '--node', node];
    expect((await run(['balloons', 'resize', ...args, '--cpu', '1', '--memory', '2Gi'])).code).toBe(0);
    const json = JSON.parse((await run(['balloons', 'status', '--cluster', 'c1', '-o', 'json'])).out);
    expect(json.clusters[0].nodes.find((x: { node: string }) => x.node === node).autoscaler).toBe(
      'Karpenter (karpenter.sh/nodepool=general)',
    );
    expect((await run(['balloons', 'status', '--cluster', 'c1'])).out).toMatch(
      /c1: warning: pool explicit: 1 ballooned node\(s\) managed by Karpenter \(karpenter.sh\/nodepool=general\): it counts the balloon's requests as used/,
    );
    expect((await run(['balloons', 'resize', ...args, '--clear'])).code).toBe(0);
  });

  it("values ballooned capacity at the node's price per node, pool and cluster; a policy's price wins", async () => {
    await run(['balloons', 'resize', '--cluster', 'c1', '--node', node, '--cpu', '1', '--memory', '2Gi']);
    const status = async () =>
      JSON.parse((await run(['balloons', 'status', '--cluster', 'c1', '-o', 'json'])).out);
    const k8sNode = sim.cluster('c1').store.get('nodes', node);
    const type = k8sNode.metadata.labels['node.kubernetes.io/instance-type'];
    const cap = {
      cpu: parseCpu(k8sNode.status.capacity.cpu),
      memory: parseMemory(k8sNode.status.capacity.memory),
    };
    const expected = (row: { balloon: { cpuMillicores: number; memoryBytes: number } }, hourly: number) =>
      ((row.balloon.cpuMillicores / cap.cpu + row.balloon.memoryBytes / cap.memory) / 2) * hourly * 730;
    const json = await status();
    const row = json.clusters[0].nodes.find((n: { node: string }) => n.node === node);
    expect(row).toMatchObject({ instanceType: type, priceFrom: 'table', hourlyUsd: EC2_HOURLY_USD[type] });
    expect(row.balloonMonthlyUsd).toBeGreaterThan(0);
    expect(row.balloonMonthlyUsd).toBeCloseTo(expected(row, EC2_HOURLY_USD[type]!), 1);
    expect(json.clusters[0].pools).toEqual([
      { pool: 'explicit', balloonMonthlyUsd: row.balloonMonthlyUsd, unpricedNodes: 0 },
    ]);
    expect(json.clusters[0].balloonMonthlyUsd).toBe(row.balloonMonthlyUsd);
    const wide = (await run(['balloons', 'status', '--cluster', 'c1', '-o', 'wide'])).out;
    expect(wide).toMatch(/BALLOON \$\/MONTH/);
    expect(wide).toMatch(/c1: ballooned capacity worth \$[\d,.]+\/month/);
    expect(wide).toMatch(/pool explicit: \$[\d,.]+\/month/);
    // a pool's negotiated price overrides the table
    const file = join(dir, 'priced.json');
    await writeFile(
      file,
      JSON.stringify({
        name: 'priced',
        selector: 'kubernetes.io/os=linux',
        max: { cpu: '1', memory: '2Gi' },
        prices: { [type]: 2 },
      }),
    );
    expect((await run(['balloons', 'policy', 'set', '--cluster', 'c1', '--file', file])).code).toBe(0);
    await run(['balloons', 'resize', '--cluster', 'c1', '--node', node, '--clear']);
    expect((await run(['run', '--once', '--cluster', 'c1'])).code).toBe(0);
    const priced = (await status()).clusters[0].nodes.find((n: { node: string }) => n.node === node);
    expect(priced).toMatchObject({ pool: 'priced', priceFrom: 'policy', hourlyUsd: 2 });
    expect(priced.balloonMonthlyUsd).toBeCloseTo(expected(priced, 2), 1);
    await writeFile(
      file,
      JSON.stringify({
        name: 'priced',
        selector: 'a=b',
        max: { cpu: '1', memory: '2Gi' },
        prices: { [type]: -1 },
      }),
    );
    expect((await run(['balloons', 'policy', 'set', '--cluster', 'c1', '--file', file])).err).toMatch(
      new RegExp(`prices\\.${type.replace('.', '\\.')}: must be a number from 0 to 1000`),
    );
    await run(['balloons', 'policy', 'delete', '--cluster', 'c1', '--name', 'priced']);
  });

  it('resize: says what a size needs, and that a node without one had nothing to clear', async () => {
    const resize = (...args: string[]) => run(['balloons', 'resize', '--cluster', 'c1', ...args]);
    for (const [args, usage] of [
      [['--cpu', '1', '--memory', '2Gi'], /resize needs --node/],
      [['--node', node, '--cpu', '1'], /resize needs --cpu and --memory \(or --clear\)/],
      [['--node', node, '--clear', '--cpu', '1'], /--clear takes no --cpu or --memory/],
      [['--node', node, '--cpu', 'lots', '--memory', '2Gi'], /cpu/],
    ] as const) {
      const r = await resize(...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err, args.join(' ')).toMatch(usage);
    }
    const none = await resize('--node', node, '--clear');
    expect(none.code).toBe(0);
    expect(none.out).toMatch(new RegExp(`node ${node} of cluster c1 had no explicit size`));
  });

  it('answers "not registered" for an unknown cluster on every subcommand', async () => {
    for (const args of [
      ['balloons', 'status', '--cluster', 'nope'],
      ['balloons', 'resize', '--cluster', 'nope', '--node', 'n', '--cpu', '1', '--memory', '1Gi'],
      ['balloons', 'policy', 'get', '--cluster', 'nope'],
      ['balloons', 'policy', 'delete', '--cluster', 'nope', '--name', 'x'],
    ]) {
      const r = await run(args);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.err).toMatch(/cluster "nope" is not registered/);
    }
  });
});
