/**
 * The cross-account recipe, exactly as documented, on a real kube-apiserver: the member stack's access
 * entry (its Kubernetes group, no access policy) and the command its `RbacCommand` output names, run as
 * printed (`fleetscope rbac ...`) and its manifests applied. fleetscope's functions are then the identity
 * EKS maps the entry's role to (the assumed-role session user in the entry's group, authenticated here
 * by a client certificate carrying the same user and group), and registration and every capability's
 * work run under it through the real handlers: every schedule once and every registration event, with no
 * request refused. The writes no capability may make are refused with the real 403.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { buildMember } from '../../infra/member/build.js';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.js';
import { validatePolicy } from '../../shared/balloons/policy.js';
import { DynamoBalloonStore } from '../../shared/balloons/store-dynamo.js';
import { clusterAccess, resetClusterConnector } from '../../shared/fleet/cluster-access.js';
import { OWNER_LEASE } from '../../shared/fleet/ownership.js';
import { DynamoRegistry } from '../../shared/fleet/registry-dynamo.js';
import { runFleetscopeInProcess } from '../support/cli.js';
import { collectionPath } from '../support/rbac-paths.js';
import { describeRealApiserver } from '../support/real-apiserver.js';
import { prepareCluster } from './real-cluster.js';

const CLUSTER = 'member';
/** The username EKS gives an access entry of a role: the session of the role fleetscope assumed. */
const SESSION_USER = 'arn:aws:sts::222233334444:assumed-role/fleetscope-access/fleetscope-member';

// biome-ignore lint/suspicious/noExplicitAny: synthesised CloudFormation is untyped JSON
type Json = Record<string, any>;

/** What the member stack deploys for the cluster: the entry's groups and the RBAC command it outputs. */
function memberRecipe(dir: string) {
  const app = new App({
    outdir: dir,
    context: { 'member.controlPlaneAccount': '111122223333', 'member.clusters': CLUSTER },
  });
  const template = Template.fromStack(buildMember(app)).toJSON();
  const entry = Object.values(template.Resources as Record<string, Json>).find(
    (r) => r.Type === 'AWS::EKS::AccessEntry',
  )!;
  const command = String((template.Outputs as Json).RbacCommand.Value);
  const m = /^npx fleetscope (rbac .*) \| kubectl apply -f -$/.exec(command);
  if (!m)
    throw new Error(
      `the RbacCommand output is not "npx fleetscope rbac ... | kubectl apply -f -": ${command}`,
    );
  return { entry: entry.Properties as Json, args: m[1]!.split(' ') };
}

const work = (capability: string) => ({
  version: '0',
  id: `${capability}-${Math.random()}`,
  'detail-type': 'ClusterWorkRequested',
  source: 'fleetscope',
  account: '111122223333',
  time: new Date().toISOString(),
  region: 'us-east-1',
  resources: [],
  detail: { cluster: CLUSTER, capability, cycleId: `${capability}/1`, requestedAt: new Date().toISOString() },
});

