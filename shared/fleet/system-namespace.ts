/**
 * `fleetscope-system` removed when a cluster is deregistered, only if fleetscope created it (its label
 * app.kubernetes.io/managed-by=fleetscope) and nothing in it is anyone else's: every namespaced kind
 * the cluster serves is listed there (discovery), and an object counts as fleetscope's when it carries
 * that label or a feature's ownership label, is one the namespace is given by Kubernetes itself (the
 * `default` ServiceAccount, the CA ConfigMaps, Events), or is controlled by another
 * object (a pod of fleetscope's DaemonSet: its owner is judged). A kind that may not be listed (RBAC)
 * keeps the namespace: what cannot be seen is not deleted. Judged before the owner Lease is released and
 * deleted after it (cli/commands/cluster-deregister.ts), the delete carrying the namespace's uid as read.
 */
import type { ClusterClient } from '../k8s/client.js';
import { ClusterAccessError } from '../k8s/errors.js';
import { RawReader } from '../k8s/raw-reader.js';
import { OWNER_LEASE } from './ownership.js';

const NAMESPACE = OWNER_LEASE.namespace;
const MANAGED_BY = 'app.kubernetes.io/managed-by';
const FEATURE_OWNER = 'features.fleetscope.io/owner';
/**
 * What Kubernetes puts in every namespace by itself: the `default` ServiceAccount, and the CA bundles
 * kube-controller-manager's publishers write (the real 1.36 one writes both ConfigMaps).
 */
const GIVEN = new Set([
  'ServiceAccount/default',
  'ConfigMap/kube-root-ca.crt',
  'ConfigMap/openshift-service-ca.crt',
]);
const RECORDS = new Set(['events', 'events.events.k8s.io']);

interface Meta {
  name?: string;
  uid?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  ownerReferences?: unknown[];
  deletionTimestamp?: string;
}
interface Item {
  kind?: string;
  metadata?: Meta;
}
interface ResourceList {
  groupVersion: string;
  resources: { name: string; kind: string; namespaced: boolean; verbs?: string[] }[];
}

const is = (err: unknown, status: number) => err instanceof ClusterAccessError && err.status === status;

/** Whether an object in the namespace is fleetscope's (or Kubernetes' own), and so goes with it. */
export function isFleetscopes(kind: string, o: Item): boolean {
  const labels = o.metadata?.labels ?? {};
  return (
    labels[MANAGED_BY] === 'fleetscope' ||
    FEATURE_OWNER in labels ||
    GIVEN.has(`${kind}/${o.metadata?.name}`) ||
    (o.metadata?.ownerReferences?.length ?? 0) > 0
  );
}

export type NamespaceVerdict =
  | { kind: 'absent' }
  | { kind: 'kept'; why: string }
  | { kind: 'removable'; uid: string };

/** Whether fleetscope-system may go: absent, kept (why), or removable (its uid, for the delete). */
export async function judgeSystemNamespace(client: ClusterClient): Promise<NamespaceVerdict> {
  const raw = new RawReader(client);
  const ns = await getOrUndefined<Item>(raw, 'get namespace', `/api/v1/namespaces/${NAMESPACE}`);
  if (!ns) return { kind: 'absent' };
  if (ns.metadata?.deletionTimestamp) return { kind: 'removable', uid: String(ns.metadata.uid) };
  if (ns.metadata?.labels?.[MANAGED_BY] !== 'fleetscope')
    return { kind: 'kept', why: `${NAMESPACE} was not created by fleetscope (no ${MANAGED_BY}=fleetscope)` };
  const foreign: string[] = [];
  const unseen: string[] = [];
  for (const list of await namespacedLists(raw)) {
    for (const r of list.resources) {
      // Objects a namespace's deletion would delete: stored ones (metrics.k8s.io's are not).
      const stored = r.verbs?.includes('list') && r.verbs.includes('delete');
      if (!r.namespaced || r.name.includes('/') || !stored) continue;
      const group = list.groupVersion.includes('/') ? list.groupVersion.split('/')[0] : '';
      const plural = group ? `${r.name}.${group}` : r.name;
      if (RECORDS.has(plural)) continue;
      const base = list.groupVersion === 'v1' ? '/api/v1' : `/apis/${list.groupVersion}`;
      try {
        const items = await raw.get<{ items?: Item[] }>(
          `list ${plural} in ${NAMESPACE}`,
          `${base}/namespaces/${NAMESPACE}/${r.name}`,
          { limit: 500 },
          { expected: [403, 404, 405] },
        );
        for (const o of items.items ?? [])
          if (!isFleetscopes(r.kind, o)) foreign.push(`${plural}/${o.metadata?.name}`);
      } catch (err) {
        if (is(err, 403)) unseen.push(plural);
        else if (!is(err, 404) && !is(err, 405)) throw err;
      }
    }
  }
  if (foreign.length)
    return {
      kind: 'kept',
      why: `${NAMESPACE} holds objects that are not fleetscope's: ${foreign.slice(0, 5).join(', ')}${foreign.length > 5 ? ` and ${foreign.length - 5} more` : ''}`,
    };
  if (unseen.length)
    return {
      kind: 'kept',
      why: `${NAMESPACE} could not be checked for others' objects: listing ${unseen.slice(0, 5).join(', ')}${unseen.length > 5 ? ' and more' : ''} is not allowed`,
    };
  return { kind: 'removable', uid: String(ns.metadata?.uid) };
}

/** Deletes the namespace judged removable, if it is still that one (its uid). */
export async function deleteSystemNamespace(client: ClusterClient, uid: string): Promise<boolean> {
  const raw = new RawReader(client);
  try {
    await raw.send(
      `delete namespace ${NAMESPACE}`,
      'DELETE',
      `/api/v1/namespaces/${NAMESPACE}`,
      { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid } },
      'application/json',
      { expected: [404, 409] },
    );
    return true;
  } catch (err) {
    if (is(err, 404) || is(err, 409)) return false;
    throw err;
  }
}

async function getOrUndefined<T>(raw: RawReader, op: string, path: string): Promise<T | undefined> {
  try {
    return await raw.get<T>(op, path, {}, { expected: [404] });
  } catch (err) {
    if (is(err, 404)) return undefined;
    throw err;
  }
}

/** The resource lists of the core group and of every group's preferred version. */
async function namespacedLists(raw: RawReader): Promise<ResourceList[]> {
  const core = await raw.get<ResourceList>('discover v1', '/api/v1');
  const groups = await raw.get<{ groups: { preferredVersion?: { groupVersion: string } }[] }>(
    'discover groups',
    '/apis',
  );
  const lists = [core];
  for (const g of groups.groups) {
    const gv = g.preferredVersion?.groupVersion;
    if (!gv) continue;
    const l = await getOrUndefined<ResourceList>(raw, `discover ${gv}`, `/apis/${gv}`);
    if (l) lists.push(l);
  }
  return lists;
}
