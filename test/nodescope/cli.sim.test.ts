/**
 * `fleetscope recommendations` on a local state directory filled by real cycles over the simulator.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { startLocalRuntime } from '../../local/runtime.js';
import { startSimulator } from '../../local/sim/index.js';
import { resetClusterConnector } from '../../shared/fleet/cluster-access.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import { runCycle } from '../../shared/nodescope/cycle.js';
import { DynamoNodeScopeStore } from '../../shared/nodescope/store-dynamo.js';
import { runFleetscopeInProcess } from '../support/cli.js';
import { agentDaemonSet, MINUTE, registerFileCluster, START, VPA_RESOURCE, vpaObject } from './helpers.js';

const run = (args: string[]) => runFleetscopeInProcess(args);
/** `recommendations import-checkpoints` of `file` for a DaemonSet of c1, on the state in `dir`. */
const importCheckpoints = (dir: string, file: string, daemonSet = 'monitoring/agent') =>
  run([
    'recommendations',
    'import-checkpoints',
    '--cluster',
    'c1',
    '--daemonset',
    daemonSet,
    '--file',
    file,
    '--state-dir',
    dir,
  ]);

describe('fleetscope recommendations', () => {
  let dir: string;
  let sim: Awaited<ReturnType<typeof startSimulator>>;
  let nodes: string[];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetscope-cli-'));
    sim = await startSimulator({
      clusters: [{ name: 'c1', nodes: 4, seed: 61, vpaCrd: true, daemonSets: [agentDaemonSet()] }],
      now: START,
    });
    sim.cluster('c1').store.put(VPA_RESOURCE, vpaObject({ mode: 'Off' }));
    const kubeconfig = join(dir, 'kubeconfig.yaml');
    await sim.writeKubeconfig(kubeconfig);
    const runtime = await startLocalRuntime({ stateDir: dir });
    const client = ClusterClient.fromKubeconfig(sim.kubeconfig(), { cluster: 'c1', context: 'c1' });
    try {
      await registerFileCluster(runtime, 'c1', kubeconfig, new Date(START));
      const store = new DynamoNodeScopeStore(runtime.db, runtime.table);
      for (let i = 0; i < 4; i++) {
        sim.clock.advance(15 * MINUTE);
        const at = new Date(sim.clock.now()).toISOString();
        const r = await runCycle({
          cluster: 'c1',
          cycleId: at,
          cycleKey: at,
          client,
          store,
          now: () => sim.clock.now(),
        });
        nodes = [...(r.daemonSets[0]?.recs.keys() ?? [])].sort();
      }
      expect(nodes).toHaveLength(4);
    } finally {
      await client.close();
      await runtime.stop();
    }
  });
  afterAll(async () => {
    await resetClusterConnector();
    await sim?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('lists the node-scoped DaemonSets', async () => {
    const r = await run(['recommendations', 'list', '--state-dir', dir]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/c1\s+monitoring\/agent\s+agent\s+Off\s+node\s+\d+\s+-\s+/);
    const inNs = await run(['recommendations', 'list', '-n', 'monitoring', '-o', 'json', '--state-dir', dir]);
    expect(JSON.parse(inNs.out).map((h: { name: string }) => h.name)).toEqual(['agent']);
    const other = await run(['recommendations', 'list', '-n', 'default', '--state-dir', dir]);
    expect(other.out).toBe('no node-scoped DaemonSets in namespace default');
  });

  it('gets recommendations with readable units, and -o yaml carries the same fields as -o json', async () => {
    const args = [
      'recommendations',
      'get',
      '--cluster',
      'c1',
      '--daemonset',
      'monitoring/agent',
      '--state-dir',
      dir,
    ];
    const json = JSON.parse((await run([...args, '-o', 'json'])).out);
    const yaml = parseYaml((await run([...args, '-o', 'yaml'])).out);
    expect(yaml).toEqual(json);
    const [rec] = Object.values(json.dsWide) as { target: Record<string, unknown> }[];
    expect(rec!.target).toMatchObject({ cpuMillicores: expect.any(Number), cpu: expect.any(String) });
    const table = (await run(args)).out;
    expect(table).not.toMatch(/100G|97656250000Ki/);
  });

  it('get of a DaemonSet whose VPA fleetscope leaves to another recommender says so, with the reason', async () => {
    const runtime = await startLocalRuntime({ stateDir: dir });
    try {
      const store = new DynamoNodeScopeStore(runtime.db, runtime.table);
      const rec = (await store.getCluster('c1'))!;
      await store.putCluster({
        ...rec,
        notices: [
          {
            namespace: 'monitoring',
            vpa: 'shipper',
            uid: 'u-1',
            updateMode: 'Auto',
            kind: 'skipped',
            reason: 'spec.recommenders names custom, not fleetscope: left to that recommender',
            daemonSet: 'monitoring/shipper',
          },
        ],
      });
    } finally {
      await runtime.stop();
    }
    const r = await run([
      'recommendations',
      'get',
      '--cluster',
      'c1',
      '--daemonset',
      'monitoring/shipper',
      '--state-dir',
      dir,
    ]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(
      'no node-scoped recommendations for monitoring/shipper in cluster c1: its VPA monitoring/shipper is skipped (spec.recommenders names custom, not fleetscope: left to that recommender)',
    );
  });

  it('gets per-node recommendations next to the DaemonSet-wide one, for one node too', async () => {
    const all = await run([
      'recommendations',
      'get',
      '--cluster',
      'c1',
      '--daemonset',
      'monitoring/agent',
      '--live',
      '--json',
      '--state-dir',
      dir,
    ]);
    expect(all.code).toBe(0);
    const json = JSON.parse(all.out);
    expect(Object.keys(json.nodes).sort()).toEqual(nodes);
    expect(Object.keys(json.dsWide).sort()).toEqual(['collector', 'shipper']);
    // The fallback chain of a node without history, and the instance-type groups it would come from.
    expect(json.fallbackChain).toEqual([
      "the node's own history",
      "its node.kubernetes.io/instance-type group's merged history",
      'DaemonSet-wide',
    ]);
    expect(json.scope).toEqual({
      key: 'node',
      perNode: true,
      groupLabel: 'node.kubernetes.io/instance-type',
    });
    const types = Object.keys(json.groups);
    expect(types.length).toBeGreaterThan(0);
    expect(Object.keys(json.groups[types[0] as string]).sort()).toEqual(['collector', 'shipper']);
    const one = await run([
      'recommendations',
      'get',
      '--cluster',
      'c1',
      '--daemonset',
      'monitoring/agent',
      '--node',
      nodes[0] as string,
      '--state-dir',
      dir,
    ]);
    expect(one.code).toBe(0);
    expect(one.out).toContain('(DaemonSet-wide)');
    expect(one.out).toContain(
      "sized from the first that has a recommendation: the node's own history → its node.kubernetes.io/instance-type group's merged history → DaemonSet-wide",
    );
    expect(one.out).toMatch(/\(group node\.kubernetes\.io\/instance-type=[^)]+\)\s+merged\s+collector/);
    expect(one.out).toContain(nodes[0]);
    expect(one.out).not.toContain(nodes[1]);
    const missing = await run([
      'recommendations',
      'get',
      '--cluster',
      'c1',
      '--daemonset',
      'monitoring/nope',
      '--state-dir',
      dir,
    ]);
    expect(missing.code).toBe(1);
    const usage = await run(['recommendations', 'get', '--cluster', 'c1', '--state-dir', dir]);
    expect(usage.code).toBe(2);
  });

  it('exports the stored history as VerticalPodAutoscalerCheckpoints, and imports them', async () => {
    const r = await run([
      'recommendations',
      'checkpoints',
      '--cluster',
      'c1',
      '--daemonset',
      'monitoring/agent',
      '--state-dir',
      dir,
    ]);
    expect(r.code).toBe(0);
    const list = JSON.parse(r.out);
    expect(list.kind).toBe('List');
    expect(list.items.length).toBe(nodes.length * 2 + 2);
    const file = join(dir, 'checkpoints.json');
    await writeFile(file, r.out);
    const back = await importCheckpoints(dir, file);
    expect(back.code).toBe(0);
    // Every node already has its own history, which wins; each item skipped says why.
    const lines = back.out.split('\n');
    expect(lines[0]).toBe(`c1 monitoring/agent: 0 checkpoint(s) imported, ${list.items.length} skipped`);
    expect(lines.slice(1)).toHaveLength(list.items.length);
    expect(lines.filter((l) => /: node \S+ has its own history of /.test(l))).toHaveLength(nodes.length * 2);
    expect(lines.filter((l) => /: not node-scoped/.test(l))).toHaveLength(2);

    // Another cluster's nodes never enter this DaemonSet's history (nor its DaemonSet-wide recommendation).
    const get = () =>
      run([
        'recommendations',
        'get',
        '--cluster',
        'c1',
        '--daemonset',
        'monitoring/agent',
        '--live',
        '--json',
        '--state-dir',
        dir,
      ]);
    const before = (await get()).out;
    // biome-ignore lint/suspicious/noExplicitAny: checkpoint objects as exported
    const foreign = list.items.map((c: any, i: number) => ({
      ...c,
      spec: { ...c.spec, scopeValue: c.spec.scopeValue && `elsewhere-${i}` },
    }));
    await writeFile(file, JSON.stringify({ kind: 'List', items: [...foreign, { kind: 'Pod' }] }));
    const other = await importCheckpoints(dir, file);
    expect(other.code).toBe(0);
    const out = other.out.split('\n');
    expect(out[0]).toBe(`c1 monitoring/agent: 0 checkpoint(s) imported, ${list.items.length + 1} skipped`);
    expect(out.filter((l) => /: not a node of cluster c1$/.test(l))).toHaveLength(nodes.length * 2);
    expect(out).toContain(
      '  skipped item [' +
        list.items.length +
        ']: not a VerticalPodAutoscalerCheckpoint with spec.containerName and status',
    );
    expect((await get()).out).toBe(before);
  });

  it('import-checkpoints refuses a file that is not JSON, and a DaemonSet whose nodes it cannot read', async () => {
    const file = join(dir, 'not-json.txt');
    await writeFile(file, 'kind: List\n');
    const importing = (daemonSet: string) => importCheckpoints(dir, file, daemonSet);
    const notJson = await importing('monitoring/agent');
    expect(notJson.code).toBe(2);
    expect(notJson.err).toMatch(/the checkpoints file is not JSON/);
    await writeFile(file, '[]');
    const missing = await importing('monitoring/nope');
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(
      /cannot read the nodes of c1 and monitoring\/nope to check the checkpoints against: .*not found/,
    );
  });

  it('installs the scoped VPA CRD in a registered cluster, saying what it changes first; --dry-run writes nothing', async () => {
    const install = ['recommendations', 'install-crd', '--cluster', 'c1', '--state-dir', dir];
    const crd = () => sim.cluster('c1').store.get('customresourcedefinitions', VPA_RESOURCE);
    const before = crd();
    const dry = await run([...install, '--dry-run']);
    expect(dry.err).toBe('');
    const [shape, ...plan] = dry.out.split('\n');
    const SHAPE =
      'c1: status shape upstream: AEP-10031 as it stands: status.recommendationGroups (targets only), status.recommendation the DaemonSet-wide fallback';
    expect(shape).toBe(SHAPE);
    expect(plan[0]).toBe('c1: would update the VerticalPodAutoscaler CRD:');
    expect(plan).toContain(
      '  + spec.versions[v1].schema.openAPIV3Schema.properties.status.properties.recommendationGroups',
    );
    expect(plan).toContain('  + spec.versions[v1].schema.openAPIV3Schema.properties.spec.properties.scope');
    expect(plan.at(-1)).toBe('c1: dry run: the API server accepts it (dryRun=All); nothing was written');
    expect(crd()).toEqual(before);
    const r = await run(install);
    expect(r.err).toBe('');
    expect(r.out.split('\n')).toEqual([
      SHAPE,
      'c1: will update the VerticalPodAutoscaler CRD:',
      ...plan.slice(1, -1),
      'c1: VerticalPodAutoscaler CRD updated',
    ]);
    expect(crd()?.metadata.resourceVersion).not.toBe(before?.metadata.resourceVersion);
    expect((await run(install)).out).toBe(
      "c1: the VerticalPodAutoscaler CRD already is fleetscope's variant (status shape upstream: AEP-10031 as it stands: status.recommendationGroups (targets only), status.recommendation the DaemonSet-wide fallback); nothing to change",
    );
    const bad = await run([...install, '--status-shape', 'fork']);
    expect(bad.code).not.toBe(0);
    expect(bad.err).toContain('--status-shape fork: use one of upstream, deckhouse');
  });
});
