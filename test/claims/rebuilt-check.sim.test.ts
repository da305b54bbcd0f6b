/**
 * A registered cluster rebuilt behind the same endpoint (kube-system recreated: a new UID) is held for
 * an operator's decision (issue 34, defect 5, KEP-2149): the drift check reads the kube-system UID from
 * the cluster, finds it is not the registered one, and writes nothing, check after check (no ID flipped,
 * no clusterset.k8s.io deleted and recreated); `claims accept-uid` (it is the same cluster) records the
 * new UID and keeps the ID and the membership. Judged here over the simulator, which can recreate
 * kube-system; the real server refuses that (NamespaceLifecycle), so test/cluster/rebuilt.real.test.ts
 * rebuilds a real one behind the same endpoint (a new etcd) instead.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ClusterClaimsApi } from '../../shared/claims/incluster.js';
import { joinClusterSet, setCustomClaim } from '../../shared/claims/membership.js';
import { acceptKubeSystemUid } from '../../shared/claims/rebuilt.js';
import { syncCluster } from '../../shared/claims/sync.js';
import { raw } from '../sim/helpers.js';
import { type Fleet, startFleet } from './helpers.js';

let fleet: Fleet;

beforeAll(async () => {
  fleet = await startFleet([{ name: 'rebuilt', nodes: 1 }]);
  await fleet.register('rebuilt');
});
afterAll(async () => {
  await fleet?.stop();
});

async function recreateKubeSystem(): Promise<string> {
  const c = fleet.sim.cluster('rebuilt');
  const deleted = await raw(c, 'DELETE', '/api/v1/namespaces/kube-system');
  expect(deleted.status, deleted.text).toBeLessThan(300);
  for (let i = 0; i < 50 && (await raw(c, 'GET', '/api/v1/namespaces/kube-system')).status === 200; i++)
    await new Promise((r) => setTimeout(r, 50));
  const made = await raw(c, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'kube-system' } } });
  expect(made.status, made.text).toBe(201);
  return (await raw(c, 'GET', '/api/v1/namespaces/kube-system')).json.metadata.uid as string;
}

const check = async () => {
  const registered = (await fleet.registry.get('rebuilt'))!;
  return syncCluster(
    { ...fleet.ports, connect: async () => new ClusterClaimsApi(fleet.client('rebuilt')) },
    registered,
  );
};

it('a rebuilt member is held for a decision, never flipped; accept-uid keeps its ID and membership', async () => {
  const oldUid = fleet.sim.cluster('rebuilt').kubeSystemUid;
  await joinClusterSet(fleet.ports, 'rebuilt', 'blue');
  await setCustomClaim(fleet.ports, 'rebuilt', 'zone.example.com', 'eu-1');
  await fleet.runtime.bus.drain();
  const before = await fleet.properties('rebuilt');
  expect(before).toMatchObject({ 'id.k8s.io': oldUid, 'clusterset.k8s.io': 'blue' });
  const blueUid = (
    await raw(
      fleet.sim.cluster('rebuilt'),
      'GET',
      '/apis/about.k8s.io/v1beta1/clusterproperties/clusterset.k8s.io',
    )
  ).json.metadata.uid;

  const newUid = await recreateKubeSystem();
  expect(newUid).not.toBe(oldUid);
  for (const _ of [1, 2, 3]) {
    const r = await check();
    expect(r.state).toBe('identity-changed');
    expect(r.ops).toEqual([]);
    expect(r.error).toContain(`kube-system UID is now ${newUid}, registered ${oldUid}`);
    expect(r.error).toContain('claims accept-uid --cluster rebuilt');
    expect(await fleet.properties('rebuilt')).toEqual(before);
  }
  expect((await fleet.store.getSyncStatus('rebuilt'))?.state).toBe('identity-changed');
  // The clusterset claim is the same object throughout: never deleted and recreated.
  const same = await raw(
    fleet.sim.cluster('rebuilt'),
    'GET',
    '/apis/about.k8s.io/v1beta1/clusterproperties/clusterset.k8s.io',
  );
  expect(same.json.metadata.uid).toBe(blueUid);

  // The operator's decision: it is the same cluster. The ID and the membership stay; checks resume.
  const accepted = await acceptKubeSystemUid(fleet.ports, 'rebuilt', newUid);
  expect(accepted).toMatchObject({ clusterId: oldUid, kubeSystemUid: newUid, clusterSet: 'blue' });
  expect((await fleet.registry.get('rebuilt'))?.kubeSystemUid).toBe(newUid);
  expect(await fleet.registry.uidHolder(newUid)).toBe('rebuilt');
  const after = await check();
  expect([after.state, after.ops]).toEqual(['in-sync', []]);
  expect(await fleet.properties('rebuilt')).toEqual(before);
});
