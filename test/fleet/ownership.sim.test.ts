/**
 * A cluster belongs to one control plane (issue 18): two control planes with their own state (two state
 * directories, as two stacks would have two tables) on one simulated cluster. The cluster's owner lease
 * refuses the second, `cluster adopt --force` moves the cluster to it, and from then on the first one
 * leaves the cluster alone and says why: no claim flips back and forth between them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import { OWNER_LEASE } from '../../shared/fleet/ownership.js';
import { runFleetscope } from '../support/cli.js';

let sim: Simulator;
let dir: string;
let kubeconfig: string;

const as =
  (plane: 'a' | 'b') =>
  (...args: string[]) =>
    runFleetscope(args, { stateDir: join(dir, plane) });
const a = as('a');
const b = as('b');
const holder = () =>
  sim.cluster('c1').store.get('leases.coordination.k8s.io', OWNER_LEASE.name, OWNER_LEASE.namespace)?.spec
    ?.holderIdentity;
const clusterSetClaim = () =>
  sim
    .cluster('c1')
    .store.list('clusterproperties.about.k8s.io')
    .find((p: { metadata: { name: string } }) => p.metadata.name === 'clusterset.k8s.io')?.spec?.value ??
  null;

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
    expect(clusterSetClaim()).toBe('blue');

    const refused = await b(...register);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain(`is owned by control plane "${first}"`);
    expect(refused.err).toContain('cluster adopt --name c1 --force');
    expect(holder()).toBe(first);
    expect(clusterSetClaim()).toBe('blue'); // the refused one wrote nothing

    const adopted = await b(
      'cluster',
      'adopt',
      '--name',
      'c1',
      '--force',
      '--kubeconfig',
      kubeconfig,
      '--context',
      'c1',
    );
    expect([adopted.code, adopted.out]).toEqual([
      0,
      `cluster c1: taken over from control plane "${first}" by ${second} (registered here)`,
    ]);
    expect(holder()).toBe(second);
    // The new owner wrote its own view of the claims (it knows no ClusterSet for c1).
    const owned = clusterSetClaim();
    expect(owned).toBeNull(); // so the old owner putting "blue" back would show below

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
    expect(holder()).toBe(second);
  }, 300_000);
});
