/**
 * The feature lifecycle under RBAC enforcement: the RBAC `fleetscope rbac` generates for the whole
 * catalogue is bound to one ServiceAccount, and every built-in feature is turned on, used and turned off
 * through that account (the workers through the registry's kubeconfig, the reconciler and its mirror
 * through the same token). No request is refused: the permissions each capability declares for its own
 * off-transition, and the features capability's for the Feature objects, are enough.
 */

import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deniedRequests } from '../../local/sim/authz.js';
import { clusterClaimCrd } from '../../local/sim/index.js';
import { CAPABILITIES } from '../../shared/capabilities.js';
import { resetClusterConnector } from '../../shared/fleet/cluster-access.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import { RawReader } from '../../shared/k8s/raw-reader.js';
import { rbacManifests } from '../../shared/platform/rbac-manifests.js';
import { collectionPath } from '../support/rbac-paths.js';
import { EXERCISES } from './exercises.js';
import { BALLOONS, CLAIMS, dangling, drive, type FeatureEnv, NODESCOPE, startFeatureEnv } from './helpers.js';

const NS = 'fleetscope';

describe('feature transitions under RBAC enforcement', () => {
  let env: FeatureEnv;
  let locked: ClusterClient;
  beforeAll(async () => {
    const spec = { ...EXERCISES['fleetscope-system/nodescope']!.cluster, name: 'locked', rbac: true };
    env = await startFeatureEnv([spec]);
    const admin = new RawReader(env.client('locked'));
    const post = <T>(path: string, body: unknown) => admin.send<T>(`create ${path}`, 'POST', path, body);
    await post('/api/v1/namespaces', { metadata: { name: NS } });
    await post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', clusterClaimCrd());
    const subject = { kind: 'ServiceAccount' as const, namespace: NS, name: 'fleetscope' };
    for (const m of rbacManifests(CAPABILITIES, { subjects: [subject], prefix: 'fs' })) {
      await post(collectionPath(m.object as never), m.object);
    }
    const { status } = await post<{ status: { token: string } }>(
      `/api/v1/namespaces/${NS}/serviceaccounts/fleetscope/token`,
      { spec: { expirationSeconds: 48 * 3600 } },
    );
    const text = await env.sim.cluster('locked').kubeconfigFor({ token: status.token });
    const path = join(tmpdir(), `fleetscope-features-rbac-${process.pid}.yaml`);
    await writeFile(path, text);
    // The workers reach the cluster through the registry's kubeconfig: the restricted one from now on.
    await env.registry.updateKubeconfig('locked', { kind: 'file', path, context: 'locked' });
    await resetClusterConnector();
    locked = ClusterClient.fromKubeconfig(text, {
      cluster: 'locked',
      context: 'locked',
      retry: { maxAttempts: 1 },
    });
  }, 120_000);
  afterAll(async () => {
    await locked?.close();
    await env?.stop();
  });

  it('turns every built-in feature on, uses it and turns it off with no request refused', async () => {
    const ports = { connect: async () => locked };
    for (const ref of [CLAIMS, NODESCOPE, BALLOONS]) {
      const ex = EXERCISES[`${ref.namespace}/${ref.name}`]!;
      await env.set('locked', ref, 'on');
      await drive(env, 'locked', ref, { ports, between: () => ex.checkIn(env, 'locked') });
      await ex.use(env, 'locked');
      await env.set('locked', ref, 'off');
      const off = await drive(env, 'locked', ref, { ports, between: () => ex.checkIn(env, 'locked') });
      expect(off.state, ref.name).toBe('Off');
      expect(await dangling(env, 'locked', ref), ref.name).toEqual([]);
    }
    expect(deniedRequests(env.sim.state('locked'))).toEqual([]);
    // The Feature objects were written under the same identity (read back as admin: fleetscope never lists them).
    const f = (await env.client('locked').custom.listNamespacedCustomObject({
      group: 'fleetscope.io',
      version: 'v1alpha1',
      namespace: 'fleetscope-system',
      plural: 'features',
    })) as { items: { metadata: { name: string }; status: { state: string } }[] };
    expect(f.items.map((i) => `${i.metadata.name}=${i.status.state}`).sort()).toEqual([
      'balloons=Off',
      'claims=Off',
      'nodescope=Off',
    ]);
  });
});
