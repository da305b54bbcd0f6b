/**
 * Storage, the cycle's state phase: each DaemonSet either appends this cycle's samples as a log entry,
 * or folds: rewrites its base (every state, GC'd, with the recommendations) as a new generation of
 * chunks and moves the head to it with one conditional write. Folds are spread over the fold period
 * (each DaemonSet at its own phase) and capped per cycle; states of DaemonSets no longer targeted expire
 * as upstream's do. See docs/nodescope.md, "Storage, and why it costs what it costs".
 */
import { newBaseId } from './base-cache.js';
import { compress, encodeLog } from './codec.js';
import type { CycleRun } from './cycle-run.js';
import { collectGarbage } from './engine.js';
import { groupsToHead } from './groups.js';
import { type LogEntry, newNodeRecord } from './model.js';
import { countScopes, type DsRecommendations } from './recommend.js';
import type { NodeScopeSettings } from './settings.js';
import { baseKey, decodeBase, type LoadedDs, packBase } from './state.js';
import { type DsHead, dsKeyOf, type NodeScopeStore, VersionConflict } from './store.js';
import type { NodeScopeTarget } from './targets.js';

const DAY = 86_400_000;
/** Upstream's state expiry: memoryAggregationInterval × count. */
const STATE_EXPIRY_MS = 8 * DAY;

function foldPhase(ds: string, period: number): number {
  let h = 2166136261;
  for (let i = 0; i < ds.length; i++) h = Math.imul(h ^ ds.charCodeAt(i), 16777619) >>> 0;
  return h % Math.max(1, period);
}

/** Whether a fold is due: each DaemonSet folds once per period, at its own phase, so folds spread out. */
export function foldDue(
  head: DsHead | undefined,
  ds: string,
  digest: string,
  now: number,
  period: number,
): boolean {
  if (!head || head.gen === 0) return true;
  if (head.digest !== digest) return true;
  if (now - head.baseAt >= period) return true;
  const phase = foldPhase(ds, period);
  return Math.floor((now - phase) / period) > Math.floor((head.baseAt - phase) / period);
}

export async function headsByDs(store: NodeScopeStore, cluster: string): Promise<Map<string, DsHead>> {
  const heads = new Map<string, DsHead>();
  for (const h of await store.listHeads(cluster)) heads.set(dsKeyOf(h.namespace, h.name), h);
  return heads;
}

/**
 * Which DaemonSets fold this cycle: those due, the longest-waiting first, at most maxFoldsPerCycle of
 * those that have a base (a first base is cheap). The others append a log entry.
 */
export function chooseFolds(
  targets: readonly NodeScopeTarget[],
  heads: ReadonlyMap<string, DsHead>,
  now: number,
  settings: NodeScopeSettings,
): Set<string> {
  const folds = new Set<string>();
  const due: { ds: string; baseAt: number }[] = [];
  for (const t of targets) {
    const ds = dsKeyOf(t.ds.namespace, t.ds.name);
    const head = heads.get(ds);
    if (!foldDue(head, ds, t.digest, now, settings.foldEveryMs)) continue;
    if (!head || head.gen === 0) folds.add(ds);
    else due.push({ ds, baseAt: head.baseAt });
  }
  due.sort((a, b) => a.baseAt - b.baseAt || (a.ds < b.ds ? -1 : 1));
  // Enough to fold each DaemonSet once per fold period, never fewer than maxFoldsPerCycle allows.
  const cyclesPerFold = Math.max(1, settings.foldEveryMs / (settings.periodMinutes * 60_000));
  const cap = Math.max(settings.maxFoldsPerCycle, Math.ceil(targets.length / cyclesPerFold));
  for (const d of due.slice(0, cap)) folds.add(d.ds);
  return folds;
}

/** This cycle's entry as a log item (a redelivered cycle finds its key taken and writes nothing). */
export async function appendLog(
  run: CycleRun,
  target: NodeScopeTarget,
  head: DsHead | undefined,
  entry: LogEntry,
  baseOrder: readonly string[],
): Promise<number> {
  if (!head || run.ctx.cycleKey <= head.foldedThrough) return 0;
  if (entry.samples.length === 0 && entry.ooms.length === 0) return 0;
  const body = compress(encodeLog(entry, baseOrder));
  const ds = dsKeyOf(target.ds.namespace, target.ds.name);
  return (await run.store.putLog(run.cluster, ds, run.ctx.cycleKey, body, run.now)) ? body.length : 0;
}

/**
 * A fold: the states (this cycle applied, GC'd) and recommendations as a new generation, then the head
 * moved to it. A crash or a racing fold leaves the old base or the new one, never a mix.
 */
