/**
 * Turning node scope off (the feature's clear-vpa-status task) takes back everything fleetscope
 * published on a VPA it sizes: its condition and status.nodeScope, and now also the DaemonSet-wide
 * status.recommendation and the groups (either shape), which upstream's updater and admission
 * controller would otherwise go on acting on. A VPA fleetscope does not size keeps its status.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ObjectsApi } from '../../shared/features/objects.js';
import type { TaskContext } from '../../shared/features/spec.js';
import { RawReader } from '../../shared/k8s/raw-reader.js';
import { installScopedCrd } from '../../shared/nodescope/crd.js';
import { clearVpaStatus } from '../../shared/nodescope/feature-hooks.js';
import { type Env, startEnv, VPA_RESOURCE, vpaObject } from './helpers.js';

const REC = { containerRecommendations: [{ containerName: 'c', target: { cpu: '10m', memory: '8Mi' } }] };
const GROUPS = [{ scopeValue: 'gpu', containerRecommendations: REC.containerRecommendations }];

describe('clear-vpa-status', () => {
  let env: Env;
  beforeAll(async () => {
    env = await startEnv([{ name: 'off', nodes: 1, seed: 5, vpaCrd: true, daemonSets: [] }]);
    await installScopedCrd(env.clients.get('off')!);
  });
  afterAll(async () => {
    await env?.stop();
  });

  it('clears the recommendation and groups fleetscope wrote, and leaves another recommender’s', async () => {
    const client = env.clients.get('off')!;
    const raw = new RawReader(client);
    const status = (vpa: string, s: object) =>
      raw.send(
        'set status',
        'PATCH',
        `/apis/autoscaling.k8s.io/v1/namespaces/monitoring/verticalpodautoscalers/${vpa}/status`,
        { status: s },
        'application/merge-patch+json',
      );
    const store = env.sim.cluster('off').store;
    store.put(VPA_RESOURCE, vpaObject({ name: 'ours' }));
    store.put(VPA_RESOURCE, vpaObject({ name: 'theirs' }));
    const ours = { type: 'RecommendationProvided', status: 'True', reason: 'NodeScope', message: 'x' };
    await status('ours', {
      conditions: [ours],
      recommendation: REC,
      recommendationGroups: GROUPS,
      groups: GROUPS,
      nodeScope: { nodes: 1 },
    });
    const upstream = { type: 'RecommendationProvided', status: 'True', reason: '', message: '' };
    await status('theirs', { conditions: [upstream], recommendation: REC });
    await clearVpaStatus({ objects: async () => new ObjectsApi(client) } as unknown as TaskContext);
    expect(store.get(VPA_RESOURCE, 'ours', 'monitoring')?.status).toEqual({ conditions: [] });
    expect(store.get(VPA_RESOURCE, 'theirs', 'monitoring')?.status).toEqual({
      conditions: [upstream],
      recommendation: REC,
    });
  });
});
