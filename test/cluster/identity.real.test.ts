/**
 * A cluster's identity and what fleetscope leaves in it, judged by a whole real cluster (issue 34,
 * defects 5, 6 and 11): the real kube-system UID, the real ClusterProperty objects and their
 * resourceVersions (nothing rewritten), the real namespace controller finalizing fleetscope-system and
 * the real garbage collector. Two state directories are two control planes, as an operator runs them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openContext } from '../../cli/context.js';
import { resetClusterConnector } from '../../shared/fleet/cluster-access.js';
import { runFleetscopeInProcess } from '../support/cli.js';
import { describeRealCluster } from '../support/real-cluster.js';

const PROPERTIES = '/apis/about.k8s.io/v1beta1/clusterproperties';
const LEASE = '/apis/coordination.k8s.io/v1/namespaces/fleetscope-system/leases/fleetscope-owner';
const SYSTEM = '/api/v1/namespaces/fleetscope-system';
const FEATURE_CRD = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/features.fleetscope.io';

describeRealCluster(
  'one identity; adoption; deregistration',
  { nodes: [{ name: 'id-a', cpus: 1, memory: '1Gi' }] },
  (k) => {
    let dir: string;
    const as =
      (plane: string) =>
      (...args: string[]) =>
        runFleetscopeInProcess(args, { stateDir: join(dir, plane) });
    const a = as('a');
    const b = as('b');
    const register = (name: string) => [
      'cluster',
      'register',
      '--name',
      name,
      '--kubeconfig',
      k.cluster().kubeconfigPath,
      '--context',
      'envtest',
    ];
    const status = async (path: string) => (await k.raw('GET', path)).status;
    // biome-ignore lint/suspicious/noExplicitAny: parsed JSON of arbitrary shape
    const get = async (path: string): Promise<any> => {
      const r = await k.raw('GET', path);
      if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${r.text}`);
      return r.json;
    };
    /** The claims in the cluster: name -> [value, resourceVersion]. */
    const claims = async () =>
      Object.fromEntries(
        (
          (await get(PROPERTIES)).items as {
            metadata: { name: string; resourceVersion: string };
            spec: { value: string };
          }[]
        ).map((o) => [o.metadata.name, [o.spec.value, o.metadata.resourceVersion]]),
      );
    const features = async () =>
      ((await k.raw('GET', '/apis/fleetscope.io/v1alpha1/features')).json?.items ?? []).length;
    /** Until fleetscope-system is gone (the namespace controller has finalized it). */
    const systemGone = () =>
      k.waitFor('fleetscope-system finalized', async () => (await status(SYSTEM)) === 404, 60_000);
    const expectOk = (r: { code: number; out: string; err: string }) => {
      expect(r.code, `${r.out}\n${r.err}`).toBe(0);
      return r;
    };

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'fleetscope-identity-real-'));
    });
    afterAll(async () => {
      await resetClusterConnector();
      await rm(dir, { recursive: true, force: true });
    });

    describe('deregistration (defect 11)', () => {
      it('removes what fleetscope created, only that, and frees the cluster for another control plane at once', async () => {
        expectOk(await a(...register('d1')));
        expectOk(await a('clusterset', 'join', '--cluster', 'd1', '--set', 'blue'));
        const uid = (await get('/api/v1/namespaces/kube-system')).metadata.uid;
        expect(await claims()).toMatchObject({
          'id.k8s.io': [uid, expect.any(String)],
          'clusterset.k8s.io': ['blue', expect.any(String)],
        });
        expect(await status(LEASE)).toBe(200);
        expect(await features()).toBeGreaterThan(0);
        expect(await status(FEATURE_CRD)).toBe(200);

        const out = expectOk(await a('cluster', 'deregister', '--name', 'd1')).out;
        expect(out).toContain('removed clusterset.k8s.io (ClusterSet blue)');
        expect(out).toMatch(/removed \d+ Feature object\(s\)/);
        expect(out).toContain('removed CRD features.fleetscope.io');
        expect(out).toContain('released the owner lease');
        expect(out).toContain('removed namespace fleetscope-system');
        const left = await claims();
        expect(left['id.k8s.io']?.[0]).toBe(uid); // the ID outlives fleetscope (KEP-2149)
        expect(left['clusterset.k8s.io']).toBeUndefined();
        expect(await status(LEASE)).toBe(404);
        await systemGone();
        await k.waitFor('the Feature CRD gone', async () => (await status(FEATURE_CRD)) === 404, 30_000);

        // Another control plane is not refused for 15 minutes: it registers the cluster now.
        expectOk(await b(...register('d1')));
        expectOk(await b('cluster', 'deregister', '--name', 'd1'));
        await systemGone();
      });

      for (const at of ['mirror-removed', 'lease-released'] as const) {
        it(`killed after ${at}: run again, it finishes the job, and keeps a namespace holding someone else's object`, async () => {
          expectOk(await a(...register('d2')));
          const cm = {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: 'keep-me' },
            data: { mine: 'yes' },
          };
          expect((await k.raw('POST', `${SYSTEM}/configmaps`, cm)).status).toBe(201);
          const ctx = await openContext({ 'state-dir': join(dir, 'a') });
          try {
            const { deregisterNamed } = await import('../../cli/commands/cluster-deregister.js');
            await expect(
              deregisterNamed(ctx, 'd2', {
                step: (s) => {
                  if (s === at) throw new Error(`killed after ${s}`);
                },
              }),
            ).rejects.toThrow('killed');
            expect((await ctx.registry.get('d2'))?.deregistering).toBeDefined();
          } finally {
            await ctx.close();
          }
          expect(await features()).toBe(0);
          const again = expectOk(await a('cluster', 'deregister', '--name', 'd2')).out;
          expect(again).toContain('kept namespace fleetscope-system');
          expect(again).toContain('configmaps/keep-me');
          expect(await status(LEASE)).toBe(404);
          expect((await get(`${SYSTEM}/configmaps/keep-me`)).data).toEqual({ mine: 'yes' });
          expect(await status(FEATURE_CRD)).toBe(404);
          expect(await status(SYSTEM)).toBe(200);
          expect((await a('cluster', 'list', '-o', 'name')).out).not.toContain('d2');
          expect((await k.raw('DELETE', `${SYSTEM}/configmaps/keep-me`)).status).toBe(200);
        });
      }
    });
  },
);
