/**
 * Cluster identity end to end over real HTTP: dynalite and the bus of the local runtime running the real
 * handlers, and simulated Kubernetes API servers over HTTPS. What is in a cluster is always read back
 * through its API (ClusterProperty objects), with a client of the test's own.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterClaimCrd } from '../../local/sim/index.js';
import { API_APPROVED_ANNOTATION, CLUSTER_PROPERTY, MANAGED_BY_LABEL } from '../../shared/claims/crd.js';
import {
  joinClusterSet,
  leaveClusterSet,
  moveClusterSet,
  setClusterId,
  setCustomClaim,
} from '../../shared/claims/membership.js';
import { OCM_MAX_VALUE_CHARS } from '../../shared/claims/rules.js';
import { claimStoreOf } from '../../shared/claims/store-dynamo.js';
import { claimsSummaryLines, identityColumns, joinDemoClusterSets } from '../../shared/claims/summary.js';
import { deregisterCluster } from '../../shared/fleet/register.js';
import type { Detail } from '../../shared/platform/events.js';
import { busEvents, type Fleet, startFleet } from './helpers.js';

const GRACE_ENV = 'FLEETSCOPE_CLAIMS_RECONCILE_GRACE_SECONDS';
type ClaimsChanged = Detail<'ClusterClaimsChanged'>;

let fleet: Fleet;

beforeAll(async () => {
  fleet = await startFleet([
    { name: 'alpha', nodes: 1 },
    { name: 'beta', nodes: 1, seed: 2 },
    { name: 'gamma', nodes: 1, seed: 3 },
    { name: 'ocm', nodes: 1, seed: 4 },
    { name: 'nocrd', nodes: 1, seed: 5 },
    { name: 'leaving', nodes: 1, seed: 6 },
  ]);
  for (const name of ['alpha', 'beta', 'gamma']) await fleet.register(name);
});
afterAll(async () => {
  delete process.env[GRACE_ENV];
  await fleet?.stop();
});

describe('registration', () => {
  it('writes id.k8s.io = the kube-system UID into DynamoDB and into the cluster (both ID names)', async () => {
    const uid = fleet.sim.cluster('alpha').kubeSystemUid;
    // The UID as the cluster's own API reports it.
    const ns = await fleet.client('alpha').core.readNamespace({ name: 'kube-system' });
    expect(ns.metadata?.uid).toBe(uid);

    const identity = await fleet.store.getIdentity('alpha');
    expect(identity).toMatchObject({ clusterId: uid, idSource: 'kube-system-uid', kubeSystemUid: uid });
    expect(await fleet.properties('alpha')).toEqual({ 'id.k8s.io': uid, 'cluster.clusterset.k8s.io': uid });
    expect(await fleet.properties('alpha', 'v1alpha1')).toEqual({
      'id.k8s.io': uid,
      'cluster.clusterset.k8s.io': uid,
    });
    expect((await fleet.store.getSyncStatus('alpha'))?.state).toBe('in-sync');

    const changed = busEvents<ClaimsChanged>(fleet.runtime, 'ClusterClaimsChanged').find(
      (e) => e.cluster === 'alpha' && e.reason === 'registration',
    );
    expect(changed?.changes[0]).toMatchObject({ claim: 'id.k8s.io', old: null, new: { value: uid } });
    expect(fleet.runtime.invoker.deadLetters).toEqual([]);
    // Both workers of ClusterRegistered ran (inventory and claims each keep their own idempotency record).
    expect(await fleet.registry.getStatus('alpha')).toMatchObject({ reachable: true, kubeSystemUid: uid });
  });

  it('created the ClusterProperty CRD with the api-approved annotation, and labels what it owns', async () => {
    const crd = await fleet
      .client('alpha')
      .apiextensions.readCustomResourceDefinition({ name: CLUSTER_PROPERTY.crdName });
    expect(crd.metadata?.annotations?.[API_APPROVED_ANNOTATION]).toMatch(
      /^https:\/\/github.com\/kubernetes\/enhancements/,
    );
    expect(crd.spec.versions.map((v) => v.name).sort()).toEqual(['v1alpha1', 'v1beta1']);
    const obj = (await fleet.client('alpha').custom.getClusterCustomObject({
      group: 'about.k8s.io',
      version: 'v1beta1',
      plural: 'clusterproperties',
      name: 'id.k8s.io',
    })) as { metadata: { labels: Record<string, string> } };
    expect(obj.metadata.labels[MANAGED_BY_LABEL]).toBe('fleetscope');
  });
});

describe('ClusterSet membership in the cluster', () => {
  it('join adds clusterset.k8s.io; leave removes it at once', async () => {
    await joinClusterSet(fleet.ports, 'alpha', 'blue');
    await fleet.runtime.bus.drain();
    expect((await fleet.properties('alpha'))['clusterset.k8s.io']).toBe('blue');
    expect(busEvents(fleet.runtime, 'ClusterSetMembershipChanged')).toContainEqual(
      expect.objectContaining({ cluster: 'alpha', change: 'join', to: 'blue' }),
    );

    await leaveClusterSet(fleet.ports, 'alpha');
    await fleet.runtime.bus.drain();
    const props = await fleet.properties('alpha');
    expect(props['clusterset.k8s.io']).toBeUndefined();
    expect(props['id.k8s.io']).toBe(fleet.sim.cluster('alpha').kubeSystemUid);
  });

  it('leave removes clusterset.k8s.io within one cycle even when its event is lost', async () => {
    await joinClusterSet(fleet.ports, 'beta', 'blue');
    await fleet.runtime.bus.drain();
    expect((await fleet.properties('beta'))['clusterset.k8s.io']).toBe('blue');
    const lost = {
      ...fleet.ports,
      publisher: {
        publish: async () => {
          throw new Error('bus down');
        },
      },
      warn: () => {},
    };
    await leaveClusterSet(lost, 'beta');
    expect((await fleet.properties('beta'))['clusterset.k8s.io']).toBe('blue'); // not yet applied
    await fleet.runtime.scheduler.runOnce();
    expect((await fleet.properties('beta'))['clusterset.k8s.io']).toBeUndefined();
  });

  it('move changes the clusterset claim in place: never absent, never two', async () => {
    await joinClusterSet(fleet.ports, 'gamma', 'blue');
    await fleet.runtime.bus.drain();
    fleet.sim.cluster('gamma').resetStats();
    await moveClusterSet(fleet.ports, 'gamma', 'green');
    await fleet.runtime.bus.drain();
    // Never absent: the claim was patched in place, never deleted and re-created.
    expect(fleet.sim.cluster('gamma').stats().byMethodAndKind['DELETE customresources']).toBeUndefined();
    expect(fleet.sim.cluster('gamma').stats().byMethodAndKind['PATCH customresources']).toBeGreaterThan(0);
    const props = await fleet.properties('gamma');
    expect(props['clusterset.k8s.io']).toBe('green');
    expect(Object.keys(props).filter((k) => k.startsWith('clusterset'))).toEqual(['clusterset.k8s.io']);
    await leaveClusterSet(fleet.ports, 'gamma');
    await fleet.runtime.bus.drain();
  });

  it('a change of ID during membership is refused and nothing is written, in DynamoDB or in the cluster', async () => {
    await joinClusterSet(fleet.ports, 'alpha', 'refusal');
    await fleet.runtime.bus.drain();
    const identity = await fleet.store.getIdentity('alpha');
    const props = await fleet.properties('alpha');
    const published = fleet.runtime.bus.log.length;
    await expect(setClusterId(fleet.ports, 'alpha', 'alpha-renamed')).rejects.toThrow(
      /member of ClusterSet "refusal": id.k8s.io must not change during a membership/,
    );
    await fleet.runtime.bus.drain();
    expect(await fleet.store.getIdentity('alpha')).toEqual(identity);
    expect(await fleet.properties('alpha')).toEqual(props);
    expect(fleet.runtime.bus.log.length).toBe(published);
    await leaveClusterSet(fleet.ports, 'alpha');
    await fleet.runtime.bus.drain();
  });

  it('an operator ID (outside a membership) reaches the cluster under both names', async () => {
    await setClusterId(fleet.ports, 'gamma', 'gamma-eu-1');
    await fleet.runtime.bus.drain();
    const props = await fleet.properties('gamma');
    expect(props['id.k8s.io']).toBe('gamma-eu-1');
    expect(props['cluster.clusterset.k8s.io']).toBe('gamma-eu-1');
  });
});

describe('repairs', () => {
  it('a crash between the two writes of a join is repaired by the reconciler, and the claim reaches the cluster', async () => {
    const crashing = {
      ...fleet.ports,
      step: (s: string) => {
        if (s === 'join:after-guard') throw new Error('crash injected between guard and membership');
      },
    };
    const uid = fleet.sim.cluster('beta').kubeSystemUid;
    await expect(joinClusterSet(crashing, 'beta', 'crashset')).rejects.toThrow(/crash injected/);
    await fleet.runtime.bus.drain();
    expect((await fleet.store.getGuard('crashset', uid))?.cluster).toBe('beta');
    expect((await fleet.store.getIdentity('beta'))?.clusterSet).toBeUndefined();
    expect((await fleet.properties('beta'))['clusterset.k8s.io']).toBeUndefined();

    process.env[GRACE_ENV] = '0';
    try {
      await fleet.runtime.scheduler.runOnce(); // claims-reconcile, then the drift check
    } finally {
      delete process.env[GRACE_ENV];
    }
    const identity = await fleet.store.getIdentity('beta');
    expect(identity?.clusterSet).toBe('crashset');
    expect(identity?.pending).toBeUndefined();
    expect((await fleet.properties('beta'))['clusterset.k8s.io']).toBe('crashset');
    expect(busEvents(fleet.runtime, 'ClusterSetMembershipChanged')).toContainEqual(
      expect.objectContaining({ cluster: 'beta', change: 'join', to: 'crashset', reason: 'reconcile' }),
    );
    await leaveClusterSet(fleet.ports, 'beta');
    await fleet.runtime.bus.drain();
  });

  it('drift: a deleted and an edited in-cluster claim are restored on the next check, with an event', async () => {
    const uid = fleet.sim.cluster('alpha').kubeSystemUid;
    await setCustomClaim(fleet.ports, 'alpha', 'zone.example.com', 'eu-1a');
    await fleet.runtime.bus.drain();
    const c = fleet.client('alpha');
    const ref = { group: 'about.k8s.io', version: 'v1beta1', plural: 'clusterproperties' };
    await c.custom.deleteClusterCustomObject({ ...ref, name: 'id.k8s.io' });
    await c.patch('edit', 'merge', (o) =>
      c.custom.patchClusterCustomObject(
        { ...ref, name: 'zone.example.com', body: { spec: { value: 'tampered' } } },
        o,
      ),
    );
    // Someone else's clusterset claim on a cluster that is not a member must go too.
    await c.custom.createClusterCustomObject({
      ...ref,
      body: {
        apiVersion: 'about.k8s.io/v1beta1',
        kind: 'ClusterProperty',
        metadata: { name: 'clusterset.k8s.io' },
        spec: { value: 'rogue' },
      },
    });
    expect((await fleet.properties('alpha'))['id.k8s.io']).toBeUndefined();

    await fleet.runtime.scheduler.runOnce();
    const props = await fleet.properties('alpha');
    expect(props['id.k8s.io']).toBe(uid);
    expect(props['zone.example.com']).toBe('eu-1a');
    expect(props['clusterset.k8s.io']).toBeUndefined();
    expect((await fleet.store.getSyncStatus('alpha'))?.state).toBe('repaired');

    const drift = busEvents<ClaimsChanged>(fleet.runtime, 'ClusterClaimsChanged').filter(
      (e) => e.cluster === 'alpha' && e.origin === 'cluster',
    );
    expect(drift).toHaveLength(1);
    expect(drift[0]).toMatchObject({ reason: 'drift', clusterId: uid });
    expect(drift[0]!.changes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          claim: 'id.k8s.io',
          object: 'ClusterProperty',
          old: null,
          new: expect.objectContaining({ value: uid }),
        }),
        expect.objectContaining({
          claim: 'zone.example.com',
          old: expect.objectContaining({ value: 'tampered' }),
          new: expect.objectContaining({ value: 'eu-1a' }),
        }),
        expect.objectContaining({
          claim: 'clusterset.k8s.io',
          old: expect.objectContaining({ value: 'rogue' }),
          new: null,
        }),
      ]),
    );
    // The next check finds nothing to do.
    await fleet.runtime.scheduler.runOnce();
    expect((await fleet.store.getSyncStatus('alpha'))?.state).toBe('in-sync');
  });

  it('an unreachable cluster is reported and retried; the others are checked all the same', async () => {
    await fleet.register('leaving');
    const fault = fleet.sim.faults.inject({ cluster: 'leaving', fault: { type: 'status', code: 503 } });
    try {
      await fleet.runtime.scheduler.runOnce();
      const s = await fleet.store.getSyncStatus('leaving');
      expect(s?.state).toBe('unreachable');
      expect(s?.error).toMatch(/leaving/);
      expect((await fleet.store.getSyncStatus('alpha'))?.state).toBe('in-sync');
      expect(fleet.runtime.invoker.deadLetters.filter((d) => d.functionId.startsWith('claims'))).toEqual([]);
    } finally {
      fleet.sim.faults.clear(fault);
    }
    await fleet.runtime.scheduler.runOnce();
    expect((await fleet.store.getSyncStatus('leaving'))?.state).toBe('in-sync');
  });
});

describe('options and the rest of the lifecycle', () => {
  it('mirrors claims to OCM ClusterClaims where OCM is installed, skipping values over 1024 characters', async () => {
    await fleet
      .client('ocm')
      .apiextensions.createCustomResourceDefinition({ body: clusterClaimCrd() as never });
    await fleet.register('ocm');
    const long = 'x'.repeat(OCM_MAX_VALUE_CHARS + 1);
    const r = await setCustomClaim(fleet.ports, 'ocm', 'long.example.com', long);
    expect(r.warnings[0]).toMatch(/OCM/);
    await fleet.runtime.bus.drain();
    const uid = fleet.sim.cluster('ocm').kubeSystemUid;
    const ocm = await fleet.ocmClaims('ocm');
    expect(ocm['id.k8s.io']).toBe(uid);
    expect(ocm['long.example.com']).toBeUndefined();
    expect((await fleet.properties('ocm'))['long.example.com']).toBe(long);
    const s = await fleet.store.getSyncStatus('ocm');
    expect(s?.ocm).toBe('mirrored');
    expect(s?.warnings?.join()).toMatch(/over OCM ClusterClaim's 1024/);
  });

  it('does not create the CRD when the operator does not allow it, and says so', async () => {
    await fleet.store.putSettings({ createCrd: false }, 'nocrd');
    await fleet.register('nocrd');
    const s = await fleet.store.getSyncStatus('nocrd');
    expect(s?.state).toBe('crd-missing');
    expect(s?.error).toMatch(/not installed and creating it is not allowed/);
    await expect(
      fleet.client('nocrd').apiextensions.readCustomResourceDefinition({ name: CLUSTER_PROPERTY.crdName }),
    ).rejects.toMatchObject({ code: 404 });
  });

  it('the newer ID name can be turned off: cluster.clusterset.k8s.io is then removed', async () => {
    await fleet.store.putSettings({ writeClusterIdName: false }, 'gamma');
    await fleet.runtime.scheduler.runOnce();
    const props = await fleet.properties('gamma');
    expect(props['cluster.clusterset.k8s.io']).toBeUndefined();
    expect(props['id.k8s.io']).toBe('gamma-eu-1');
    await fleet.store.putSettings({ writeClusterIdName: true }, 'gamma');
  });

  it('deregistration removes the clusterset claim from the cluster and frees the ID in the ClusterSet', async () => {
    await joinClusterSet(fleet.ports, 'leaving', 'blue');
    await fleet.runtime.bus.drain();
    expect((await fleet.properties('leaving'))['clusterset.k8s.io']).toBe('blue');
    await deregisterCluster('leaving', { store: fleet.registry, publisher: fleet.ports.publisher });
    await fleet.runtime.bus.drain();
    const props = await fleet.properties('leaving');
    expect(props['clusterset.k8s.io']).toBeUndefined();
    expect(props['id.k8s.io']).toBe(fleet.sim.cluster('leaving').kubeSystemUid); // the ID outlives fleetscope
    expect(await fleet.store.getIdentity('leaving')).toBeUndefined();
    expect(await fleet.store.getGuard('blue', fleet.sim.cluster('leaving').kubeSystemUid)).toBeUndefined();
  });

  it('the summary helpers show each cluster with its ID and ClusterSet', async () => {
    const lines = await joinDemoClusterSets(claimStoreOf(fleet.runtime), fleet.ports.publisher, [
      'alpha',
      'beta',
    ]);
    expect(lines).toEqual([
      expect.stringMatching(/^alpha joined ClusterSet blue/),
      expect.stringMatching(/^beta joined ClusterSet green/),
    ]);
    await fleet.runtime.bus.drain();
    expect(
      await joinDemoClusterSets(claimStoreOf(fleet.runtime), fleet.ports.publisher, ['alpha', 'beta']),
    ).toEqual([]);
    const summary = (await claimsSummaryLines(claimStoreOf(fleet.runtime))).join('\n');
    expect(summary).toMatch(new RegExp(`alpha\\s+${fleet.sim.cluster('alpha').kubeSystemUid}\\s+blue`));
    expect(summary).toMatch(/beta\s+\S+\s+green/);
    const cols = await identityColumns(claimStoreOf(fleet.runtime), ['alpha', 'nobody']);
    expect(cols).toEqual({
      alpha: { id: fleet.sim.cluster('alpha').kubeSystemUid, clusterSet: 'blue' },
      nobody: {},
    });
    expect((await fleet.properties('beta'))['clusterset.k8s.io']).toBe('green');
  });
});
