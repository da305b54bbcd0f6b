/**
 * A cluster belongs to one control plane (issue 18): two control planes with their own state (two state
 * directories, as two stacks would have two tables) on one simulated cluster. The cluster's owner lease
 * refuses the second, `cluster adopt --force` moves the cluster to it with its identity (issue 34,
 * defect 6: its ID, ClusterSet membership and custom claims as they are), and from then on the first
 * one leaves the cluster alone, says why, and gives up its membership record of it: no claim flips back
 * and forth between them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import { OWNER_LEASE, ownerLeaseObject } from '../../shared/fleet/ownership.js';
import { runFleetscope } from '../support/cli.js';

let sim: Simulator;
let dir: string;
let kubeconfig: string;

const as =
  (plane: 'a' | 'b' | 'c') =>
  (...args: string[]) =>
    runFleetscope(args, { stateDir: join(dir, plane) });
const a = as('a');
const b = as('b');
const c = as('c');
/** `cluster adopt` of c1 by force, from whichever control plane runs it. */
const adoptC1 = () => [
  'cluster',
  'adopt',
  '--name',
  'c1',
  '--force',
  '--kubeconfig',
  kubeconfig,
  '--context',
  'c1',
];
const holder = () =>
  sim.cluster('c1').store.get('leases.coordination.k8s.io', OWNER_LEASE.name, OWNER_LEASE.namespace)?.spec
    ?.holderIdentity;
const clusterSetClaim = () =>
  sim
    .cluster('c1')
    .store.list('clusterproperties.about.k8s.io')
    .find((p: { metadata: { name: string } }) => p.metadata.name === 'clusterset.k8s.io')?.spec?.value ??
  null;

