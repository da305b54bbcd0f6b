/**
 * Update mode Off as upstream VPA users meet it, on a real kube-apiserver over the simulated nodes of
 * `fleetscope sim --apiserver`: a VPA scoped by a node label key whose nodes carry a value, an empty
 * value and no label shows, with `kubectl get vpa -o yaml`, AEP-10031's status.recommendationGroups
 * (the three scope values, targets only) and status.recommendation (the DaemonSet-wide fallback, with
 * its bounds), while no pod is written; the Deckhouse fork's status.groups once that shape is installed.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { LoadProfile } from '../../local/sim/workload.js';
import { RawReader } from '../../shared/k8s/raw-reader.js';
import { vpaCheckpointCrd } from '../../shared/kernel/crds/vpa.js';
import { RECOMMENDATION_ANNOTATION } from '../../shared/nodescope/collect.js';
import { installScopedCrd, scopedVpaCrd } from '../../shared/nodescope/crd.js';
import { vpaObject } from '../nodescope/helpers.js';
import { describeNeeding, kubectlNeed } from '../support/needs-tool.js';
import { describeRealApiserver } from '../support/real-apiserver.js';
import {
  createAgentDaemonSet,
  installCrd,
  type RealEnv,
  runNodeScopeCycles,
  startRealEnv,
} from './helpers.js';

const CLUSTER = 'ns-off';
const NS = 'monitoring';
const POOL = 'fleetscope.test/pool';
const run = promisify(execFile);
const kubectl = kubectlNeed();

type Q = Record<string, string>;
interface ContainerRec {
  containerName: string;
  target: Q;
  lowerBound?: Q;
  upperBound?: Q;
  uncappedTarget?: Q;
}
interface VpaStatus {
  conditions?: { type: string; status: string; reason: string; message: string }[];
  recommendation?: { containerRecommendations: ContainerRec[] };
  recommendationGroups?: { scopeValue: string; containerRecommendations: ContainerRec[] }[];
  groups?: { scopeValue: string; containerRecommendations: ContainerRec[] }[];
}

describeRealApiserver(
  'update mode Off on a real apiserver: the status as upstream publishes it, no pod written',
  (server) => {
    let env: RealEnv;
    let dir: string | undefined;
    let kubeconfig: string;
    let uidsAtStart: string[];
    const agentPods = async () =>
      (await env.client.core.listNamespacedPod({ namespace: NS, labelSelector: 'app=agent' })).items;
    /** The VPA as `kubectl get vpa -o yaml` shows it. */
    const kubectlVpa = async (): Promise<{ status?: VpaStatus }> => {
      const args = ['--kubeconfig', kubeconfig, 'get', 'vpa', 'pool', '-n', NS, '-o', 'yaml'];
      const { stdout } = await run(kubectl.path as string, args);
      return parse(stdout);
    };

    beforeAll(async () => {
      env = await startRealEnv(server, CLUSTER, 3);
      dir = mkdtempSync(join(tmpdir(), 'ns-off-'));
      kubeconfig = join(dir, 'kubeconfig');
      writeFileSync(kubeconfig, server.api().adminKubeconfig);
      await installCrd(env.client, scopedVpaCrd());
      await installCrd(env.client, vpaCheckpointCrd());
      // The three kinds of scope value: a value, an empty value, no label.
      const [gpu, empty] = [...env.nodes.nodeNames].sort();
      const raw = new RawReader(env.client);
      for (const [node, value] of [
        [gpu, 'gpu'],
        [empty, ''],
      ] as const)
        await raw.send(
          'label node',
          'PATCH',
          `/api/v1/nodes/${node}`,
          { metadata: { labels: { [POOL]: value } } },
          'application/merge-patch+json',
        );
      await env.client.core.createNamespace({ body: { metadata: { name: NS } } });
      await env.nodes.sync();
      const names = [...env.nodes.nodeNames].sort();
      const load: LoadProfile = {
        cpu: 100,
        memory: '96Mi',
        perNode: { [names[0]!]: 4, [names[1]!]: 1, [names[2]!]: 2 },
        noise: 0.05,
      };
      await createAgentDaemonSet(env, NS, load);
      const vpa = vpaObject({ name: 'pool', via: 'spec', mode: 'Off' }) as { spec: Record<string, unknown> };
      vpa.spec.scope = POOL;
      await env.client.custom.createNamespacedCustomObject({
        group: 'autoscaling.k8s.io',
        version: 'v1',
        namespace: NS,
        plural: 'verticalpodautoscalers',
        body: vpa,
      });
      await env.nodes.sync();
      uidsAtStart = (await agentPods()).map((p) => p.metadata!.uid!).sort();
      await runNodeScopeCycles(env, CLUSTER, 6);
    }, 600_000);
    afterAll(async () => {
      await env?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    describeNeeding(kubectl, 'with kubectl', () => {
      it('kubectl get vpa -o yaml shows recommendationGroups (a value, empty, absent) and the fallback', async () => {
        const { status } = await kubectlVpa();
        expect(status?.conditions?.find((c) => c.type === 'RecommendationProvided')).toMatchObject({
          status: 'True',
          reason: 'NodeScope',
        });
        const groups = status?.recommendationGroups ?? [];
        expect(groups.map((g) => g.scopeValue)).toEqual(['', '__absent__', 'gpu']);
        for (const g of groups) {
          expect(g.containerRecommendations.map((c) => Object.keys(c).sort())).toEqual([
            ['containerName', 'target'],
          ]);
          expect(Object.keys(g.containerRecommendations[0]!.target).sort()).toEqual(['cpu', 'memory']);
        }
        const [fallback] = status?.recommendation?.containerRecommendations ?? [];
        expect(fallback?.containerName).toBe('collector');
        for (const f of ['target', 'lowerBound', 'upperBound', 'uncappedTarget'] as const)
          expect(Object.keys(fallback?.[f] ?? {}).sort()).toEqual(['cpu', 'memory']);
        // The Deckhouse fork's field is not this shape's.
        expect(status?.groups).toBeUndefined();
      });
    });

    it('writes no pod: the same pods, generation 1, no annotation, the template’s requests', async () => {
      expect(uidsAtStart.length).toBe(3);
      const pods = await agentPods();
      expect(pods.map((p) => p.metadata!.uid).sort()).toEqual(uidsAtStart);
      for (const p of pods) {
        expect(p.metadata?.annotations?.[RECOMMENDATION_ANNOTATION]).toBeUndefined();
        expect(p.metadata?.generation).toBe(1);
        expect(p.spec?.containers[0]?.resources?.requests).toEqual({ cpu: '100m', memory: '128Mi' });
      }
    });

    describeNeeding(kubectl, 'with kubectl, the older shape', () => {
      it("the Deckhouse fork's shape once installed: status.groups with bounds, the fallback left empty", async () => {
        expect(await installScopedCrd(env.client, 'deckhouse')).toBe('updated');
        // A changed schema takes effect shortly after the update on a real server.
        await new Promise((r) => setTimeout(r, 2_000));
        await runNodeScopeCycles(env, CLUSTER, 2);
        const { status } = await kubectlVpa();
        expect(status?.groups?.map((g) => g.scopeValue)).toEqual(['', '__absent__', 'gpu']);
        expect(Object.keys(status?.groups?.[2]?.containerRecommendations[0] ?? {}).sort()).toEqual([
          'containerName',
          'lowerBound',
          'target',
          'uncappedTarget',
          'upperBound',
        ]);
        expect(status?.recommendation).toBeUndefined();
        expect(status?.recommendationGroups).toBeUndefined();
      }, 300_000);
    });
  },
  { versions: ['1.36'] },
);
