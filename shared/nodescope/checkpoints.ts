/**
 * Moving history to and from upstream VPA: the stored states as VerticalPodAutoscalerCheckpoint objects
 * (one per node and container, `spec.scopeValue` = the node, named as AEP-10031 names scoped
 * checkpoints; and one per container without scope, the DaemonSet-wide merge that upstream's default
 * scope keeps), and checkpoints loaded back as the starting state of nodes that have none yet.
 *
 * By node-label group (AEP-10031's `spec.scope: <label key>`, `groups` below): an export merges the
 * states of each group's nodes into one checkpoint per group and container (`scopeValue` = the label's
 * value, `""` when empty, `__absent__` for nodes without it), as upstream's recommender keeps them; an
 * import shares a group's history evenly among the group's nodes the DaemonSet can run on, so that
 * merged again (the group's or the DaemonSet-wide recommendation) it is upstream's, and each node starts
 * at the group's target. A node with history of its own keeps it (its share is dropped).
 */

import type { EpochMillis } from '../kernel/units.js';
import {
  checkpointObject,
  fromCheckpoint,
  toCheckpoint,
  type VerticalPodAutoscalerCheckpoint,
  type VerticalPodAutoscalerCheckpointStatus,
} from '../recommendation/index.js';
import { newBaseId } from './base-cache.js';
import { materialize } from './engine.js';
import { type DsModel, type NodeRecord, newNodeRecord } from './model.js';
import { DEFAULT_SETTINGS } from './settings.js';
import { type LoadedDs, loadCurrent, packBase } from './state.js';
import { type DsHead, dsKeyOf, type NodeScopeStore } from './store.js';

/** The time the stored states are as of: the last stored cycle, else the base. */
function asOf(head: DsHead, cycles: string[]): number {
  const last = cycles[cycles.length - 1];
  const t = last ? Date.parse(last) : Number.NaN;
  return Number.isFinite(t) ? Math.max(t, head.baseAt) : head.baseAt;
}

/** AEP-10031's scope value for nodes without the label key. */
export const ABSENT_SCOPE_VALUE = '__absent__';

/** Node-label groups: the label key, and the nodes (the DaemonSet can run on) of each scope value. */
export interface LabelGroups {
  key: string;
  nodes: Map<string, string[]>;
}

/** The groups of `nodes` (name -> labels) by the value of `key`, as AEP-10031 names them. */
export function groupsBy(nodes: ReadonlyMap<string, Record<string, string>>, key: string): LabelGroups {
  const out = new Map<string, string[]>();
  for (const [node, labels] of [...nodes].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const value = labels[key] ?? ABSENT_SCOPE_VALUE;
    out.set(value, [...(out.get(value) ?? []), node]);
  }
  return { key, nodes: out };
}

/** A checkpoint's scope value as a group's (a checkpoint names the empty value `__empty__`). */
const groupValueOf = (scopeValue: string) => (scopeValue === '__empty__' ? '' : scopeValue);

export async function exportCheckpoints(
  store: NodeScopeStore,
  cluster: string,
  namespace: string,
  name: string,
  opts: { node?: string; groups?: LabelGroups } = {},
): Promise<VerticalPodAutoscalerCheckpoint[] | undefined> {
  const ds = dsKeyOf(namespace, name);
  const current = await loadCurrent(store, cluster, ds);
  if (!current) return undefined;
  const { head, loaded } = current;
  const now = asOf(head, loaded.logCycles) as EpochMillis;
  const out: VerticalPodAutoscalerCheckpoint[] = [];
  const nodes = [...loaded.model.nodes.keys()].sort();
  /** One checkpoint per container of the merged states of `of` (none where no node has one). */
  const merged = (of: readonly string[], scopeValue?: string) =>
    head.containers.forEach((c, j) => {
      const states = of.flatMap((n) => {
        const rec = loaded.model.nodes.get(n);
        const s = rec && materialize(rec).states[j];
        return s ? [s] : [];
      });
      if (states.length > 0)
        out.push(
          checkpointObject(head.vpa.namespace, head.vpa.name, c, toCheckpoint(states, now), scopeValue),
        );
    });
  if (opts.groups) for (const [value, members] of opts.groups.nodes) merged(members, value);
  else
    for (const node of nodes) {
      if (opts.node && node !== opts.node) continue;
      const rec = materialize(loaded.model.nodes.get(node) as NodeRecord);
      head.containers.forEach((c, j) => {
        const s = rec.states[j];
        if (s) out.push(checkpointObject(head.vpa.namespace, head.vpa.name, c, toCheckpoint(s, now), node));
      });
    }
  if (!opts.node) merged(nodes);
  return out;
}

/** A checkpoint not imported, and why. */
export interface SkippedCheckpoint {
  checkpoint: string;
  reason: string;
}

/**
 * Loads node-scoped checkpoints (spec.scopeValue = a node) as the starting state of nodes that have no
 * state of their own for that container (nodescope's own history always wins), and folds: the next
 * cycles continue from there. Skipped, each with its reason: checkpoints without a scope value, of
 * other VPAs or of unknown containers, and (given `placement`) of nodes that are not the cluster's or
 * that the DaemonSet cannot run on.
 */
