/**
 * The one computed model of a node-scoped DaemonSet that every view reads (`recommendations list` and
 * `get`, the report, `npm start`'s summary): per node its target and what its pod requests today, the
 * DaemonSet-wide target, and the totals over the nodes. Pure: from getRecommendations' result alone.
 *
 * Requests today are what each node's pod requests now (recorded by the cycle from the pods); a node
 * whose pod was not seen yet counts at the template's requests, what its pod will start with.
 */
import { scopeValueLabel } from './groups.js';
import type { Amounts, ContainerRec, RecSource } from './model.js';
import type { DaemonSetRecommendations } from './query.js';
import type { DsHead } from './store.js';

/** CPU (millicores) and memory (bytes). */
export interface Pair {
  cpu: number;
  memory: number;
}

export const ZERO_PAIR: Pair = { cpu: 0, memory: 0 };
export const addPair = (a: Pair, b: Pair): Pair => ({ cpu: a.cpu + b.cpu, memory: a.memory + b.memory });
export const subPair = (a: Pair, b: Pair): Pair => ({ cpu: a.cpu - b.cpu, memory: a.memory - b.memory });
export const scalePair = (a: Pair, k: number): Pair => ({ cpu: a.cpu * k, memory: a.memory * k });

const amountSum = (as: Iterable<Amounts | undefined>): Pair => {
  let s = ZERO_PAIR;
  for (const a of as) s = addPair(s, { cpu: a?.cpu ?? 0, memory: a?.memory ?? 0 });
  return s;
};
const targetSum = (cs: Record<string, ContainerRec>): Pair =>
  amountSum(Object.values(cs).map((c) => c.target));

export interface NodeFigures {
  node: string;
  /** node: its own history; group: its group's merged history; fallback: the DaemonSet-wide one. */
  source: RecSource;
  /** source group: the group's scope value. */
  group?: string;
  /** source group: the group as people read it ("<key>=<value>", "no <key> label"), when the scope is known. */
  groupLabel?: string;
  /** Sum over the pod's containers. */
  target: Pair;
  /** What the node's pod requests now (sum over containers). */
  requests: Pair;
  /** pod: the pod as the last cycle saw it; template: no pod seen there yet. */
  requestsFrom: 'pod' | 'template';
}

/** One group of a label scope (AEP-10031): its scope value, as people read it, and its target. */
export interface GroupFigures {
  /** The scope value as published (`__absent__`, `""` included). */
  value: string;
  /** "<key>=<value>", `<key>=""` or "no <key> label". */
  label: string;
  /** Sum over the containers. */
  target: Pair;
  /** The nodes sized from it now. */
  nodes: number;
}

export interface DaemonSetFigures {
  /** A label scope's groups, by scope value (absent for per-node scopes). */
  groups?: GroupFigures[];
  /** The busiest node first. */
  nodes: NodeFigures[];
  /** What upstream VPA would give every pod (sum over containers). */
  dsWide: Pair;
  /** What the template requests (sum over containers). */
  template: Pair;
  /** Totals over the nodes: per-node targets, the DaemonSet-wide target on each, requests today. */
  perNodeTotal: Pair;
  dsWideTotal: Pair;
  requestsTotal: Pair;
  /** When these figures are as of (RFC 3339): the last cycle's time (live) or the fold's (stored). */
  asOf: string;
}

type FigureInputs = Pick<DaemonSetRecommendations, 'nodes' | 'dsWide' | 'requests' | 'podRequests' | 'asOf'> &
  Partial<Pick<DaemonSetRecommendations, 'scope' | 'groups'>>;

/** A label scope's groups in scope-value order, each with the nodes it sizes; none for per-node scopes. */
function groupFigures(recs: FigureInputs, nodes: readonly NodeFigures[]): GroupFigures[] | undefined {
  const { scope, groups } = recs;
  if (!scope || scope.perNode || !groups) return undefined;
  return Object.keys(groups)
    .sort()
    .map((value) => ({
      value,
      label: scopeValueLabel(scope.groupLabel, value),
      target: targetSum(groups[value] ?? {}),
      nodes: nodes.filter((n) => n.source === 'group' && n.group === value).length,
    }));
}

/** The figures of a DaemonSet, or of one with no recommendation yet (no nodes, its template's requests). */
export function daemonSetFiguresOf(head: DsHead, recs: FigureInputs | undefined): DaemonSetFigures {
  return daemonSetFigures(
    recs ?? {
      nodes: {},
      dsWide: {},
      requests: Object.fromEntries(head.template.map((c) => [c.name, c.requests])),
      podRequests: {},
      asOf: new Date(head.baseAt).toISOString(),
    },
  );
}

export function daemonSetFigures(recs: FigureInputs): DaemonSetFigures {
  const template = amountSum(Object.values(recs.requests));
  const nodes = Object.entries(recs.nodes)
    .map(([node, r]): NodeFigures => {
      const pod = recs.podRequests[node];
      return {
        node,
        source: r.source,
        ...(r.group !== undefined ? { group: r.group } : {}),
        ...(r.group !== undefined && recs.scope
          ? { groupLabel: scopeValueLabel(recs.scope.groupLabel, r.group) }
          : {}),
        target: targetSum(r.containers),
        requests: pod ? amountSum(Object.values(pod)) : template,
        requestsFrom: pod ? 'pod' : 'template',
      };
    })
    .sort((a, b) => b.target.cpu - a.target.cpu || a.node.localeCompare(b.node));
  const dsWide = targetSum(recs.dsWide);
  const sum = (pick: (n: NodeFigures) => Pair) => nodes.reduce((s, n) => addPair(s, pick(n)), ZERO_PAIR);
  const groups = groupFigures(recs, nodes);
  return {
    ...(groups ? { groups } : {}),
    nodes,
    dsWide,
    template,
    perNodeTotal: sum((n) => n.target),
    dsWideTotal: scalePair(dsWide, nodes.length),
    requestsTotal: sum((n) => n.requests),
    asOf: recs.asOf,
  };
}
