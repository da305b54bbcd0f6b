/**
 * The CLI end to end against the simulator, as an operator runs it: each command is its own
 * `fleetscope` process that starts the local runtime on a state directory, does its work, waits for the
 * handlers and stops. What reaches the cluster is read back through its API.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import { MAX_CLAIM_VALUE_BYTES } from '../../shared/claims/rules.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import { runFleetscope, runFleetscopeInProcess } from '../support/cli.js';

let sim: Simulator;
let dir: string;
let kubeconfig: string;

// The first test runs every command as its own process, as an operator does; the others run the same
// CLI in this process (the local runtime restores the environment on stop), which is much quicker.
let inProcess = false;
const run = (...args: string[]) =>
  (inProcess ? runFleetscopeInProcess : runFleetscope)(args, { stateDir: join(dir, 'state') });

async function properties(cluster: string): Promise<Record<string, string>> {
  const c = ClusterClient.fromKubeconfig(sim.kubeconfig(), { cluster, context: cluster });
  try {
    const items = await c.listAll<{ metadata: { name: string }; spec: { value: string } }>('list', (page) =>
      c.custom.listClusterCustomObject({
        group: 'about.k8s.io',
        version: 'v1beta1',
        plural: 'clusterproperties',
        ...page,
      }),
    );
    return Object.fromEntries(items.map((o) => [o.metadata.name, o.spec.value]));
  } finally {
    await c.close();
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fleetscope-cli-claims-'));
  sim = await startSimulator({
    clusters: [
      { name: 'cli-a', nodes: 1 },
      { name: 'cli-b', nodes: 1, seed: 2 },
    ],
  });
  kubeconfig = join(dir, 'kubeconfig.yaml');
  await sim.writeKubeconfig(kubeconfig);
});
afterAll(async () => {
  await sim?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('fleetscope clusterset and claims', () => {
  it('register, join: the cluster carries the claims; leave: the clusterset claim is gone', async () => {
    const uid = sim.cluster('cli-a').kubeSystemUid;
    expect(
      (await run('cluster', 'register', '--name', 'cli-a', '--kubeconfig', kubeconfig, '--context', 'cli-a'))
        .code,
    ).toBe(0);
    expect(await properties('cli-a')).toEqual({ 'id.k8s.io': uid, 'cluster.clusterset.k8s.io': uid });

    const joined = await run('clusterset', 'join', '--cluster', 'cli-a', '--set', 'blue');
    expect(joined.code, joined.err).toBe(0);
    expect(joined.out).toMatch(`cluster cli-a is now a member of ClusterSet blue (id.k8s.io ${uid})`);
    // One line, as every changing command prints (issue 18).
    expect(joined.out.split('\n')).toEqual([
      `cluster cli-a is now a member of ClusterSet blue (id.k8s.io ${uid}); in-cluster in-sync`,
    ]);
    expect(await properties('cli-a')).toEqual({
      'id.k8s.io': uid,
      'cluster.clusterset.k8s.io': uid,
      'clusterset.k8s.io': 'blue',
    });

    const got = await run('claims', 'get', '--cluster', 'cli-a', '--json');
    expect(JSON.parse(got.out)).toMatchObject({
      clusterId: uid,
      clusterSet: 'blue',
      claims: { 'clusterset.k8s.io': 'blue' },
    });
    expect((await run('clusterset', 'list')).out).toMatch(new RegExp(`blue\\s+cli-a\\s+${uid}`));

    const left = await run('clusterset', 'leave', '--cluster', 'cli-a');
    expect(left.code, left.err).toBe(0);
    expect(await properties('cli-a')).toEqual({ 'id.k8s.io': uid, 'cluster.clusterset.k8s.io': uid });
  });

  it('refuses what the rules forbid, with the rule named and exit code 2 (wrong on any fleet)', async () => {
    inProcess = true;
    const reserved = await run(
      'claims',
      'set',
      '--cluster',
      'cli-a',
      '--name',
      'team.k8s.io',
      '--value',
      'x',
    );
    expect(reserved.code).toBe(2);
    expect(reserved.err).toMatch(/reserved domain \*\.k8s\.io/);
    const bigFile = join(dir, 'big.txt');
    await writeFile(bigFile, 'a'.repeat(MAX_CLAIM_VALUE_BYTES + 1));
    const big = await run(
      'claims',
      'set',
      '--cluster',
      'cli-a',
      '--name',
      'big.example.com',
      '--value-file',
      bigFile,
    );
    expect(big.code).toBe(2);
    expect(big.err).toMatch(/131073 bytes; a claim value holds at most 131072 bytes/);
    expect(await properties('cli-a')).not.toHaveProperty('big.example.com');

    // Two clusters, one ID, one ClusterSet.
    expect(
      (await run('cluster', 'register', '--name', 'cli-b', '--kubeconfig', kubeconfig, '--context', 'cli-b'))
        .code,
    ).toBe(0);
    expect(
      (await run('claims', 'set', '--cluster', 'cli-a', '--name', 'id.k8s.io', '--value', 'shop-eu')).code,
    ).toBe(0);
    expect(
      (await run('claims', 'set', '--cluster', 'cli-b', '--name', 'id.k8s.io', '--value', 'shop-eu')).code,
    ).toBe(0);
    expect((await run('clusterset', 'join', '--cluster', 'cli-a', '--set', 'shop')).code).toBe(0);
    const clash = await run('clusterset', 'join', '--cluster', 'cli-b', '--set', 'shop');
    expect(clash.code).toBe(1);
    expect(clash.err).toMatch(/ID "shop-eu" is already held in ClusterSet "shop" by cluster "cli-a"/);
    const rename = await run(
      'claims',
      'set',
      '--cluster',
      'cli-a',
      '--name',
      'id.k8s.io',
      '--value',
      'other',
    );
    expect(rename.code).toBe(1);
    expect(rename.err).toMatch(/must not change during a membership/);
    expect((await properties('cli-a'))['id.k8s.io']).toBe('shop-eu');
  });

  it('claims check restores a deleted claim; dns gives the backend name', async () => {
    expect(
      (await run('claims', 'set', '--cluster', 'cli-a', '--name', 'zone.example.com', '--value', 'eu-1a'))
        .code,
    ).toBe(0);
    const c = ClusterClient.fromKubeconfig(sim.kubeconfig(), { cluster: 'cli-a', context: 'cli-a' });
    await c.custom.deleteClusterCustomObject({
      group: 'about.k8s.io',
      version: 'v1beta1',
      plural: 'clusterproperties',
      name: 'zone.example.com',
    });
    await c.close();
    const dry = await run('claims', 'check', '--cluster', 'cli-a', '--dry-run');
    expect(dry.out).toMatch(/would create zone.example.com = "eu-1a"/);
    expect(await properties('cli-a')).not.toHaveProperty('zone.example.com');
    const check = await run('claims', 'check', '--cluster', 'cli-a');
    expect(check.code, check.err).toBe(0);
    expect(check.out).toMatch(/cli-a: repaired/);
    expect(check.out).toMatch(/create zone.example.com = "eu-1a"/);
    expect((await properties('cli-a'))['zone.example.com']).toBe('eu-1a');
    // Nothing left to do: the dry run and the real check say so in the same words.
    expect((await run('claims', 'check', '--cluster', 'cli-a', '--dry-run')).out).toBe('cli-a: in-sync');
    expect((await run('claims', 'check', '--cluster', 'cli-a')).out).toBe('cli-a: in-sync');

    const web0 = (cluster: string) =>
      run(
        'claims',
        'dns',
        '--cluster',
        cluster,
        '--service',
        'web',
        '--namespace',
        'shop',
        '--hostname',
        'web-0',
      );
    const dns = await web0('cli-a');
    expect(dns.out).toBe('web-0.shop-eu.web.shop.svc.clusterset.local');
    // cli-b is in no ClusterSet (its join was refused): it has no clusterset.local name.
    const outside = await web0('cli-b');
    expect(outside.code).toBe(1);
    expect(outside.out).toBe('');
    expect(outside.err).toMatch(
      /cluster "cli-b" is not a member of any ClusterSet: its multi-cluster DNS names \(svc\.clusterset\.local\) exist only within a ClusterSet/,
    );
    const summary = await run('claims', 'get');
    expect(summary.out).toMatch(/cli-a\s+shop-eu\s+shop\s+zone.example.com\s+(in-sync|repaired)/);
  });
});
