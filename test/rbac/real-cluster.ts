/**
 * What the real-apiserver RBAC suites share: the 403 a real kube-apiserver answers, and the workload
 * node scope works on, made by the admin as the controllers and kubelet a bare server lacks would.
 */

import { clusterClaimCrd, OCM_CLUSTER_CLAIM } from '../../shared/claims/crd.js';
import { VPA_CRD_NAME } from '../../shared/kernel/crds/vpa.js';
import { scopedVpaCrd } from '../../shared/nodescope/crd.js';
import { vpaObject } from '../nodescope/helpers.js';

/** The 403 Status a real kube-apiserver answers for a request RBAC refuses. */
export function forbidden(
  user: string,
  verb: string,
  resource: string,
  where: { namespace?: string; name?: string; group?: string },
) {
  const scope = where.namespace ? `in the namespace "${where.namespace}"` : 'at the cluster scope';
  const subject = where.name ? `${resource.split('/')[0]} "${where.name}"` : resource;
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `${subject} is forbidden: User "${user}" cannot ${verb} resource "${resource}" in API group "${where.group ?? ''}" ${scope}`,
    reason: 'Forbidden',
    details: { ...(where.name ? { name: where.name } : {}), kind: resource.split('/')[0] },
    code: 403,
  };
}

// biome-ignore lint/suspicious/noExplicitAny: parsed JSON of arbitrary shape
export type Admin = (method: string, path: string, body?: unknown, contentType?: string) => Promise<any>;

/**
 * What node scope works on, made by the admin as the missing controllers and kubelet would: the scoped
 * VPA CRD, a DaemonSet with a VPA, and one Running pod of it per node (status written as a kubelet).
 */
/**
 * A bare server made like a small cluster: two Linux nodes, the hub's ClusterClaim CRD (OCM installs
 * it, not fleetscope: claims are mirrored where it exists) and node scope's workload.
 */
export async function prepareCluster(
  admin: Admin,
  established: (crd: string) => Promise<void>,
): Promise<void> {
  for (const node of ['node-a', 'node-b'])
    await admin('POST', '/api/v1/nodes', {
      metadata: { name: node, labels: { 'kubernetes.io/os': 'linux' } },
    });
  await admin('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', clusterClaimCrd());
  await established(OCM_CLUSTER_CLAIM.crdName);
  await startAgentDaemonSet(admin, established);
}

async function startAgentDaemonSet(admin: Admin, established: (crd: string) => Promise<void>): Promise<void> {
  await admin('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', scopedVpaCrd());
  await established(VPA_CRD_NAME);
  await admin('POST', '/api/v1/namespaces', { metadata: { name: 'monitoring' } });
  await admin('POST', '/api/v1/namespaces/monitoring/serviceaccounts', { metadata: { name: 'default' } });
  const labels = { app: 'agent' };
  const container = {
    name: 'collector',
    image: 'busybox',
    resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '1Gi' } },
  };
  const ds = await admin('POST', '/apis/apps/v1/namespaces/monitoring/daemonsets', {
    metadata: { name: 'agent' },
    spec: {
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [container] } },
    },
  });
  const owner = {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    name: 'agent',
    uid: ds.metadata.uid,
    controller: true,
  };
  for (const node of ['node-a', 'node-b']) {
    const path = '/api/v1/namespaces/monitoring/pods';
    const name = `agent-${node}`;
    await admin('POST', path, {
      metadata: { name, labels, ownerReferences: [owner] },
      spec: { nodeName: node, containers: [container] },
    });
    await admin(
      'PATCH',
      `${path}/${name}/status`,
      {
        status: {
          phase: 'Running',
          conditions: [{ type: 'Ready', status: 'True' }],
          containerStatuses: [
            {
              name: 'collector',
              image: 'busybox',
              imageID: '',
              ready: true,
              restartCount: 0,
              started: true,
              state: { running: { startedAt: new Date().toISOString() } },
              resources: container.resources,
            },
          ],
        },
      },
      'application/strategic-merge-patch+json',
    );
  }
  await admin(
    'POST',
    '/apis/autoscaling.k8s.io/v1/namespaces/monitoring/verticalpodautoscalers',
    vpaObject({ mode: 'Off' }),
  );
}
