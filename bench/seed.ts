/**
 * Stored history for the benchmark: 8 days of samples every 30 minutes for every scope (each node's
 * load its own: a per-node factor, a daily cycle, noise), folded into a base through the very code the
 * worker uses (applyEntry, packBase, the store), so the measured cycle reads realistic states. The base
 * is dated two hours back, so the measured cycle has to fold.
 */

import { ClusterSnapshot } from '../shared/cycle/snapshot.js';
import type { NodeFacts } from '../shared/cycle/views.js';
import type { ClusterClient } from '../shared/k8s/client.js';
import { RawReader } from '../shared/k8s/raw-reader.js';
import { newBaseId } from '../shared/nodescope/base-cache.js';
import { listDaemonSets, listVpas } from '../shared/nodescope/collect.js';
import { headOfTarget } from '../shared/nodescope/cycle.js';
import { placementProblem } from '../shared/nodescope/eligibility.js';
import { applyEntry, nodeRecommendation, recommendDsWide } from '../shared/nodescope/engine.js';
import type { DsModel, LogEntry } from '../shared/nodescope/model.js';
import { DEFAULT_SETTINGS } from '../shared/nodescope/settings.js';
import { packBase } from '../shared/nodescope/state.js';
import { dsKeyOf, type NodeScopeStore } from '../shared/nodescope/store.js';
import { type NodeScopeTarget, resolveTargets } from '../shared/nodescope/targets.js';
import { SEED_DAYS, SEED_STEP_MINUTES } from './spec.js';

const DAY = 86_400_000;

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619) >>> 0;
  return h;
}

function rng(seed: number) {
  let x = seed || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

export async function seedStates(
  store: NodeScopeStore,
  cluster: string,
  targets: NodeScopeTarget[],
  nodes: NodeFacts[],
  now: number,
): Promise<{ scopes: number; chunks: number; bytes: number }> {
  let scopes = 0;
  let chunks = 0;
  let bytes = 0;
  const baseAt = now - 2 * 3_600_000;
  for (const target of targets) {
    const ds = dsKeyOf(target.ds.namespace, target.ds.name);
    const eligible = nodes.filter((n) => !placementProblem(target.placement, n)).map((n) => n.name);
    const containers = target.containers.map((c) => c.name);
    const model: DsModel = { containers, nodes: new Map() };
    const factor = new Map(eligible.map((n) => [n, 0.25 * 16 ** ((hash(`${ds}/${n}`) % 1000) / 1000)]));
    const r = rng(hash(ds));
    const start = baseAt - SEED_DAYS * DAY;
    for (let t = start; t < baseAt; t += SEED_STEP_MINUTES * 60_000) {
      const hour = (t % DAY) / 3_600_000;
      const daily = 1 + 0.25 * Math.cos((2 * Math.PI * (hour - 14)) / 24);
      const entry: LogEntry = { at: t, gen: 0, containers, samples: [], ooms: [] };
      for (const node of eligible) {
        const f = factor.get(node) as number;
        entry.samples.push({
          node,
          t: Math.floor((t - r() * 15_000) / 1000) * 1000,
          cpu: target.containers.map((c) =>
            Math.max(1, Math.round((c.requests.cpu ?? 50) * 0.5 * f * daily * (1 + 0.1 * (r() * 2 - 1)))),
          ),
          memory: target.containers.map(
            (c) =>
              Math.floor(((c.requests.memory ?? 64 * 2 ** 20) * 0.6 * f * (1 + 0.05 * r())) / 4096) * 4096,
          ),
        });
      }
      applyEntry(model, entry);
    }
    const dsWide = recommendDsWide(target, model);
    let perNodeCpu = 0;
    let perNodeMemory = 0;
    for (const node of eligible) {
      const rec = model.nodes.get(node);
      if (!rec) continue;
      rec.rec = nodeRecommendation(target, rec, { dsWide });
      for (const c of Object.values(rec.rec?.containers ?? {})) {
        perNodeCpu += c.target.cpu ?? 0;
        perNodeMemory += c.target.memory ?? 0;
      }
    }
    const packed = packBase(model, DEFAULT_SETTINGS.chunkRawBytes);
    for (let k = 0; k < packed.chunks.length; k++) {
      const chunk = packed.chunks[k] as Uint8Array;
      await store.putChunk(cluster, ds, 1, k, chunk, now);
      bytes += chunk.length;
    }
    chunks += packed.chunks.length;
    let ownScopes = 0;
    for (const rec of model.nodes.values()) for (const s of rec.states) if (s) ownScopes++;
    scopes += ownScopes;
    const wide = Object.values(dsWide).reduce(
      (a, c) => ({ cpu: a.cpu + (c.target.cpu ?? 0), memory: a.memory + (c.target.memory ?? 0) }),
      { cpu: 0, memory: 0 },
    );
    await store.putHead(
      {
        ...headOfTarget(cluster, target),
        gen: 1,
        chunks: packed.chunks.length,
        baseAt,
        foldedThrough: new Date(baseAt).toISOString(),
        dsWide,
        stats: {
          nodes: model.nodes.size,
          eligibleNodes: eligible.length,
          fallbackNodes: 0,
          scopes: ownScopes,
          perNodeCpu,
          perNodeMemory,
          dsWideCpu: wide.cpu * eligible.length,
          dsWideMemory: wide.memory * eligible.length,
          lastSampleAt: baseAt,
        },
        baseId: newBaseId(),
        version: 1,
      },
      0,
    );
  }
  return { scopes, chunks, bytes };
}

/**
 * The benchmark cluster's node-scoped targets and nodes read as the cycle reads them, then their
 * history seeded (seedStates) as of the simulator's clock; the targets are returned for the caller.
 */
export async function seedCluster(
  client: ClusterClient,
  store: NodeScopeStore,
  cluster: string,
  now: number,
): Promise<{ targets: NodeScopeTarget[]; scopes: number; chunks: number; bytes: number }> {
  const reader = new RawReader(client);
  const { targets } = resolveTargets(await listVpas(reader, 1000), await listDaemonSets(reader, 1000));
  const nodes = await new ClusterSnapshot(reader, { pageSize: 1000 }).nodes();
  return { targets, ...(await seedStates(store, cluster, targets, nodes, now)) };
}