export async function importCheckpoints(
  store: NodeScopeStore,
  cluster: string,
  namespace: string,
  name: string,
  checkpoints: readonly VerticalPodAutoscalerCheckpoint[],
  now: number,
  placement?: (node: string) => string | undefined,
  groups?: LabelGroups,
): Promise<{ imported: number; skipped: number; reasons: SkippedCheckpoint[] } | undefined> {
  const ds = dsKeyOf(namespace, name);
  const current = await loadCurrent(store, cluster, ds);
  if (!current) return undefined;
  const { head, loaded } = current;
  const counts = seedStates(loaded.model, head, checkpoints, now, placement, groups);
  if (counts.imported > 0) await foldImported(store, cluster, ds, head, loaded, now);
  return counts;
}

/** The checkpoints' states where the model has none. */
function seedStates(
  model: DsModel,
  head: DsHead,
  checkpoints: readonly VerticalPodAutoscalerCheckpoint[],
  now: number,
  placement?: (node: string) => string | undefined,
  groups?: LabelGroups,
): { imported: number; skipped: number; reasons: SkippedCheckpoint[] } {
  let imported = 0;
  const reasons: SkippedCheckpoint[] = [];
  for (const cp of checkpoints) {
    const label = cp.metadata?.name ?? `${cp.spec.containerName}@${cp.spec.scopeValue ?? ''}`;
    const j = head.containers.indexOf(cp.spec.containerName);
    const to = destinationsOf(cp, head, j, placement, groups);
    if (typeof to === 'string') {
      reasons.push({ checkpoint: label, reason: to });
      continue;
    }
    const status = to.share < 1 ? shareOf(cp.status, to.share) : cp.status;
    const kept: string[] = [];
    for (const node of to.nodes) {
      let rec = model.nodes.get(node);
      if (!rec) {
        rec = newNodeRecord(node, head.containers.length);
        model.nodes.set(node, rec);
      }
      materialize(rec);
      if (rec.states[j]) kept.push(node);
      else rec.states[j] = fromCheckpoint(status, now as EpochMillis);
    }
    if (kept.length < to.nodes.length) imported++;
    else
      reasons.push({
        checkpoint: label,
        reason:
          kept.length === 1
            ? `node ${kept[0]} has its own history of ${cp.spec.containerName}`
            : `every node of the group (${kept.join(', ')}) has its own history of ${cp.spec.containerName}`,
      });
  }
  return { imported, skipped: reasons.length, reasons };
}

/** The nodes a checkpoint seeds and the share of its history each takes, or why it seeds none. */
function destinationsOf(
  cp: VerticalPodAutoscalerCheckpoint,
  head: DsHead,
  j: number,
  placement?: (node: string) => string | undefined,
  groups?: LabelGroups,
): { nodes: string[]; share: number } | string {
  const value = cp.spec.scopeValue;
  if (value === undefined || (!groups && (value === '' || value === '__empty__')))
    return 'not node-scoped (no spec.scopeValue)';
  if (cp.spec.vpaObjectName !== head.vpa.name) return `of VPA ${cp.spec.vpaObjectName}, not ${head.vpa.name}`;
  if (j < 0) return `container ${cp.spec.containerName} is not one of ${head.containers.join(', ')}`;
  if (!groups) return placement?.(value) ?? { nodes: [value], share: 1 };
  const group = groupValueOf(value);
  const nodes = groups.nodes.get(group) ?? [];
  if (nodes.length === 0)
    return group === ABSENT_SCOPE_VALUE
      ? `every node the DaemonSet can run on has the label ${groups.key}`
      : `no node the DaemonSet can run on has ${groups.key}=${group}`;
  return { nodes, share: 1 / nodes.length };
}

/** A checkpoint's history scaled to a share: the same distribution (and target), fewer samples. */
function shareOf(
  s: VerticalPodAutoscalerCheckpointStatus,
  share: number,
): VerticalPodAutoscalerCheckpointStatus {
  const scaled = (h: VerticalPodAutoscalerCheckpointStatus['cpuHistogram']) =>
    h.totalWeight === undefined ? h : { ...h, totalWeight: h.totalWeight * share };
  return {
    ...s,
    cpuHistogram: scaled(s.cpuHistogram),
    memoryHistogram: scaled(s.memoryHistogram),
    ...(s.totalSamplesCount !== undefined
      ? { totalSamplesCount: Math.round(s.totalSamplesCount * share) }
      : {}),
  };
}

/** A new base with the imported states (and the replayed log), committed like a cycle's fold. */
async function foldImported(
  store: NodeScopeStore,
  cluster: string,
  ds: string,
  head: DsHead,
  loaded: LoadedDs,
  now: number,
): Promise<void> {
  for (const rec of loaded.model.nodes.values()) materialize(rec);
  const packed = packBase(loaded.model, DEFAULT_SETTINGS.chunkRawBytes);
  const gen = head.gen + 1;
  for (let k = 0; k < packed.chunks.length; k++)
    if (!(await store.putChunk(cluster, ds, gen, k, packed.chunks[k] as Uint8Array, now)))
      throw new Error(`another fold of ${ds} is in progress; try again`);
  const last = loaded.logCycles[loaded.logCycles.length - 1];
  try {
    await store.putHead(
      {
        ...head,
        gen,
        chunks: packed.chunks.length,
        foldedThrough: last && last > head.foldedThrough ? last : head.foldedThrough,
        baseId: newBaseId(),
        version: head.version + 1,
      },
      head.version,
    );
  } catch (err) {
    await store.deleteChunks(cluster, ds, gen, packed.chunks.length);
    throw err;
  }
  if (head.gen > 0) await store.deleteChunks(cluster, ds, head.gen, head.chunks);
  await store.deleteLogs(cluster, ds, loaded.logCycles);
}