export async function writeFold(
  run: CycleRun,
  target: NodeScopeTarget,
  head: DsHead | undefined,
  loaded: LoadedDs,
  recs: DsRecommendations,
  stats: DsHead['stats'],
  live: { podNodes: ReadonlySet<string>; eligible: ReadonlySet<string> },
): Promise<{ folded: boolean; baseBytes: number }> {
  const { model } = loaded;
  collectGarbage(model, run.now, live.podNodes, live.eligible);
  for (const node of live.eligible)
    if (!model.nodes.has(node)) model.nodes.set(node, newNodeRecord(node, target.containers.length));
  for (const [node, rec] of model.nodes) {
    rec.rec = recs.recs.get(node);
    const value = recs.values.get(node);
    if (value !== undefined) rec.group = value;
    else delete rec.group;
  }
  const { chunks, bodies } = packBase(model, run.settings.chunkRawBytes);
  const ds = dsKeyOf(target.ds.namespace, target.ds.name);
  const gen = (head?.gen ?? 0) + 1;
  const { written, bytes } = await putChunks(run, ds, gen, chunks);
  if (written < chunks.length) {
    await run.store.deleteChunks(run.cluster, ds, gen, written);
    return { folded: false, baseBytes: bytes };
  }
  const newHead: DsHead = {
    ...headOfTarget(run.cluster, target),
    gen,
    chunks: chunks.length,
    baseAt: run.now,
    foldedThrough:
      run.ctx.cycleKey > (head?.foldedThrough ?? '') ? run.ctx.cycleKey : (head?.foldedThrough as string),
    dsWide: recs.dsWide,
    ...(recs.groups.size > 0 ? { groups: groupsToHead(recs.groups) } : {}),
    stats: { ...stats, nodes: model.nodes.size, scopes: countScopes(model) },
    ...(head?.statusDigest ? { statusDigest: head.statusDigest } : {}),
    baseId: newBaseId(),
    version: (head?.version ?? 0) + 1,
  };
  const folded = await moveHead(run, ds, head, newHead, loaded.logCycles, written);
  // The next cycle's base is this one: kept as it will be read (undecoded states), not read back.
  if (folded) {
    // As Buffers, as inflate gives them when read back: the very same records either way.
    const asRead = bodies.map((b) => Buffer.from(b.buffer, b.byteOffset, b.byteLength));
    const base = decodeBase(model.containers, asRead);
    run.store.bases.set(baseKey(run.cluster, ds), newHead, base.decoded, base.bytes, true);
  }
  return { folded, baseBytes: bytes };
}

/** Writes the chunks in order; stops at the first that exists already (another fold is writing). */
async function putChunks(
  run: CycleRun,
  ds: string,
  gen: number,
  chunks: readonly Uint8Array[],
): Promise<{ written: number; bytes: number }> {
  let written = 0;
  let bytes = 0;
  for (let k = 0; k < chunks.length; k++) {
    const chunk = chunks[k] as Uint8Array;
    if (!(await run.store.putChunk(run.cluster, ds, gen, k, chunk, run.now))) break;
    written++;
    bytes += chunk.length;
  }
  return { written, bytes };
}

/** The conditional head write; the winner removes the old generation and the replayed log. */
async function moveHead(
  run: CycleRun,
  ds: string,
  head: DsHead | undefined,
  newHead: DsHead,
  replayed: readonly string[],
  written: number,
): Promise<boolean> {
  const { store, cluster } = run;
  try {
    await store.putHead(newHead, head?.version ?? 0);
  } catch (err) {
    if (!(err instanceof VersionConflict)) throw err;
    run.ctx.logger?.warn('another invocation folded this DaemonSet first; keeping its base', {
      daemonSet: ds,
    });
    await store.deleteChunks(cluster, ds, newHead.gen, written);
    return false;
  }
  if (head && head.gen > 0) await store.deleteChunks(cluster, ds, head.gen, head.chunks);
  await store.deleteLogs(cluster, ds, replayed);
  return true;
}

/** States of DaemonSets no longer targeted expire as upstream's do: 8 days after their last sample. */
export async function expireUntargeted(
  run: CycleRun,
  heads: ReadonlyMap<string, DsHead>,
  targets: readonly NodeScopeTarget[],
): Promise<void> {
  const { store, cluster } = run;
  const targeted = new Set(targets.map((t) => dsKeyOf(t.ds.namespace, t.ds.name)));
  for (const head of heads.values()) {
    const ds = dsKeyOf(head.namespace, head.name);
    if (targeted.has(ds)) continue;
    const last = Math.max(head.stats?.lastSampleAt ?? 0, head.baseAt);
    if (run.now - last < STATE_EXPIRY_MS) continue;
    await store.deleteChunks(cluster, ds, head.gen, head.chunks);
    const logs = await store.listLogs(cluster, ds, '');
    await store.deleteLogs(
      cluster,
      ds,
      logs.map((l) => l.cycle),
    );
    await store.deleteApply(cluster, ds);
    await store.deleteHead(cluster, ds);
    run.ctx.logger?.info('expired the states of a DaemonSet no longer sized per node', { daemonSet: ds });
  }
}

/** A DaemonSet head's fields that come from its target: which DaemonSet and VPA, containers, policies. */
export function headOfTarget(cluster: string, target: NodeScopeTarget) {
  return {
    cluster,
    namespace: target.ds.namespace,
    name: target.ds.name,
    vpa: target.vpa,
    updateMode: target.updateMode,
    digest: target.digest,
    scope: target.scope,
    containers: target.containers.map((c) => c.name),
    template: target.containers,
    policies: target.policies,
  };
}