/** The ClusterProperty objects: name -> value@resourceVersion (a rewrite shows as a new version). */
const properties = () =>
  Object.fromEntries(
    sim
      .cluster('c1')
      .store.list('clusterproperties.about.k8s.io')
      .map((p: { metadata: { name: string; resourceVersion: string }; spec: { value: string } }) => [
        p.metadata.name,
        `${p.spec.value}@${p.metadata.resourceVersion}`,
      ]),
  );

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fleetscope-owners-'));
  sim = await startSimulator({ clusters: [{ name: 'c1', nodes: 1 }] });
  kubeconfig = join(dir, 'kubeconfig.yaml');
  await sim.writeKubeconfig(kubeconfig);
});
afterAll(async () => {
  await sim?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('two control planes on one cluster', () => {
  it('refuses the second, moves ownership on adopt --force, and the first stops writing', async () => {
    const register = ['cluster', 'register', '--name', 'c1', '--kubeconfig', kubeconfig, '--context', 'c1'];
    const first = `local:${join(dir, 'a')}`;
    const second = `local:${join(dir, 'b')}`;

    expect((await a(...register)).code).toBe(0);
    expect(holder()).toBe(first);
    expect((await a('clusterset', 'join', '--cluster', 'c1', '--set', 'blue')).code).toBe(0);
    expect(
      (await a('claims', 'set', '--cluster', 'c1', '--name', 'zone.example.com', '--value', 'eu-1')).code,
    ).toBe(0);
    expect(clusterSetClaim()).toBe('blue');
    const carried = properties();
    const uid = sim.cluster('c1').kubeSystemUid;
    expect(carried).toMatchObject({
      'id.k8s.io': expect.stringMatching(new RegExp(`^${uid}@`)),
      'clusterset.k8s.io': expect.stringMatching(/^blue@/),
      'zone.example.com': expect.stringMatching(/^eu-1@/),
    });

    const refused = await b(...register);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(`is owned by control plane "${first}"`);
    expect(refused.err).toContain('cluster adopt --name c1 --force');
    expect(holder()).toBe(first);
    expect(clusterSetClaim()).toBe('blue'); // the refused one wrote nothing

    const adopted = await b(...adoptC1());
    expect(adopted.code, adopted.err).toBe(0);
    // The cluster kept its identity: the same objects, never rewritten (resourceVersions unchanged).
    expect(properties()).toEqual(carried);
    expect([adopted.code, adopted.out]).toEqual([
      0,
      `cluster c1: taken over from control plane "${first}" by ${second} with ID ${uid} in ClusterSet blue (registered here)`,
    ]);
    expect(holder()).toBe(second);
    expect((await b('clusterset', 'list', '-o', 'json')).out).toContain('"c1"');
    const bClaims = JSON.parse((await b('claims', 'get', '--cluster', 'c1', '-o', 'json')).out);
    expect(bClaims).toMatchObject({ clusterId: uid, clusterSet: 'blue' });
    const owned = clusterSetClaim();

    // From now on each pass of either leaves the claim as the owner wrote it; the old owner says why.
    const seen: (string | null)[] = [];
    for (const plane of [a, b, a, b]) {
      const r = await plane('run', '--once', '--cluster', 'c1');
      seen.push(clusterSetClaim());
      if (plane === a) {
        expect(r.out).toMatch(
          new RegExp(`c1\\s+cycle\\s+.*skipped: cluster "c1" is owned by control plane "${second}"`),
        );
        expect(r.out).toMatch(/c1\s+claims\s+.*skipped: cluster "c1" is owned by control plane/);
        expect(r.out).toMatch(/c1\s+balloons\s+.*skipped: cluster "c1" is owned by control plane/);
      }
    }
    expect(seen).toEqual([owned, owned, owned, owned]);
    expect(properties()).toEqual(carried);
    expect(holder()).toBe(second);
    // The old control plane learnt it: its registration names the owner, and it no longer lists the
    // cluster as a ClusterSet member nor holds its uniqueness guard (b's join of another cluster as
    // this ID would be refused by b's guard alone).
    expect((await a('cluster', 'list')).out).toMatch(
      new RegExp(`c1 .*${second.replace(/[/.]/g, '.')} \\(lease\\)`),
    );
    expect((await a('clusterset', 'list', '-o', 'json')).out).not.toContain('"c1"');
    expect(
      JSON.parse((await a('claims', 'get', '--cluster', 'c1', '-o', 'json')).out).clusterSet,
    ).toBeUndefined();
  }, 300_000);

  it('an adoption killed after taking the lease, run again: not "taken over from no control plane"', async () => {
    const third = `local:${join(dir, 'c')}`;
    const uid = sim.cluster('c1').kubeSystemUid;
    // `cluster adopt --force` from a third control plane killed right after its lease write (the
    // soak's kill before the UID guard): the lease is its own, nothing else is written yet.
    const store = sim.cluster('c1').store;
    const lease = store.get('leases.coordination.k8s.io', OWNER_LEASE.name, OWNER_LEASE.namespace);
    store.put('leases.coordination.k8s.io', {
      ...lease,
      spec: ownerLeaseObject(third, Date.now()).spec,
    });
    expect(holder()).toBe(third);
    const resumed = await c(...adoptC1());
    expect(resumed.code, resumed.err).toBe(0);
    expect(resumed.out).toBe(
      `cluster c1: taken over by ${third} with ID ${uid} in ClusterSet blue (registered here); ` +
        "the owner lease was already this control plane's (an adoption resumed or repeated)",
    );
    expect(holder()).toBe(third);
  }, 120_000);

  it("the old owner deregistering the adopted cluster before its claims pass leaves the new owner's membership claim", async () => {
    // b owned c1 until c adopted it just above, and has had no claims pass since: its records still
    // say c1 is a member of blue. Its deregistration must not touch the cluster, which is c's.
    expect(clusterSetClaim()).toBe('blue');
    const r = await b('cluster', 'deregister', '--name', 'c1');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain('left the cluster as it is');
    expect(clusterSetClaim()).toBe('blue');
  }, 120_000);
});
