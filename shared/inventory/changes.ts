/**
 * What an inventory changed: the fields of a cluster's status that differ between two inventories, for
 * `fleetscope cluster refresh`. Pure.
 */
import type { ClusterStatus } from '../fleet/cluster.js';

export interface StatusChange {
  field: 'reachable' | 'serverVersion' | 'kubeSystemUid' | 'nodeCount' | 'metricsApi' | 'error';
  /** null: absent (no earlier inventory, or the field was not known). */
  from: string | number | boolean | null;
  to: string | number | boolean | null;
}

const FIELDS: StatusChange['field'][] = [
  'reachable',
  'serverVersion',
  'kubeSystemUid',
  'nodeCount',
  'metricsApi',
  'error',
];

/** The fields that differ (every known field when there was no earlier inventory). */
export function statusChanges(before: ClusterStatus | undefined, after: ClusterStatus): StatusChange[] {
  return FIELDS.flatMap((field) => {
    const from = before?.[field] ?? null;
    const to = after[field] ?? null;
    if (from === to || (before === undefined && to === null)) return [];
    return [{ field, from, to }];
  });
}

const LABELS: Record<StatusChange['field'], string> = {
  reachable: 'reachable',
  serverVersion: 'version',
  kubeSystemUid: 'kube-system UID',
  nodeCount: 'nodes',
  metricsApi: 'metrics API',
  error: 'error',
};

/** "nodes 3 -> 4, metrics API available -> absent", or "first inventory: ..." without an earlier one. */
export function describeChanges(changes: StatusChange[], first: boolean): string {
  const show = (v: StatusChange['from']) =>
    v === null ? 'none' : v === true ? 'yes' : v === false ? 'no' : String(v);
  if (first) return `first inventory: ${changes.map((c) => `${LABELS[c.field]} ${show(c.to)}`).join(', ')}`;
  if (changes.length === 0) return 'unchanged';
  return changes.map((c) => `${LABELS[c.field]} ${show(c.from)} -> ${show(c.to)}`).join(', ');
}
