/**
 * Groups of nodes by the value of a node label (AEP-10031): the scope value of a node is its label's
 * value, `""` for a label with an empty value and `__absent__` for a node without the label, so
 * unlabelled nodes, presence-style labels and explicit values stay distinct groups. A group's
 * recommendation comes from the merged history of its nodes (their histograms merged, as upstream
 * merges the aggregates of the pods a scope value covers), never from averaging recommendations.
 *
 * Membership is the nodes' labels as the cycle reads them: a node's history counts in the group of its
 * current value, and a node gone from the cluster counts in no group (it still counts DaemonSet-wide).
 */
import type { NodeFacts } from '../cycle/views.js';
import { recommendMerged } from './engine.js';
import type { ContainerRec, DsModel } from './model.js';
import type { NodeScopeTarget } from './targets.js';

export const ABSENT = '__absent__';

/** At most this many groups per DaemonSet (each is kept in its head item, 400 KB at most). */
export const MAX_GROUPS = 500;

export type GroupRecs = Map<string, Record<string, ContainerRec>>;

export function scopeValueOf(labels: Readonly<Record<string, string>>, key: string): string {
  return Object.hasOwn(labels, key) ? (labels[key] as string) : ABSENT;
}

/** Each node's scope value of `key`, for the nodes the DaemonSet can run on. */
export function scopeValues(
  nodes: readonly NodeFacts[],
  eligible: ReadonlySet<string>,
  key: string,
): Map<string, string> {
  const out = new Map<string, string>();
  for (const n of nodes) if (eligible.has(n.name)) out.set(n.name, scopeValueOf(n.labels, key));
  return out;
}

/** The scope values the base does not hold (nodes new or relabelled since the fold): what a log entry keeps. */
export function valuesNewSinceFold(model: DsModel, values: ReadonlyMap<string, string>): [string, string][] {
  return [...values].filter(([node, v]) => model.nodes.get(node)?.group !== v);
}

/**
 * Each node's scope value as the last cycle read it, from storage alone: the fold's, then each stored
 * cycle's in order (a query has no nodes to read, and this is the membership the cycle grouped by).
 */
export function storedValues(
  model: DsModel,
  logs: readonly { groups?: readonly [string, string][] }[],
): Map<string, string> {
  const out = new Map<string, string>();
  for (const [n, r] of model.nodes) if (r.group !== undefined) out.set(n, r.group);
  for (const l of logs) for (const [n, v] of l.groups ?? []) out.set(n, v);
  return out;
}

/** The members of each group, by scope value. */
export function membersOf(values: ReadonlyMap<string, string>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [node, v] of values) {
    const list = out.get(v);
    if (list) list.push(node);
    else out.set(v, [node]);
  }
  return out;
}

/** Why a DaemonSet's nodes have too many values of the label to be grouped, if they do. */
export function tooManyGroups(label: string, members: ReadonlyMap<string, unknown>): string | undefined {
  if (members.size <= MAX_GROUPS) return undefined;
  return `${label} has ${members.size} values on the DaemonSet's nodes, more than ${MAX_GROUPS} groups: its nodes get the DaemonSet-wide recommendation (for one per node, use kubernetes.io/hostname)`;
}

/** Each group's recommendation from its members' merged history; groups without history are left out. */
export function recommendGroups(
  target: NodeScopeTarget,
  model: DsModel,
  members: ReadonlyMap<string, readonly string[]>,
): GroupRecs {
  const out: GroupRecs = new Map();
  for (const [value, nodes] of members) {
    const rec = recommendMerged(target, model, nodes);
    if (Object.keys(rec).length > 0) out.set(value, rec);
  }
  return out;
}

/** A head keeps its groups as one JSON string: a scope value may be "", which no item key may be. */
export function groupsToHead(groups: GroupRecs): string {
  return JSON.stringify([...groups].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export function groupsFromHead(head: { groups?: string } | undefined): GroupRecs {
  if (!head?.groups) return new Map();
  return new Map(JSON.parse(head.groups) as [string, Record<string, ContainerRec>][]);
}

/** How a scope sizes a node, in the order tried: what `recommendations get` prints. */
export function fallbackChain(scope: { key: string; perNode: boolean; groupLabel: string }): string[] {
  return scope.perNode
    ? ["the node's own history", `its ${scope.groupLabel} group's merged history`, 'DaemonSet-wide']
    : [`its ${scope.groupLabel} group's merged history`, 'DaemonSet-wide'];
}

/** A scope value as a person reads it: "" quoted, __absent__ said. */
export function scopeValueLabel(label: string, value: string): string {
  if (value === ABSENT) return `no ${label} label`;
  return `${label}=${value === '' ? '""' : value}`;
}
