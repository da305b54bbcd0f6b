/**
 * A cluster rebuilt behind the same endpoint keeps one identity, judged by a real kube-apiserver (issue
 * 34, defect 5, KEP-2149). A real server refuses to delete kube-system (NamespaceLifecycle), so the
 * rebuild is the real one: a new etcd (fresh data, hence a new kube-system UID and none of fleetscope's
 * objects) behind the same URL and credentials (RealApiserver.rebuild). The real server is the judge of
 * the UID and of what is written into the cluster; fleetscope is driven through its CLI, as an operator
 * drives it. The simulator's versions: test/fleet/rebuilt.sim.test.ts, test/claims/rebuilt-check.sim.test.ts.
 */
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { resetClusterConnector } from '../../shared/fleet/cluster-access.js';
import { runFleetscopeInProcess } from '../support/cli.js';
import { describeRealApiserver } from '../support/real-apiserver.js';

const ID = '/apis/about.k8s.io/v1beta1/clusterproperties/id.k8s.io';
const PROPERTIES = '/apis/about.k8s.io/v1beta1/clusterproperties';

describeRealApiserver('a cluster rebuilt behind the same endpoint', (server) => {
  let dir: string;
  let kubeconfig: string;
  const fleetscope = (...args: string[]) => runFleetscopeInProcess(args, { stateDir: join(dir, 'state') });
  const register = (name: string) =>
    fleetscope('cluster', 'register', '--name', name, '--kubeconfig', kubeconfig, '--context', 'envtest');
  const expectCode = (r: { code: number; out: string; err: string }, code: number) => {
    expect(r.code, `${r.out}\n${r.err}`).toBe(code);
    return r;
  };
  const kubeSystemUid = async (): Promise<string> =>
    (await server.raw('GET', '/api/v1/namespaces/kube-system')).json.metadata.uid;
  /** The id.k8s.io in the cluster: its value and resourceVersion, or its HTTP status when absent. */
  const idClaim = async () => {
    const r = await server.raw('GET', ID);
    return r.status === 200
      ? { value: r.json.spec.value as string, resourceVersion: r.json.metadata.resourceVersion as string }
      : r.status;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetscope-rebuilt-real-'));
    kubeconfig = join(dir, 'kubeconfig.yaml');
    writeFileSync(kubeconfig, server.api().adminKubeconfig, { mode: 0o600 });
  });
  afterAll(async () => {
    await resetClusterConnector();
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses a second registration, holds the cluster as identity-changed, and accept-uid keeps its one ID', async () => {
    // 1. Registered; its claims pass writes id.k8s.io, the kube-system UID.
    expectCode(await register('rb'), 0);
    expectCode(await fleetscope('claims', 'check'), 0);
    const oldUid = await kubeSystemUid();
    expect(await idClaim()).toMatchObject({ value: oldUid });

    // 2. Rebuilt behind the same endpoint: the real server's kube-system has a new UID.
    const url = server.api().url;
    await server.api().rebuild();
    await resetClusterConnector();
    expect(server.api().url).toBe(url);
    const newUid = await kubeSystemUid();
    expect(newUid).not.toBe(oldUid);
    expect(await idClaim()).toBe(404); // a new etcd: nothing of fleetscope's is left in the cluster

    // 3. The same kubeconfig under another name is refused (1: the world said no), naming "rb".
    const again = expectCode(await register('rb-again'), 1);
    expect(again.err).toContain('"rb"');
    expect(again.err).toContain('claims accept-uid --cluster rb');
    expect((await fleetscope('cluster', 'list', '-o', 'name')).out.split('\n')).toEqual(['rb']);

    // 4. Check after check, the cluster is held for the operator's decision: nothing written into it.
    for (const _ of [1, 2]) {
      const check = expectCode(await fleetscope('claims', 'check'), 1);
      expect(check.out).toContain('identity-changed');
      expect(check.out).toContain(`kube-system UID is now ${newUid}, registered ${oldUid}`);
      expect(await idClaim()).toBe(404);
      expect((await server.raw('GET', PROPERTIES)).status).toBe(404); // not even the CRD
    }
    // The operator's view of it: `claims get`'s IN-CLUSTER column.
    expect((await fleetscope('claims', 'get')).out).toMatch(
      /^rb .* identity-changed: kube-system UID is now/m,
    );

    // 5. The operator's decision: it is the same cluster. Its ID stays the old one, pass after pass.
    const accepted = expectCode(await fleetscope('claims', 'accept-uid', '--cluster', 'rb'), 0);
    expect(accepted.out).toContain(
      `kube-system UID ${newUid} accepted (was ${oldUid}); its ID stays ${oldUid}`,
    );
    expectCode(await fleetscope('claims', 'check'), 0);
    const written = await idClaim();
    expect(written).toMatchObject({ value: oldUid });
    for (const _ of [1, 2]) {
      expectCode(await fleetscope('claims', 'check'), 0);
      expect(await idClaim()).toEqual(written); // not rewritten: the same resourceVersion
    }
    expect((await fleetscope('claims', 'get')).out).toMatch(/^rb .* in-sync/m);
  });
});