describeRealApiserver('the member recipe (access entry group + generated RBAC)', (server) => {
  let runtime: LocalRuntime;
  let dir: string;
  let groups: string[];
  const admin = async (method: string, path: string, body?: unknown, contentType?: string) => {
    const r = await server.raw(method, path, { body, contentType });
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
    return r.json;
  };
  const asFleetscope = (method: string, path: string, body?: unknown, contentType?: string) =>
    server.raw(method, path, { user: SESSION_USER, groups, body, contentType });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetscope-member-recipe-'));
    const recipe = memberRecipe(join(dir, 'cdk.out'));
    expect(recipe.entry.AccessPolicies, 'the access entry grants nothing cluster-wide').toBeUndefined();
    groups = recipe.entry.KubernetesGroups;
    // `npx fleetscope rbac ... | kubectl apply -f -`, as the output prints it.
    const rbac = await runFleetscopeInProcess(recipe.args);
    expect(rbac.code, rbac.err).toBe(0);
    for (const doc of parseAllDocuments(rbac.out)) {
      const object = doc.toJS() as Json;
      await admin('POST', collectionPath(object as never), object);
    }

    runtime = await startLocalRuntime({ retryDelayMs: 5 });
    process.env.FLEETSCOPE_BALLOONS_SETTLE_MS = '0';
    await prepareCluster(admin, server.established);
    const path = join(dir, 'member.yaml');
    await writeFile(path, await server.api().kubeconfigFor(SESSION_USER, groups));
    await new DynamoRegistry(runtime.db, runtime.table).add({
      name: CLUSTER,
      kubeconfig: { kind: 'file', path, context: 'envtest' },
      labels: {},
      registeredAt: new Date().toISOString(),
    });
  }, 180_000);
  afterAll(async () => {
    delete process.env.FLEETSCOPE_BALLOONS_SETTLE_MS;
    await resetClusterConnector();
    await runtime?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('registration: the cluster identity is read under the recipe', async () => {
    const kubeSystem = await admin('GET', '/api/v1/namespaces/kube-system');
    const ref = { kind: 'file' as const, path: join(dir, 'member.yaml'), context: 'envtest' };
    await expect(clusterAccess().verify(CLUSTER, ref)).resolves.toEqual({
      kubeSystemUid: kubeSystem.metadata.uid,
    });
  });

  it('every capability: registration events, then every schedule once, with nothing refused', async () => {
    await new DynamoBalloonStore(runtime.db, runtime.table).putPolicy(
      CLUSTER,
      validatePolicy({ name: 'all', selector: 'kubernetes.io/os=linux', max: { cpu: '2', memory: '4Gi' } }),
    );
    await runtime.bus.deliver({
      detailType: 'ClusterRegistered',
      detail: { cluster: CLUSTER, labels: {}, registeredAt: new Date().toISOString() },
    });
    await runtime.bus.drain();
    await runtime.scheduler.runOnce();
    await runtime.bus.drain();
    for (const capability of ['inventory', 'claims', 'cycle']) {
      const out = (await runtime.invoker.invoke(capability, work(capability))) as Json | undefined;
      expect(JSON.stringify(out ?? {}), capability).not.toMatch(/forbidden|403/i);
    }
    expect(runtime.invoker.deadLetters).toEqual([]);
    const status = await new DynamoRegistry(runtime.db, runtime.table).getStatus(CLUSTER);
    expect(status).toMatchObject({ reachable: true, nodeCount: 2 });
    // What each capability wrote under the recipe, read back as the admin.
    const kubeSystem = await admin('GET', '/api/v1/namespaces/kube-system');
    const properties = await admin('GET', '/apis/about.k8s.io/v1alpha1/clusterproperties');
    expect(properties.items.map((p: Json) => [p.metadata.name, p.spec.value])).toContainEqual([
      'id.k8s.io',
      kubeSystem.metadata.uid,
    ]);
    await admin('GET', '/apis/apps/v1/namespaces/kube-system/daemonsets/fleetscope-balloon');
    await admin('GET', '/apis/scheduling.k8s.io/v1/priorityclasses/fleetscope-balloon');
    // The owner lease, in the namespace registration creates (leases and namespace create: fleet's rules).
    const lease = await admin(
      'GET',
      `/apis/coordination.k8s.io/v1/namespaces/${OWNER_LEASE.namespace}/leases/${OWNER_LEASE.name}`,
    );
    expect(lease.spec.holderIdentity).toBeTruthy();
    // The feature lifecycle's objects (its CRD and a Feature per capability).
    const features = await admin('GET', '/apis/fleetscope.io/v1alpha1/features');
    expect(features.items.length).toBeGreaterThan(0);
  });

  it('refuses the writes no capability may make, with the real 403', async () => {
    // [method, path, body, the verb, resource and API group the 403 names]
    const cases: [string, string, unknown, string, string, string][] = [
      ['GET', '/api/v1/namespaces/kube-system/secrets', undefined, 'list', 'secrets', ''],
      ['DELETE', '/api/v1/namespaces/monitoring/pods/agent-node-a', undefined, 'delete', 'pods', ''],
      ['DELETE', '/api/v1/namespaces/kube-system', undefined, 'delete', 'namespaces', ''],
      ['PATCH', '/api/v1/nodes/node-a', { metadata: { labels: { x: 'y' } } }, 'patch', 'nodes', ''],
      // The balloon DaemonSet's writes are limited to kube-system and its own name.
      [
        'POST',
        '/apis/apps/v1/namespaces/default/daemonsets',
        { metadata: { name: 'x' } },
        'create',
        'daemonsets',
        'apps',
      ],
      [
        'DELETE',
        '/apis/apps/v1/namespaces/monitoring/daemonsets/agent',
        undefined,
        'delete',
        'daemonsets',
        'apps',
      ],
      [
        'DELETE',
        '/apis/apps/v1/namespaces/kube-system/daemonsets/other',
        undefined,
        'delete',
        'daemonsets',
        'apps',
      ],
      [
        'DELETE',
        '/apis/scheduling.k8s.io/v1/priorityclasses/system-node-critical',
        undefined,
        'delete',
        'priorityclasses',
        'scheduling.k8s.io',
      ],
      [
        'POST',
        '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
        { metadata: { name: 'x' } },
        'create',
        'clusterrolebindings',
        'rbac.authorization.k8s.io',
      ],
    ];
    for (const [method, path, body, verb, resource, group] of cases) {
      const r = await asFleetscope(
        method,
        path,
        body,
        method === 'PATCH' ? 'application/merge-patch+json' : undefined,
      );
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.json.message, `${method} ${path}`).toContain(
        `User "${SESSION_USER}" cannot ${verb} resource "${resource}" in API group "${group}"`,
      );
    }
  });
});
