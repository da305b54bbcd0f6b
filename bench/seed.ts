/**
 * Stored history for the benchmark: 8 days of samples every 30 minutes for every scope (the usage the
 * simulator reports for each node's pod: its per-node factor, a daily cycle, noise), folded into a
 * base through the very code the worker uses (applyEntry, packBase, the store), so the measured cycle
 * reads realistic states. The base is dated two hours back, so the measured cycle has to fold.
 */

import { nodeIndexOfName } from '../local/sim/nodes.js';
import { type ContainerLoad, containerLoad, containerUsage, nodeFactor } from '../local/sim/workload.js';
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
import { daemonSets, NODES, SEED_DAYS, SEED_STEP_MINUTES } from './spec.js';

const DAY = 86_400_000;

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619) >>> 0;
  return h;
}

/**
 * Each eligible node's container loads, as the simulator computes them for the DaemonSet's pod on that
 * node (the spec's load profile, its per-node factor by the node's index): the seeded history is the
 * very usage metrics.k8s.io reports, so that the measured cycles' samples continue it. A history from
 * another model would move every node's targets at each fold for hours, as no converged cluster does.
 */
function loadsOf(
  ds: string,
  target: NodeScopeTarget,
  eligible: readonly string[],
): Map<string, ContainerLoad[]> {
  const spec = daemonSets().find((d) => `${d.namespace}/${d.name}` === ds);
  if (!spec?.load) throw new Error(`seed: no load profile in bench/spec.ts for DaemonSet ${ds}`);
  const profile = spec.load;
  return new Map(
    eligible.map((node) => {
      const index = nodeIndexOfName(node);
      if (index === undefined) throw new Error(`seed: ${node} is not a simulated node's name`);
      const factor = nodeFactor(profile, index, node, NODES, ds);
      return [node, target.containers.map((c) => containerLoad(profile, c.name, {}, factor))];
    }),
  );
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
    const usage = loadsOf(ds, target, eligible);
    const start = baseAt - SEED_DAYS * DAY;
    for (let t = start; t < baseAt; t += SEED_STEP_MINUTES * 60_000) {
      const entry: LogEntry = { at: t, gen: 0, containers, samples: [], ooms: [] };
      for (const node of eligible) {
        const at = t - (hash(`${node}/${t}`) % 15_000);
        const u = (usage.get(node) as ContainerLoad[]).map((l, i) =>
          containerUsage(l, {}, at, 0, hash(`${ds}/${node}/${i}`)),
        );
        entry.samples.push({
          node,
          t: Math.floor(at / 1000) * 1000,
          cpu: u.map((x) => Math.max(1, Math.round(x.cpuNanos / 1e6))),
          memory: u.map((x) => x.memoryBytes),
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
