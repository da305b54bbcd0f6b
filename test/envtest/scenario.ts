/**
 * Ordinary traffic for the fidelity replay (test/envtest/fidelity.real.test.ts) and for the 1.36
 * reference exchanges recorded from it (test/fixtures/apiserver-1.36.2, scripts/record-reference.ts):
 * reads, writes, a stale update, a pod and its in-place resize, the 1.36 resize admission's refusals
 * and a node-field affinity a real server refuses.
 */
import type { SimCluster } from '../../local/sim/index.js';
import { raw } from '../sim/helpers.js';

const pod = (nodeName: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'agent', namespace: 'fidelity' },
  spec: {
    nodeName,
    containers: [
      {
        name: 'agent',
        image: 'registry.k8s.io/pause:3.10',
        resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { memory: '128Mi' } },
        resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'NotRequired' }],
      },
    ],
  },
});

const twoNodeDaemonSet = {
  metadata: { name: 'pinned' },
  spec: {
    selector: { matchLabels: { app: 'pinned' } },
    template: {
      metadata: { labels: { app: 'pinned' } },
      spec: {
        containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }],
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['a', 'b'] }] },
              ],
            },
          },
        },
      },
    },
  },
};

/** The simulated cluster the reference exchanges were recorded from (the simulator is deterministic). */
export const REFERENCE_CLUSTER = { name: 'recorded', nodes: 1, kubernetesVersion: '1.36.2' };

/** The requests, in order, against a simulated cluster with one node. */
export async function ordinaryTraffic(c: SimCluster): Promise<void> {
  const ns = '/api/v1/namespaces/fidelity';
  await raw(c, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'fidelity' } } });
  const cm = await raw(c, 'POST', `${ns}/configmaps`, {
    body: { metadata: { name: 'cm' }, data: { a: '1' } },
  });
  await raw(c, 'PUT', `${ns}/configmaps/cm`, { body: { ...cm.json, data: { a: '2' } } });
  await raw(c, 'PUT', `${ns}/configmaps/cm`, { body: { ...cm.json, data: { a: '3' } } }); // stale: 409
  await raw(c, 'PATCH', `${ns}/configmaps/cm`, {
    body: { data: { b: '2' } },
    contentType: 'application/merge-patch+json',
  });
  await raw(c, 'GET', `${ns}/configmaps?limit=1`);
  const node = c.store.list('nodes')[0]?.metadata.name;
  await raw(c, 'POST', `${ns}/pods`, { body: pod(node) });
  await raw(c, 'POST', `${ns}/pods`, {
    body: { ...pod('no-such-node'), metadata: { name: 'lost', namespace: 'fidelity' } },
  });
  const resize = (name: string, cpu: string) =>
    raw(c, 'PATCH', `${ns}/pods/${name}/resize`, {
      body: { spec: { containers: [{ name: 'agent', resources: { requests: { cpu } } }] } },
      contentType: 'application/strategic-merge-patch+json',
    });
  await resize('agent', '200m');
  await resize('agent', '4000'); // past the node's allocatable: refused at admission from 1.36
  await resize('lost', '200m'); // its node does not exist: refused at admission from 1.36
  await raw(c, 'GET', `${ns}/pods/agent`);
  // A node-field requirement with two values: refused (422) by both, as fleetscope's balloon
  // DaemonSet once sent it.
  await raw(c, 'POST', '/apis/apps/v1/namespaces/fidelity/daemonsets', { body: twoNodeDaemonSet });
  await raw(c, 'DELETE', `${ns}/configmaps/cm`);
  await raw(c, 'GET', `${ns}/configmaps/cm`);
}
