/**
 * Moving history to and from upstream VPA: the stored states as VerticalPodAutoscalerCheckpoint objects
 * (one per node and container, `spec.scopeValue` = the node, named as AEP-10031 names scoped
 * checkpoints; and one per container without scope, the DaemonSet-wide merge that upstream's default
 * scope keeps), and checkpoints loaded back as the starting state of nodes that have none yet.
 */

import type { EpochMillis } from '../kernel/units.js';
import {
  checkpointObject,
  fromCheckpoint,
  toCheckpoint,
  type VerticalPodAutoscalerCheckpoint,
} from '../recommendation/index.js';
import { materialize } from './engine.js';
import { type DsModel, type NodeRecord, newNodeRecord } from './model.js';
import { DEFAULT_SETTINGS } from './settings.js';
import { type LoadedDs, loadDs, packBase } from './state.js';
import { type DsHead, dsKeyOf, type NodeScopeStore } from './store.js';

/** The time the stored states are as of: the last stored cycle, else the base. */
function asOf(head: DsHead, cycles: string[]): number {
  const last = cycles[cycles.length - 1];
  const t = last ? Date.parse(last) : Number.NaN;
  return Number.isFinite(t) ? Math.max(t, head.baseAt) : head.baseAt;
}

export async function exportCheckpoints(
  store: NodeScopeStore,
  cluster: string,
  namespace: string,
  name: string,
  opts: { node?: string } = {},
): Promise<VerticalPodAutoscalerCheckpoint[] | undefined> {
  const ds = dsKeyOf(namespace, name);
  const head = await store.getHead(cluster, ds);
  if (!head) return undefined;
  const loaded = await loadDs(store, head, cluster, ds, head.containers);
  const now = asOf(head, loaded.logCycles) as EpochMillis;
  const out: VerticalPodAutoscalerCheckpoint[] = [];
  const nodes = [...loaded.model.nodes.keys()].sort();
  for (const node of nodes) {
    if (opts.node && node !== opts.node) continue;
    const rec = materialize(loaded.model.nodes.get(node) as NodeRecord);
    head.containers.forEach((c, j) => {
      const s = rec.states[j];
      if (s) out.push(checkpointObject(head.vpa.namespace, head.vpa.name, c, toCheckpoint(s, now), node));
    });
  }
  if (!opts.node)
    head.containers.forEach((c, j) => {
      const states = nodes.flatMap((n) => {
        const s = loaded.model.nodes.get(n)?.states[j];
        return s ? [s] : [];
      });
      if (states.length > 0)
        out.push(checkpointObject(head.vpa.namespace, head.vpa.name, c, toCheckpoint(states, now)));
    });
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
): Promise<{ imported: number; skipped: number; reasons: SkippedCheckpoint[] } | undefined> {
  const ds = dsKeyOf(namespace, name);
  const head = await store.getHead(cluster, ds);
  if (!head) return undefined;
  const loaded = await loadDs(store, head, cluster, ds, head.containers);
  const counts = seedStates(loaded.model, head, checkpoints, now, placement);
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
): { imported: number; skipped: number; reasons: SkippedCheckpoint[] } {
  let imported = 0;
  const reasons: SkippedCheckpoint[] = [];
  for (const cp of checkpoints) {
    const node = cp.spec.scopeValue;
    const j = head.containers.indexOf(cp.spec.containerName);
    const why =
      !node || node === '__empty__'
        ? 'not node-scoped (no spec.scopeValue)'
        : cp.spec.vpaObjectName !== head.vpa.name
          ? `of VPA ${cp.spec.vpaObjectName}, not ${head.vpa.name}`
          : j < 0
            ? `container ${cp.spec.containerName} is not one of ${head.containers.join(', ')}`
            : placement?.(node);
    const label = cp.metadata?.name ?? `${cp.spec.containerName}@${node ?? ''}`;
    if (why || !node) {
      reasons.push({ checkpoint: label, reason: why ?? 'no node' });
      continue;
    }
    let rec = model.nodes.get(node);
    if (!rec) {
      rec = newNodeRecord(node, head.containers.length);
      model.nodes.set(node, rec);
    }
    materialize(rec);
    if (rec.states[j]) {
      reasons.push({
        checkpoint: label,
        reason: `node ${node} has its own history of ${cp.spec.containerName}`,
      });
      continue;
    }
    rec.states[j] = fromCheckpoint(cp.status, now as EpochMillis);
    imported++;
  }
  return { imported, skipped: reasons.length, reasons };
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
