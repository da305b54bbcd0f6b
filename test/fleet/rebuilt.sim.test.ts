/**
 * A cluster rebuilt behind the same endpoint keeps one identity (issue 34, defect 5, KEP-2149): with
 * kube-system recreated (a new UID) the cluster still carries the id.k8s.io of its registration, and a
 * second registration of it under another name is refused, naming both and what to decide, instead of
 * two registrations writing two IDs into it in turn.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.js';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import { clusterPropertyCrd } from '../../shared/claims/crd.js';
import { ensureIdentity, setClusterId } from '../../shared/claims/membership.js';
import { DynamoClaimStore } from '../../shared/claims/store-dynamo.js';
import { clusterAccess, resetClusterConnector } from '../../shared/fleet/cluster-access.js';
import { deregisterCluster, registerCluster } from '../../shared/fleet/register.js';
import { DynamoRegistry } from '../../shared/fleet/registry-dynamo.js';
import { deps } from '../../shared/platform/deps.js';
import { raw } from '../sim/helpers.js';

let sim: Simulator;
let runtime: LocalRuntime;
let dir: string;
let kubeconfig: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fleetscope-rebuilt-'));
  sim = await startSimulator({
    clusters: [
      { name: 'demo', nodes: 1 },
      { name: 'named', nodes: 1, seed: 2 },
    ],
  });
  kubeconfig = join(dir, 'kubeconfig.yaml');
  await sim.writeKubeconfig(kubeconfig);
  runtime = await startLocalRuntime({ retryDelayMs: 5 });
});
afterAll(async () => {
  await resetClusterConnector();
  await runtime?.stop();
  await sim?.stop();
  await rm(dir, { recursive: true, force: true });
});

const ports = () => {
  const access = clusterAccess();
  return {
    store: new DynamoRegistry(runtime.db, runtime.table),
    publisher: deps().publisher,
    verify: (n: string, r: Parameters<typeof access.verify>[1]) => access.verify(n, r),
  };
};
const ref = (context = 'demo') => ({ kind: 'file' as const, path: kubeconfig, context });

/** kube-system deleted and made again: a new UID, as a cluster rebuilt behind the same endpoint has. */
async function recreateKubeSystem(c: ReturnType<Simulator['cluster']>): Promise<string> {
  const deleted = await raw(c, 'DELETE', '/api/v1/namespaces/kube-system');
  expect(deleted.status, deleted.text).toBeLessThan(300);
  for (let i = 0; i < 50 && (await raw(c, 'GET', '/api/v1/namespaces/kube-system')).status === 200; i++)
    await new Promise((r) => setTimeout(r, 50));
  const made = await raw(c, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'kube-system' } } });
  expect(made.status, made.text).toBe(201);
  return (await raw(c, 'GET', '/api/v1/namespaces/kube-system')).json.metadata.uid as string;
}

async function carryId(c: ReturnType<Simulator['cluster']>, value: string): Promise<void> {
  const crd = await raw(c, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    body: clusterPropertyCrd(),
  });
  expect(crd.status, crd.text).toBe(201);
  const id = await raw(c, 'POST', '/apis/about.k8s.io/v1alpha1/clusterproperties', {
    body: {
      apiVersion: 'about.k8s.io/v1alpha1',
      kind: 'ClusterProperty',
      metadata: { name: 'id.k8s.io', labels: { 'app.kubernetes.io/managed-by': 'fleetscope' } },
      spec: { value },
    },
  });
  expect(id.status, id.text).toBe(201);
}

it('kube-system recreated: a second registration under another name is refused; the first stays', async () => {
  const c = sim.cluster('demo');
  const first = await registerCluster({ name: 'demo-2', kubeconfig: ref() }, ports());
  const oldUid = first.kubeSystemUid!;
  // What the claims worker writes after registration: the CRD, and the ID (the kube-system UID).
  const crd = await raw(c, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    body: clusterPropertyCrd(),
  });
  expect(crd.status, crd.text).toBe(201);
  const id = await raw(c, 'POST', '/apis/about.k8s.io/v1alpha1/clusterproperties', {
    body: {
      apiVersion: 'about.k8s.io/v1alpha1',
      kind: 'ClusterProperty',
      metadata: { name: 'id.k8s.io', labels: { 'app.kubernetes.io/managed-by': 'fleetscope' } },
      spec: { value: oldUid },
    },
  });
  expect(id.status, id.text).toBe(201);
  const deleted = await raw(c, 'DELETE', '/api/v1/namespaces/kube-system');
  expect(deleted.status, deleted.text).toBeLessThan(300);
  for (let i = 0; i < 50 && (await raw(c, 'GET', '/api/v1/namespaces/kube-system')).status === 200; i++)
    await new Promise((r) => setTimeout(r, 50));
  const made = await raw(c, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'kube-system' } } });
  expect(made.status, made.text).toBe(201);
  const newUid = (await raw(c, 'GET', '/api/v1/namespaces/kube-system')).json.metadata.uid as string;
  expect(newUid).not.toBe(oldUid);

  await expect(registerCluster({ name: 'demo-2-again', kubeconfig: ref() }, ports())).rejects.toThrow(
    new RegExp(`carries id.k8s.io ${oldUid}, the ID of cluster "demo-2".*one cluster keeps one identity`),
  );
  expect(await ports().store.get('demo-2-again')).toBeUndefined();
  expect((await ports().store.get('demo-2'))?.kubeSystemUid).toBe(oldUid);
  // The operator's decision: it is a new cluster. Deregistered first, it registers.
  await deregisterCluster('demo-2', ports());
  const again = await registerCluster({ name: 'demo-2-again', kubeconfig: ref() }, ports());
  expect(again.kubeSystemUid).toBe(newUid);
});

it('an operator-given ID (no UID guard names it) is found through the claims, and refused the same', async () => {
  const c = sim.cluster('named');
  const claims = new DynamoClaimStore(runtime.db, runtime.table);
  await registerCluster({ name: 'named-1', kubeconfig: ref('named') }, ports());
  await carryId(c, 'prod-eu-1');
  const cp = { store: claims, registry: ports().store, publisher: deps().publisher };
  await ensureIdentity(cp, { cluster: 'named-1', kubeSystemUid: c.kubeSystemUid });
  await setClusterId(cp, 'named-1', 'prod-eu-1');
  await recreateKubeSystem(c);
  const idHolder = async (id: string) =>
    (await claims.listIdentities()).find((i) => i.clusterId === id)?.cluster;
  await expect(
    registerCluster({ name: 'named-2', kubeconfig: ref('named') }, { ...ports(), idHolder }),
  ).rejects.toThrow(
    /carries id.k8s.io prod-eu-1, the ID of cluster "named-1".*claims accept-uid --cluster named-1/,
  );
  expect(await ports().store.get('named-2')).toBeUndefined();
});
