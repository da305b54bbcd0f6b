/**
 * What fleetscope writes into a cluster for balloons: one PriorityClass and one DaemonSet.
 *
 * Priority: 1,000,000,000 is the highest a user may define. Nothing at or below it can preempt a
 * balloon, and `preemptionPolicy: Never` keeps a balloon from preempting anything through the
 * scheduler. A `system-*` class (>= 2e9) would be worse than useless: the kubelet evicts other pods to
 * admit a critical pod's resize (its critical-pod admission path ignores preemptionPolicy). What this
 * cannot give: system-critical pods (>= 2e9) can still preempt a balloon; fleetscope then sees the
 * DaemonSet's recreated pod at the floor size and re-inflates it only into free capacity.
 *
 * QoS and resizePolicy: the balloon is Burstable with requests and no limits. Without limits, the 1.33
 * rule that refuses memory-limit decreases under `NotRequired` never applies, so both directions work on
 * 1.33, 1.34 and 1.35 without restarting anything; and a Burstable pod is never refused for the CPU or
 * memory manager's static policy, as a Guaranteed one is ("Resize is infeasible for Guaranteed Pods
 * alongside CPU Manager static policy").
 *
 * Recreated pods start at the floor (the template cannot hold per-node sizes): that always fits where
 * a larger size might not, and the next cycle re-inflates into free capacity only.
 */
import { parseLabelSelector, type Requirement, toMatchExpressions } from '../kernel/label-selector.js';
import { quantitiesOf } from './amounts.js';
import { HOST_ID_LABEL, KUBELETS_PER_HOST_LABEL } from './desired.js';
import type { BalloonPolicy } from './policy.js';
import { BALLOON_FLOOR } from './sizing.js';

export const BALLOON_LABEL = 'fleetscope.io/balloon';
export const BALLOON_NAMESPACE = 'kube-system';
export const BALLOON_NAME = 'fleetscope-balloon';
export const BALLOON_CONTAINER = 'balloon';
export const PRIORITY_CLASS = 'fleetscope-balloon';
export const BALLOON_PRIORITY = 1_000_000_000;
export const DEFAULT_BALLOON_IMAGE = 'registry.k8s.io/pause:3.10';
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_VALUE = 'fleetscope';
const MANAGED_BY = { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE };
const APP = { 'app.kubernetes.io/name': BALLOON_NAME };
/** The selection the DaemonSet was written for, to tell whether it must be updated. */
export const SELECTION_ANNOTATION = 'fleetscope.io/balloon-selection';

export function priorityClass() {
  return {
    apiVersion: 'scheduling.k8s.io/v1',
    kind: 'PriorityClass',
    metadata: { name: PRIORITY_CLASS, labels: { ...MANAGED_BY } },
    value: BALLOON_PRIORITY,
    preemptionPolicy: 'Never',
    globalDefault: false,
    description:
      'fleetscope balloon pods (KEP-5620): capacity that does not exist. Never preempted by user pods; never preempts.',
  };
}

/** The nodes balloons run on: every policy's pool, the nodes with an explicit size, and shared hosts. */
export interface Selection {
  policies: readonly Pick<BalloonPolicy, 'name' | 'selector'>[];
  explicitNodes: readonly string[];
}

export function nodeSelectorTerms(sel: Selection) {
  const terms: object[] = [...sel.policies]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((p) => parseLabelSelector(p.selector))
    // An empty selector selects every node: an empty term would select none, so say Exists on hostname.
    .map((reqs: Requirement[]) => ({
      matchExpressions: reqs.length
        ? toMatchExpressions(reqs)
        : [{ key: 'kubernetes.io/hostname', operator: 'Exists' }],
    }));
  if (sel.explicitNodes.length)
    terms.push({
      matchFields: [{ key: 'metadata.name', operator: 'In', values: [...sel.explicitNodes].sort() }],
    });
  terms.push({
    matchExpressions: [
      { key: HOST_ID_LABEL, operator: 'Exists' },
      { key: KUBELETS_PER_HOST_LABEL, operator: 'Exists' },
    ],
  });
  return terms;
}

export const selectionDigest = (sel: Selection) => JSON.stringify(nodeSelectorTerms(sel));

export function balloonDaemonSet(sel: Selection, image = DEFAULT_BALLOON_IMAGE) {
  const labels = { ...APP, ...MANAGED_BY, [BALLOON_LABEL]: 'true' };
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: {
      name: BALLOON_NAME,
      namespace: BALLOON_NAMESPACE,
      labels: { ...APP, ...MANAGED_BY },
      annotations: { [SELECTION_ANNOTATION]: selectionDigest(sel) },
    },
    spec: {
      selector: { matchLabels: { ...APP } },
      // OnDelete: a new selection or image must not recreate every balloon at the floor size at once.
      updateStrategy: { type: 'OnDelete' },
      template: {
        metadata: { labels },
        spec: {
          priorityClassName: PRIORITY_CLASS,
          tolerations: [{ operator: 'Exists' }],
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: nodeSelectorTerms(sel) },
            },
          },
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          terminationGracePeriodSeconds: 0,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 65535,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers: [
            {
              name: BALLOON_CONTAINER,
              image,
              resources: { requests: quantitiesOf(BALLOON_FLOOR) },
              resizePolicy: [
                { resourceName: 'cpu', restartPolicy: 'NotRequired' },
                { resourceName: 'memory', restartPolicy: 'NotRequired' },
              ],
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ['ALL'] },
              },
            },
          ],
        },
      },
    },
  };
}
