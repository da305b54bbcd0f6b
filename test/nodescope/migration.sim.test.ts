/**
 * Migration both ways between upstream VPA with DaemonSetScope (AEP-10031: one history per node-label
 * value) and fleetscope (one per node), through the CLI over the simulator:
 *   back     `recommendations checkpoints --scope LABEL`: one checkpoint per group and container, the
 *            merge of the group's nodes (scopeValue = the value, `__empty__` for "", `__absent__`)
 *   forward  `recommendations import-checkpoints --scope LABEL`: a cluster with no history yet takes
 *            each group's history, shared evenly among the group's nodes
 * the names from before AEP-10031's hashed ones (`<vpa>-<container>-<value>`, "" for an empty value)
 * still import, and, beside upstream, the warnings of the last cycle in `recommendations get/list`.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalRuntime } from '../../local/runtime.js';
import { startSimulator } from '../../local/sim/index.js';
import { resetClusterConnector } from '../../shared/fleet/cluster-access.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import { runCycle } from '../../shared/nodescope/cycle.js';
import { DynamoNodeScopeStore } from '../../shared/nodescope/store-dynamo.js';
import { fnv32a } from '../../shared/recommendation/checkpoint/vpa-checkpoint.js';
import { runFleetscopeInProcess } from '../support/cli.js';
import { agentDaemonSet, MINUTE, registerFileCluster, START, VPA_RESOURCE, vpaObject } from './helpers.js';

const POOL = 'example.com/pool';
const run = (args: string[]) => runFleetscopeInProcess(args);

interface Checkpoint {
  metadata: { name: string };
  spec: { vpaObjectName: string; containerName: string; scopeValue?: string };
  status: { totalSamplesCount?: number };
}

describe('migration between upstream VPA (DaemonSetScope) and fleetscope', () => {
  let dir: string;
  let sim: Awaited<ReturnType<typeof startSimulator>>;
  /** Node -> pool label value (undefined: no label), per cluster. */
  const pools: Record<string, Map<string, string | undefined>> = {};
  const ds = ['--daemonset', 'monitoring/agent', '--state-dir'];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetscope-migrate-'));
    sim = await startSimulator({
      clusters: [
        { name: 'old', nodes: 4, seed: 71, vpaCrd: true, daemonSets: [agentDaemonSet()] },
        // Where the history goes: no metrics yet, so no node has history of its own.
        {
          name: 'new',
          nodes: 4,
          seed: 72,
          vpaCrd: true,
          metricsApi: 'absent',
          daemonSets: [agentDaemonSet()],
        },
        // The same, for checkpoints named as before AEP-10031's hashes (untainted below: every group runs).
        {
          name: 'legacy',
          nodes: 4,
          seed: 73,
          vpaCrd: true,
          metricsApi: 'absent',
          daemonSets: [agentDaemonSet()],
        },
      ],
      now: START,
    });
    const kubeconfig = join(dir, 'kubeconfig.yaml');
    await sim.writeKubeconfig(kubeconfig);
    const runtime = await startLocalRuntime({ stateDir: dir });
    const store = new DynamoNodeScopeStore(runtime.db, runtime.table);
    try {
      for (const name of ['old', 'new', 'legacy']) {
        const cluster = sim.cluster(name).store;
        if (name === 'legacy')
          for (const n of cluster.list('nodes')) {
            const { taints: _t, ...spec } = (n.spec ?? {}) as Record<string, unknown>;
            cluster.put('nodes', { ...n, spec });
          }
        const v = vpaObject({ mode: 'Recreate' }) as { spec: Record<string, unknown> };
        v.spec.recommenders = [{ name: 'fleetscope' }];
        cluster.put(VPA_RESOURCE, v);
        pools[name] = labelPools(cluster);
        await registerFileCluster(runtime, name, kubeconfig, new Date(START));
      }
      // Upstream's updater runs beside fleetscope in the old cluster.
      sim.cluster('old').store.put('deployments', {
        metadata: { name: 'vpa-updater', namespace: 'kube-system' },
        spec: {
          selector: { matchLabels: { app: 'u' } },
          template: {
            metadata: { labels: { app: 'u' } },
            spec: { containers: [{ name: 'u', image: 'registry.k8s.io/autoscaling/vpa-updater:1.8.0' }] },
          },
        },
      });
      for (let i = 0; i < 6; i++) {
        sim.clock.advance(15 * MINUTE);
        const at = new Date(sim.clock.now()).toISOString();
        for (const cluster of ['old', 'new', 'legacy']) {
          const client = ClusterClient.fromKubeconfig(sim.kubeconfig(), { cluster, context: cluster });
          try {
            await runCycle({ cluster, cycleId: at, cycleKey: at, client, store, now: () => sim.clock.now() });
          } finally {
            await client.close();
          }
        }
      }
    } finally {
      await runtime.stop();
    }
  }, 120_000);
  afterAll(async () => {
    await resetClusterConnector();
    await sim?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** `recommendations import-checkpoints --scope POOL` of `file` into the new cluster. */
  const importGroups = (file: string, cluster = 'new') =>
    run([
      'recommendations',
      'import-checkpoints',
      '--cluster',
      cluster,
      ...ds,
      dir,
      '--scope',
      POOL,
      '--file',
      file,
    ]);
  const exportOf = async (cluster: string, extra: string[] = []): Promise<Checkpoint[]> => {
    const r = await run(['recommendations', 'checkpoints', '--cluster', cluster, ...ds, dir, ...extra]);
    expect(r.err).toBe('');
    return JSON.parse(r.out).items;
  };

  it('back to upstream: one checkpoint per label group and container, the merge of its nodes', async () => {
    const perNode = await exportOf('old');
    const groups = await exportOf('old', ['--scope', POOL]);
    const values = (cs: Checkpoint[]) => cs.map((c) => c.spec.scopeValue ?? '(none)');
    expect(values(groups).sort()).toEqual(
      ['(none)', '(none)', '__absent__', '__absent__', '__empty__', '__empty__', 'gpu', 'gpu'].sort(),
    );
    // Upstream's names: `<vpa>-<container>-<FNV-1a 32 of the value, hex>`, unscoped `<vpa>-<container>`.
    for (const c of groups)
      expect(c.metadata.name).toBe(
        c.spec.scopeValue === undefined
          ? `agent-${c.spec.containerName}`
          : `agent-${c.spec.containerName}-${fnv32a(c.spec.scopeValue).toString(16)}`,
      );
    // Each group's samples are those of its nodes together, as upstream's recommender would have them.
    const samples = (cs: Checkpoint[], container: string) =>
      cs.filter((c) => c.spec.containerName === container).map((c) => c.status.totalSamplesCount ?? 0);
    const old = pools.old as Map<string, string | undefined>;
    for (const [value, pool] of [
      ['gpu', 'gpu'],
      ['__empty__', ''],
      ['__absent__', undefined],
    ] as const)
      for (const container of ['collector', 'shipper']) {
        const members = perNode.filter(
          (c) => old.has(c.spec.scopeValue ?? '') && old.get(c.spec.scopeValue ?? '') === pool,
        );
        const group = groups.filter((c) => c.spec.scopeValue === value);
        expect(samples(group, container)).toEqual([samples(members, container).reduce((a, b) => a + b, 0)]);
        expect(samples(group, container)[0]).toBeGreaterThan(0);
      }
  });

  it("forward from upstream: each group's history shared among the new cluster's nodes of that group", async () => {
    const groups = (await exportOf('old', ['--scope', POOL])).filter((c) => c.spec.scopeValue !== undefined);
    const file = join(dir, 'groups.json');
    await writeFile(file, JSON.stringify({ kind: 'List', items: groups }));
    const imported = await importGroups(file);
    expect(imported.err).toBe('');
    expect(imported.out).toBe('new monitoring/agent: 6 checkpoint(s) imported, 0 skipped');
    const get = async () =>
      JSON.parse(
        (await run(['recommendations', 'get', '--cluster', 'new', ...ds, dir, '--live', '-o', 'json'])).out,
      );
    const recs = await get();
    const target = (node: string) => JSON.stringify(recs.nodes[node]?.containers);
    const fresh = pools.new as Map<string, string | undefined>;
    const byPool = (pool: string | undefined) => [...fresh].filter(([, p]) => p === pool).map(([n]) => n);
    const [g1, g2] = byPool('gpu');
    // Nodes of one group start alike, from the group's history (a share of it each), not the fallback.
    expect(target(g1 as string)).toBe(target(g2 as string));
    for (const node of fresh.keys()) expect(recs.nodes[node]?.source).toBe('node');
    expect(target(byPool('')[0] as string)).not.toBe(target(g1 as string));

    // Merged again by group, the new cluster's history is what was imported (up to a sample of rounding).
    const back = await exportOf('new', ['--scope', POOL]);
    for (const c of groups) {
      const twin = back.find((b) => b.metadata.name === c.metadata.name);
      expect(
        Math.abs((twin?.status.totalSamplesCount ?? 0) - (c.status.totalSamplesCount ?? 0)),
      ).toBeLessThanOrEqual(1);
    }

    // A second import changes nothing: every node now has history of its own, which wins.
    const again = await importGroups(file);
    expect(again.out.split('\n')[0]).toBe('new monitoring/agent: 0 checkpoint(s) imported, 6 skipped');
    expect(again.out).toContain('every node of the group');
  });

  it('the old names still import: `<vpa>-<container>-<value>`, an empty value as "", then exported in the new', async () => {
    const groups = (await exportOf('old', ['--scope', POOL])).filter((c) => c.spec.scopeValue !== undefined);
    // As written before AEP-10031's hashed names and `__empty__`: the value in the name, "" for empty.
    const old = groups.map((c) => {
      const value = c.spec.scopeValue === '__empty__' ? '' : (c.spec.scopeValue as string);
      return {
        ...c,
        metadata: { ...c.metadata, name: `agent-${c.spec.containerName}-${value}` },
        spec: { ...c.spec, scopeValue: value },
      };
    });
    expect(old.map((c) => c.spec.scopeValue).sort()).toEqual([
      '',
      '',
      '__absent__',
      '__absent__',
      'gpu',
      'gpu',
    ]);
    const file = join(dir, 'legacy.json');
    await writeFile(file, JSON.stringify({ kind: 'List', items: old }));
    const imported = await importGroups(file, 'legacy');
    expect(imported.err).toBe('');
    expect(imported.out).toBe('legacy monitoring/agent: 6 checkpoint(s) imported, 0 skipped');
    // Exported again, in upstream's current naming: the same groups, each under its hashed name.
    const back = await exportOf('legacy', ['--scope', POOL]);
    for (const c of groups) {
      const twin = back.find((b) => b.metadata.name === c.metadata.name);
      expect(twin?.spec.scopeValue, c.metadata.name).toBe(c.spec.scopeValue);
      expect(
        Math.abs((twin?.status.totalSamplesCount ?? 0) - (c.status.totalSamplesCount ?? 0)),
      ).toBeLessThanOrEqual(1);
    }
  });

  it('bad input: a group no node of the DaemonSet has is skipped with the reason', async () => {
    const [one] = (await exportOf('old', ['--scope', POOL])).filter((c) => c.spec.scopeValue === 'gpu');
    const file = join(dir, 'tpu.json');
    await writeFile(file, JSON.stringify([{ ...one, spec: { ...one?.spec, scopeValue: 'tpu' } }]));
    const r = await importGroups(file);
    expect(r.out.split('\n')).toEqual([
      'new monitoring/agent: 0 checkpoint(s) imported, 1 skipped',
      `  skipped ${one?.metadata.name}: no node the DaemonSet can run on has ${POOL}=tpu`,
    ]);
  });

  it("get and list show what upstream's components would do to the VPA", async () => {
    const get = await run(['recommendations', 'get', '--cluster', 'old', ...ds, dir]);
    expect(get.out).toMatch(
      /^warning: upstream's updater \(kube-system\/vpa-updater\) evicts pods in updateMode Recreate/m,
    );
    const json = JSON.parse(
      (await run(['recommendations', 'get', '--cluster', 'old', ...ds, dir, '-o', 'json'])).out,
    );
    expect(json.warnings).toEqual([expect.stringContaining("upstream's updater")]);
    const list = await run(['recommendations', 'list', '--state-dir', dir]);
    expect(list.out).toMatch(/^warning: old VPA monitoring\/agent: upstream's updater/m);
    const listed = JSON.parse((await run(['recommendations', 'list', '--state-dir', dir, '-o', 'json'])).out);
    expect(
      listed.map((h: { cluster: string; warnings: string[] }) => [h.cluster, h.warnings.length]),
    ).toEqual([
      ['legacy', 0],
      ['new', 0],
      ['old', 1],
    ]);
  });
});

/** Labels the cluster's nodes: two `gpu`, one with an empty value, one without the label. */
function labelPools(store: ReturnType<Awaited<ReturnType<typeof startSimulator>>['cluster']>['store']) {
  const out = new Map<string, string | undefined>();
  const values = ['gpu', 'gpu', '', undefined];
  store
    .list('nodes')
    .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1))
    .forEach((n, i) => {
      const value = values[i];
      out.set(n.metadata.name, value);
      if (value !== undefined)
        store.put('nodes', {
          ...n,
          metadata: { ...n.metadata, labels: { ...n.metadata.labels, [POOL]: value } },
        });
    });
  return out;
}
