/**
 * Node scope's writes under exactly the RBAC `fleetscope rbac` generates, on a real kube-apiserver:
 * the role for node scope (with the fleet core and the cluster cycle it runs in) is bound to a user of
 * its own, authenticated by a client certificate, and node scope's cycle runs as that user over the
 * simulated nodes of `fleetscope sim --apiserver` (local/sim/real/), whose metrics the real aggregator
 * serves. Its reads, the recommendation annotations, the VPA status and the in-place resizes all pass;
 * what its role does not grant (deleting or re-specifying pods, writing DaemonSets, nodes or CRDs,
 * reading Secrets) is refused with the real server's 403.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { LOAD_ANNOTATION } from '../../local/sim/daemonsets.js';
import type { LoadProfile } from '../../local/sim/workload.js';
import { CAPABILITIES } from '../../shared/capabilities.js';
import { RECOMMENDATION_ANNOTATION } from '../../shared/cycle/views.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import { vpaCheckpointCrd } from '../../shared/kernel/crds/vpa.js';
import { scopedVpaCrd } from '../../shared/nodescope/crd.js';
import type { CycleResult } from '../../shared/nodescope/cycle.js';
import { rbacManifests, withRequired } from '../../shared/platform/rbac-manifests.js';
import { vpaObject } from '../nodescope/helpers.js';
import { installCrd, type RealEnv, runNodeScopeCycles, startRealEnv } from '../simreal/helpers.js';
import { collectionPath } from '../support/rbac-paths.js';
import { describeRealApiserver } from '../support/real-apiserver.js';

const CLUSTER = 'ns-rbac';
const NS = 'monitoring';
const USER = 'fs-nodescope';

describeRealApiserver(
  "node scope's cycle under its generated role",
  (server) => {
    let env: RealEnv;
    let client: ClusterClient;
    const results: CycleResult[] = [];
    const admin = async (method: string, path: string, body?: unknown) => {
      const r = await server.raw(method, path, { body });
      if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
      return r.json;
    };
    const agentPods = async () =>
      (await env.client.core.listNamespacedPod({ namespace: NS, labelSelector: 'app=agent' })).items;

    beforeAll(async () => {
      env = await startRealEnv(server, CLUSTER, 2);
      // What the cluster's owner installs (the scoped VPA CRD, the workload) is the admin's part.
      await installCrd(env.client, scopedVpaCrd());
      await installCrd(env.client, vpaCheckpointCrd());
      await env.client.core.createNamespace({ body: { metadata: { name: NS } } });
      await env.nodes.sync();
      const load: LoadProfile = { cpu: 120, memory: '96Mi', noise: 0.05 };
      await admin('POST', `/apis/apps/v1/namespaces/${NS}/daemonsets`, {
        metadata: { name: 'agent', annotations: { [LOAD_ANNOTATION]: JSON.stringify(load) } },
        spec: {
          selector: { matchLabels: { app: 'agent' } },
          template: {
            metadata: { labels: { app: 'agent' } },
            spec: {
              containers: [
                {
                  name: 'collector',
                  image: 'registry.k8s.io/pause:3.10',
                  resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '1Gi' } },
                },
              ],
            },
          },
        },
      });
      await admin(
        'POST',
        `/apis/autoscaling.k8s.io/v1/namespaces/${NS}/verticalpodautoscalers`,
        vpaObject({ mode: 'Auto' }),
      );
      // Exactly what `fleetscope rbac` writes for node scope, bound to a user of its own.
      for (const m of rbacManifests(withRequired(CAPABILITIES, ['fleet', 'nodescope']), {
        subjects: [{ kind: 'User', name: USER }],
        prefix: USER,
      }))
        await admin('POST', collectionPath(m.object as never), m.object);
      client = ClusterClient.fromKubeconfig(await server.api().kubeconfigFor(USER), { cluster: CLUSTER });
      await env.nodes.sync();
      results.push(...(await runNodeScopeCycles(env, CLUSTER, 12, client)));
    }, 600_000);
    afterAll(async () => {
      await client?.close();
      await env?.stop();
    });

    it('reads, annotates, writes the VPA status and resizes with nothing refused', async () => {
      expect(results.flatMap((r) => r.detail.errors)).toEqual([]);
      expect(results.at(-1)?.daemonSets.find((d) => d.name === 'agent')?.metrics).toBe('available');
      const resized = results
        .flatMap((r) => r.resizeReports)
        .filter((x) => x.report.kind === 'resized' && x.report.outcome === 'Completed');
      expect(resized.length).toBeGreaterThan(0);
      const pods = await agentPods();
      expect(pods).toHaveLength(2);
      for (const p of pods) {
        expect(p.metadata?.annotations?.[RECOMMENDATION_ANNOTATION]).toBeDefined();
        expect(p.metadata?.generation).toBeGreaterThan(1);
      }
      const vpa = await admin(
        'GET',
        `/apis/autoscaling.k8s.io/v1/namespaces/${NS}/verticalpodautoscalers/agent`,
      );
      expect(vpa.status?.conditions?.map((c: { type: string }) => c.type)).toContain(
        'RecommendationProvided',
      );
      expect(env.nodes.problems()).toEqual([]);
    });

    it('is refused what its role does not grant, with the real 403', async () => {
      const pod = (await agentPods())[0]?.metadata?.name as string;
      const as = { user: USER };
      const refusals: [string, string, unknown?][] = [
        ['DELETE', `/api/v1/namespaces/${NS}/pods/${pod}`],
        ['PUT', `/api/v1/namespaces/${NS}/pods/${pod}`, { metadata: { name: pod } }],
        ['PATCH', `/apis/apps/v1/namespaces/${NS}/daemonsets/agent`, { metadata: { labels: { x: 'y' } } }],
        ['PATCH', `/api/v1/nodes/${env.nodes.nodeNames[0]}`, { metadata: { labels: { x: 'y' } } }],
        ['GET', `/api/v1/namespaces/${NS}/secrets`],
        ['POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', vpaCheckpointCrd()],
        [
          'PATCH',
          '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/verticalpodautoscalercheckpoints.autoscaling.k8s.io',
          {},
        ],
      ];
      for (const [method, path, body] of refusals) {
        const r = await server.raw(method, path, {
          ...as,
          body,
          contentType: method === 'PATCH' ? 'application/merge-patch+json' : undefined,
        });
        expect({ method, path, status: r.status, reason: r.json?.reason }).toEqual({
          method,
          path,
          status: 403,
          reason: 'Forbidden',
        });
        expect(r.json?.message).toContain(`User "${USER}" cannot`);
      }
    });
  },
  { versions: ['1.36'] },
);
