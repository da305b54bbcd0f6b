/**
 * Cluster identity (KEP-2149) end to end on a whole real cluster, through the real claims handler of the
 * local runtime: registration writes id.k8s.io = the real kube-system UID; the cluster joins a ClusterSet,
 * gets custom claims, an admin's edit and delete are repaired by the next check; then it leaves the set
 * and its membership claim goes.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { clusterClaimCrd } from '../../local/sim/index.js';
import { CLUSTER_PROPERTY, OCM_CLUSTER_CLAIM } from '../../shared/claims/crd.js';
import { leaveClusterSet } from '../../shared/claims/membership.js';
import { DynamoClaimStore } from '../../shared/claims/store-dynamo.js';
import { resetClusterConnector } from '../../shared/fleet/cluster-access.js';
import { DynamoRegistry } from '../../shared/fleet/registry-dynamo.js';
import { deps } from '../../shared/platform/deps.js';
import { busEvent } from '../support/bus-event.js';
import { claimsThroughDrift, expectRepaired } from '../support/claims-drift.js';
import { describeRealCluster } from '../support/real-cluster.js';
import { type CycleEnv, startCycleEnv } from './helpers.js';

const CLUSTER = 'c-cluster';
const PROPERTIES = `/apis/${CLUSTER_PROPERTY.group}/v1beta1/clusterproperties`;

describeRealCluster('cluster claims', { nodes: [{ name: 'c-a', cpus: 1, memory: '1Gi' }] }, (k) => {
  let env: CycleEnv;
  // biome-ignore lint/suspicious/noExplicitAny: parsed JSON answers of arbitrary shape
  const admin = async (method: string, path: string, body?: unknown, contentType?: string): Promise<any> => {
    const r = await k.raw(method, path, body, contentType);
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
    return r.json;
  };
  const work = () =>
    busEvent('ClusterWorkRequested', {
      cluster: CLUSTER,
      capability: 'claims',
      cycleId: `claims/${Date.now()}`,
      requestedAt: new Date().toISOString(),
    });

  beforeAll(async () => {
    env = await startCycleEnv(k);
    await admin('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', clusterClaimCrd());
    await k.waitFor('the OCM ClusterClaim CRD Established', async () => {
      const crd = await admin(
        'GET',
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${OCM_CLUSTER_CLAIM.crdName}`,
      );
      return (crd.status?.conditions ?? []).some(
        (c: { type: string; status: string }) => c.type === 'Established' && c.status === 'True',
      );
    });
    await new DynamoRegistry(env.runtime.db, env.runtime.table).add({
      name: CLUSTER,
      kubeconfig: { kind: 'file', path: k.cluster().kubeconfigPath, context: 'envtest' },
      labels: {},
      registeredAt: new Date().toISOString(),
    });
  }, 60_000);
  afterAll(async () => {
    await resetClusterConnector();
    await env?.stop();
  });

  it('registers with the real kube-system UID, joins a ClusterSet, and repairs an admin’s drift', async () => {
    const got = await claimsThroughDrift(
      {
        runtime: env.runtime,
        admin,
        registered: (cluster) =>
          busEvent('ClusterRegistered', { cluster, labels: {}, registeredAt: new Date().toISOString() }),
        check: work,
      },
      CLUSTER,
    );
    const kubeSystem = await admin('GET', '/api/v1/namespaces/kube-system');
    expectRepaired(got, kubeSystem.metadata.uid);
    expect(env.runtime.invoker.deadLetters).toEqual([]);
  });

  it('leaves the ClusterSet: its membership claim goes, the identity stays', async () => {
    const ports = {
      store: new DynamoClaimStore(env.runtime.db, env.runtime.table),
      registry: new DynamoRegistry(env.runtime.db, env.runtime.table),
      publisher: deps().publisher,
    };
    const left = await leaveClusterSet(ports, CLUSTER, 'blue');
    expect(left.changed).toBe(true);
    await env.runtime.bus.drain();
    await env.runtime.invoker.invoke('claims', work());
    const names = (
      (await admin('GET', PROPERTIES)).items as { metadata: { name: string }; spec: { value: string } }[]
    ).map((o) => [o.metadata.name, o.spec.value]);
    const kubeSystem = await admin('GET', '/api/v1/namespaces/kube-system');
    expect(Object.fromEntries(names)).toMatchObject({ 'id.k8s.io': kubeSystem.metadata.uid });
    expect(names.map(([n]) => n)).not.toContain('clusterset.k8s.io');
    expect(env.runtime.invoker.deadLetters).toEqual([]);
  });
});
