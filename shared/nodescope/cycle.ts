/**
 * One nodescope cycle for one cluster: find the node-scoped targets, and for each DaemonSet load its
 * states (base + log), collect this cycle's samples and OOM kills, recommend per node and DaemonSet-wide,
 * store (a log entry, or a new base when a fold is due), then apply in place within the cycle's write
 * budget and make the recommendations visible in the cluster. Nothing is kept in memory between
 * invocations.
 */
import { ClusterSnapshot } from '../cycle/snapshot.js';
import type { NodeFacts, PodView } from '../cycle/views.js';
import type { ClusterClient } from '../k8s/client.js';
import { ClusterAccessError } from '../k8s/errors.js';
import { RawReader } from '../k8s/raw-reader.js';
import type { Detail } from '../platform/events.js';
import { type ResizeRecord, type ResizeReport, Resizer } from '../resize/index.js';
import { byPriority, decideUpdate } from './apply.js';
import { compress, encodeLog, entryOf } from './codec.js';
import {
  type CrdState,
  listDaemonSetMetrics,
  listDaemonSetPods,
  listDaemonSets,
  listVpas,
  type MetricsState,
  memoryRequestOf,
  podLike,
  readCrd,
} from './collect.js';
import { placementProblem } from './eligibility.js';
import { applyEntry, collectGarbage, entryFor, nodeRecommendation, recommendDsWide } from './engine.js';
import {
  annotatePod,
  annotationStale,
  annotationValue,
  conditionMessage,
  currentCondition,
  patchVpaStatus,
  type StatusSummary,
} from './incluster.js';
import type { VpaObject } from './k8s-types.js';
import {
  type ContainerRec,
  type DsModel,
  type LogEntry,
  type NodeRec,
  newNodeRecord,
  type OomEvent,
} from './model.js';
import { rawResizeApi } from './resize-api.js';
import { DEFAULT_SETTINGS, type NodeScopeSettings } from './settings.js';
import { loadDs, packBase } from './state.js';
import { type ClusterRecord, type DsHead, dsKeyOf, type NodeScopeStore, VersionConflict } from './store.js';
import { type NodeScopeTarget, type RejectedTarget, resolveTargets } from './targets.js';

const DAY = 86_400_000;
/** Upstream's state expiry: memoryAggregationInterval × count. */
const STATE_EXPIRY_MS = 8 * DAY;
export const CONDITION_TYPE = 'RecommendationProvided';

export interface CycleLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
}

export interface CycleContext {
  cluster: string;
  cycleId: string;
  /** Sort key of this cycle's log entries: the schedule tick's time (ISO 8601), later for later cycles. */
  cycleKey: string;
  client: ClusterClient;
  store: NodeScopeStore;
  settings?: Partial<NodeScopeSettings>;
  /** The clock (default Date.now); the cycle's "now" is never earlier than what the cluster reports. */
  now?: () => number;
  /**
   * Keep every node's recommendation in the result (tests, tools). Off in the worker: a cluster's worth
   * of recommendation objects kept alive makes every later garbage collection of the cycle slower.
   */
  keepRecommendations?: boolean;
  logger?: CycleLogger;
  /**
   * The cycle's reads of nodes and pods, shared with other capabilities of the same invocation; built
   * here (pods per DaemonSet, not the whole cluster's) when absent.
   */
  snapshot?: ClusterSnapshot;
}

export interface DsOutcome {
  namespace: string;
  name: string;
  vpa: string;
  updateMode: string;
  metrics: MetricsState;
  /** Nodes with a running pod, nodes the DaemonSet can run on, (container, node) states kept. */
  pods: number;
  eligible: number;
  scopes: number;
  fallbackNodes: number;
  samples: number;
  ooms: number;
  folded: boolean;
  logBytes: number;
  baseBytes: number;
  dsWide: Record<string, ContainerRec>;
  recs: Map<string, NodeRec>;
  resizes: { requested: number; completed: number; refused: number; skipped: number };
  annotated: number;
  statusPatched: boolean;
  /** DynamoDB request units this DaemonSet's part of the cycle used; log entries read since the base. */
  readUnits: number;
  writeUnits: number;
  pendingLogs: number;
  error?: string;
}

export interface CycleResult {
  detail: Detail<'NodeScopeCycleCompleted'>;
  daemonSets: DsOutcome[];
  rejected: RejectedTarget[];
  /** Refused targets not reported before (publish an event for each). */
  newlyRejected: RejectedTarget[];
  resizeReports: { report: ResizeReport; owner: { kind: string; name: string } }[];
  reads: number;
  writes: number;
  requestsByOperation: Record<string, number>;
  /** CPU ms by phase (load: read and decode states; collect: lists and their JSON; ...). */
  phases: Record<string, number>;
}

/** CPU time per phase of the cycle (ms), for the benchmark's breakdown. */
export class Phases {
  readonly ms: Record<string, number> = {};
  private last = process.cpuUsage();
  mark(name: string): void {
    const now = process.cpuUsage();
    this.ms[name] = (this.ms[name] ?? 0) + (now.user - this.last.user + now.system - this.last.system) / 1000;
    this.last = now;
  }
}

class Budget {
  used = 0;
  constructor(readonly limit: number) {}
  get left(): number {
    return Math.max(0, this.limit - this.used);
  }
  take(n = 1): boolean {
    if (this.used + n > this.limit) return false;
    this.used += n;
    return true;
  }
}

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

export async function runCycle(ctx: CycleContext): Promise<CycleResult> {
  const settings: NodeScopeSettings = { ...DEFAULT_SETTINGS, ...ctx.settings };
  const clock = ctx.now ?? Date.now;
  const snapshot =
    ctx.snapshot ?? new ClusterSnapshot(new RawReader(ctx.client), { pageSize: settings.pageSize });
  const reader = snapshot.reader;
  const { store, cluster } = ctx;
  const errors: string[] = [];
  const phases = new Phases();
  const clusterRec = await store.getCluster(cluster);
  let now = clock();

  const crd: CrdState = await readCrd(reader);
  let vpas: VpaObject[] = [];
  let rejected: RejectedTarget[] = [];
  let targets: NodeScopeTarget[] = [];
  let nodes: NodeFacts[] = [];
  if (crd !== 'absent') {
    vpas = await listVpas(reader, settings.pageSize);
    const resolved = resolveTargets(
      vpas,
      targetsNeedDaemonSets(vpas) ? await listDaemonSets(reader, settings.pageSize) : [],
    );
    targets = resolved.targets;
    rejected = resolved.rejected;
    if (targets.length > 0) nodes = await snapshot.nodes();
  }
  phases.mark('collect');
  const vpaByKey = new Map(vpas.map((v) => [`${v.metadata?.namespace}/${v.metadata?.name}`, v]));

  const budget = new Budget(settings.writeBudget);
  const resizer = new Resizer(rawResizeApi(reader), { now: () => now, backoff: settings.backoff });
  if (clusterRec?.resizeUnsupportedUntil !== undefined && now < clusterRec.resizeUnsupportedUntil)
    resizer.unsupported = clusterRec.resizeUnsupported ?? 'the API server has no pods/resize subresource';
  const knownRejected = new Set((clusterRec?.rejected ?? []).map((r) => `${r.uid}#${r.reason}`));
  const newlyRejected = rejected.filter((r) => !knownRejected.has(`${r.uid}#${r.reason}`));
  for (const r of newlyRejected)
    ctx.logger?.warn('VerticalPodAutoscaler asks for node scope but cannot have it', {
      namespace: r.namespace,
      vpa: r.vpa,
      targetRef: r.targetRef,
      reason: r.reason,
    });
  // Say so on the VPA itself too (not in mode Off, which writes nothing).
  for (const r of rejected) {
    if (r.updateMode === 'Off') continue;
    const vpa = vpaByKey.get(`${r.namespace}/${r.vpa}`);
    const cond = currentCondition(vpa, CONDITION_TYPE);
    if (cond?.status === 'False' && cond.reason === 'NodeScopeRefused' && cond.message === r.reason) continue;
    if (!budget.take()) break;
    try {
      await patchVpaStatus(
        reader,
        { namespace: r.namespace, name: r.vpa },
        { type: CONDITION_TYPE, status: 'False', reason: 'NodeScopeRefused', message: r.reason },
        now,
        vpa,
      );
    } catch (err) {
      errors.push(`status of VPA ${r.namespace}/${r.vpa}: ${describe(err)}`);
    }
  }

  const outcomes: DsOutcome[] = [];
  const reports: CycleResult['resizeReports'] = [];
  let metricsApi: MetricsState | 'unknown' = targets.length > 0 ? 'available' : 'unknown';
  // Which DaemonSets fold (rewrite their base) this cycle: those due, the longest-waiting first, at most
  // maxFoldsPerCycle of those that have a base (a first base is cheap). The others append a log entry.
  const heads = new Map<string, DsHead>();
  for (const h of await store.listHeads(cluster)) heads.set(dsKeyOf(h.namespace, h.name), h);
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
  for (const target of targets) {
    const ds = dsKeyOf(target.ds.namespace, target.ds.name);
    try {
      const out = await dsCycle(
        ctx,
        settings,
        snapshot,
        target,
        heads.get(ds),
        folds.has(ds),
        nodes,
        vpaByKey.get(`${target.vpa.namespace}/${target.vpa.name}`),
        crd,
        budget,
        resizer,
        reports,
        () => now,
        (t) => {
          if (t > now) now = t;
        },
        phases,
      );
      outcomes.push(out);
      if (out.metrics !== 'available') metricsApi = out.metrics;
    } catch (err) {
      const message = `${dsKeyOf(target.ds.namespace, target.ds.name)}: ${describe(err)}`;
      errors.push(message);
      ctx.logger?.warn('node-scoped DaemonSet cycle failed', {
        daemonSet: dsKeyOf(target.ds.namespace, target.ds.name),
        error: describe(err),
      });
      // A cluster-wide failure (unreachable, credentials) ends the cycle; others let the next DaemonSet go on.
      if (
        err instanceof ClusterAccessError &&
        (err.kind === 'network' ||
          err.kind === 'tls' ||
          err.kind === 'credentials' ||
          err.status === 401 ||
          err.status === 403)
      )
        throw err;
    }
  }

  // States of DaemonSets no longer targeted expire as upstream's do: 8 days after their last sample.
  const targeted = new Set(targets.map((t) => dsKeyOf(t.ds.namespace, t.ds.name)));
  for (const head of heads.values()) {
    const ds = dsKeyOf(head.namespace, head.name);
    if (targeted.has(ds)) continue;
    const last = Math.max(head.stats?.lastSampleAt ?? 0, head.baseAt);
    if (now - last < STATE_EXPIRY_MS) continue;
    await store.deleteChunks(cluster, ds, head.gen, head.chunks);
    const logs = await store.listLogs(cluster, ds, '');
    await store.deleteLogs(
      cluster,
      ds,
      logs.map((l) => l.cycle),
    );
    await store.deleteApply(cluster, ds);
    await store.deleteHead(cluster, ds);
    ctx.logger?.info('expired the states of a DaemonSet no longer sized per node', { daemonSet: ds });
  }

  const requested = reports.filter(
    (r) => r.report.kind === 'resized' && r.report.outcome === 'Requested',
  ).length;
  const completed = reports.filter(
    (r) => r.report.kind === 'resized' && r.report.outcome === 'Completed',
  ).length;
  const refused = reports.filter((r) => r.report.kind === 'refused').length;
  const totalRequests = reader.stats.requests;
  const detail: Detail<'NodeScopeCycleCompleted'> = {
    cluster,
    cycleId: ctx.cycleId,
    vpaCrd: crd,
    metricsApi,
    daemonSets: outcomes.length,
    rejectedTargets: rejected.length,
    nodes: nodes.length,
    scopes: outcomes.reduce((a, o) => a + o.scopes, 0),
    fallbackNodes: outcomes.reduce((a, o) => a + o.fallbackNodes, 0),
    samples: outcomes.reduce((a, o) => a + o.samples, 0),
    ooms: outcomes.reduce((a, o) => a + o.ooms, 0),
    resizes: { requested, completed, refused },
    apiRequests: totalRequests,
    errors: errors.slice(0, 20).map((e) => e.slice(0, 1024)),
    at: new Date(now).toISOString(),
  };
  const record: ClusterRecord = {
    cluster,
    lastCycle: detail,
    rejected: rejected.map((r) => ({
      namespace: r.namespace,
      vpa: r.vpa,
      uid: r.uid,
      kind: r.targetRef.kind,
      name: r.targetRef.name,
      reason: r.reason,
    })),
  };
  if (resizer.unsupported) {
    record.resizeUnsupported = resizer.unsupported;
    record.resizeUnsupportedUntil =
      clusterRec?.resizeUnsupportedUntil !== undefined && now < clusterRec.resizeUnsupportedUntil
        ? clusterRec.resizeUnsupportedUntil
        : now + settings.resizeUnsupportedRecheckMs;
  }
  await store.putCluster(record);
  phases.mark('finish');
  const byOperation: Record<string, number> = { ...reader.stats.byOperation };
  return {
    detail,
    daemonSets: outcomes,
    rejected,
    newlyRejected,
    resizeReports: reports,
    reads: reader.stats.requests - reader.stats.writes,
    writes: reader.stats.writes,
    requestsByOperation: byOperation,
    phases: {
      ...phases.ms,
      'collect: JSON.parse': reader.stats.parseMs,
      'collect: page handlers': reader.stats.pageMs,
    },
  };
}

/** DaemonSets are only listed when some VPA asks for node scope on one. */
function targetsNeedDaemonSets(vpas: readonly VpaObject[]): boolean {
  return vpas.some(
    (v) =>
      (v.spec?.scope || v.metadata?.annotations?.['fleetscope.io/scope']) &&
      v.spec?.targetRef?.kind === 'DaemonSet',
  );
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

async function dsCycle(
  ctx: CycleContext,
  settings: NodeScopeSettings,
  snapshot: ClusterSnapshot,
  target: NodeScopeTarget,
  head: DsHead | undefined,
  fold: boolean,
  nodes: NodeFacts[],
  vpa: VpaObject | undefined,
  crd: CrdState,
  budget: Budget,
  resizer: Resizer,
  reports: CycleResult['resizeReports'],
  getNow: () => number,
  observe: (t: number) => void,
  phases: Phases = new Phases(),
): Promise<DsOutcome> {
  const { store, cluster } = ctx;
  const statsBefore = { ...store.stats };
  const ds = dsKeyOf(target.ds.namespace, target.ds.name);
  const containers = target.containers.map((c) => c.name);
  // Collect first, while little else is in memory: the heap's size is what parsing pages costs most.
  const reader = snapshot.reader;
  const { pods, newest } = await listDaemonSetPods(snapshot, target);
  const metrics = await listDaemonSetMetrics(reader, target);
  phases.mark('collect');
  // A fold replays every stored cycle into every state; other cycles leave the states undecoded.
  const loaded = await loadDs(store, head, cluster, ds, containers, { replay: fold });
  const { model } = loaded;
  phases.mark('load states');
  observe(newest);
  observe(metrics.newest);
  const now = getNow();
  const samples: LogEntry['samples'] = [];
  const ooms: OomEvent[] = [];
  let sampleCount = 0;
  for (const [node, pod] of pods) {
    const u = metrics.byPod.get(pod.name);
    if (u) {
      for (const v of u.cpu) if (v !== undefined) sampleCount++;
      samples.push({ node, t: u.t, cpu: u.cpu, memory: u.memory });
    }
    const rec = model.nodes.get(node);
    containers.forEach((name, j) => {
      const c = pod.containers.find((x) => x.name === name);
      const request = c && memoryRequestOf(c);
      if (c?.oomAt === undefined || request === undefined) return;
      if (c.oomAt <= (rec?.lastOomAt[j] ?? 0)) return;
      ooms.push({ node, container: j, t: c.oomAt, request });
    });
  }
  ooms.sort((a, b) => a.t - b.t || (a.node < b.node ? -1 : a.node > b.node ? 1 : a.container - b.container));
  const entry: LogEntry = { at: now, gen: head?.gen ?? 0, containers, samples, ooms };
  const eligible = new Set<string>();
  for (const n of nodes) if (!placementProblem(target.placement, n)) eligible.add(n.name);
  let lastSampleAt = head?.stats?.lastSampleAt ?? 0;
  for (const x of samples) if (x.t > lastSampleAt) lastSampleAt = x.t;

  let folded = false;
  let logBytes = 0;
  let baseBytes = 0;
  let dsWide: Record<string, ContainerRec>;
  const recs = new Map<string, NodeRec>();
  /** Nodes whose recommendation is computed from their full history in this cycle. */
  const fresh = new Set<string>();
  let stats: DsHead['stats'] | undefined;
  if (fold) {
    applyEntry(model, entry);
    phases.mark('add samples');
    dsWide = recommendDsWide(target, model);
    for (const node of eligible) {
      const r = nodeRecommendation(target, model.nodes.get(node), dsWide);
      if (r) recs.set(node, r);
      fresh.add(node);
    }
    phases.mark('recommend');
    stats = statsOf(model, eligible, recs, dsWide, lastSampleAt);
    collectGarbage(model, now, new Set(pods.keys()), eligible);
    for (const node of eligible)
      if (!model.nodes.has(node)) model.nodes.set(node, newNodeRecord(node, containers.length));
    for (const [node, rec] of model.nodes) rec.rec = recs.get(node);
    const packed = packBase(model, settings.chunkRawBytes);
    const gen = (head?.gen ?? 0) + 1;
    let written = 0;
    for (let k = 0; k < packed.chunks.length; k++) {
      const chunk = packed.chunks[k] as Uint8Array;
      if (!(await store.putChunk(cluster, ds, gen, k, chunk, now))) break;
      written++;
      baseBytes += chunk.length;
    }
    if (written === packed.chunks.length) {
      const newHead: DsHead = {
        ...headOfTarget(cluster, target),
        gen,
        chunks: packed.chunks.length,
        baseAt: now,
        foldedThrough:
          ctx.cycleKey > (head?.foldedThrough ?? '') ? ctx.cycleKey : (head?.foldedThrough as string),
        dsWide,
        stats: { ...stats, nodes: model.nodes.size, scopes: countScopes(model) },
        ...(head?.statusDigest ? { statusDigest: head.statusDigest } : {}),
        version: (head?.version ?? 0) + 1,
      };
      try {
        await store.putHead(newHead, head?.version ?? 0);
        folded = true;
        if (head && head.gen > 0) await store.deleteChunks(cluster, ds, head.gen, head.chunks);
        await store.deleteLogs(cluster, ds, loaded.logCycles);
      } catch (err) {
        if (!(err instanceof VersionConflict)) throw err;
        ctx.logger?.warn('another invocation folded this DaemonSet first; keeping its base', {
          daemonSet: ds,
        });
        await store.deleteChunks(cluster, ds, gen, written);
      }
    } else {
      await store.deleteChunks(cluster, ds, gen, written);
    }
  } else {
    // Append this cycle; recommendations are those stored with the base (at most a fold period old),
    // recomputed from the full history only for the pods this cycle may resize.
    if (head && ctx.cycleKey > head.foldedThrough && (samples.length > 0 || ooms.length > 0)) {
      const body = compress(encodeLog(entry, loaded.baseOrder));
      if (await store.putLog(cluster, ds, ctx.cycleKey, body, now)) logBytes = body.length;
    }
    dsWide = head?.dsWide ?? {};
    for (const node of eligible) {
      const stored = model.nodes.get(node)?.rec;
      if (stored) recs.set(node, stored);
      else if (Object.keys(dsWide).length > 0)
        recs.set(node, { source: 'fallback', containers: { ...dsWide } });
    }
    phases.mark('recommend');
  }
  /** The node's recommendation from its whole history up to this cycle (stored cycles, then this one). */
  /** The stored cycles and this one, restricted to one node (its states depend on its samples only). */
  const entriesOf = (node: string): LogEntry[] => {
    const only = new Set([node]);
    return [...loaded.logs.map((c) => entryOf(c, only)), entryFor(entry, only)];
  };
  const refresh = (node: string): NodeRec | undefined => {
    if (!fresh.has(node)) {
      fresh.add(node);
      for (const e of entriesOf(node)) applyEntry(model, e);
      const r = nodeRecommendation(target, model.nodes.get(node), dsWide);
      if (r) recs.set(node, r);
      else recs.delete(node);
    }
    return recs.get(node);
  };
  let fallbackNodes = 0;
  for (const r of recs.values()) if (r.source === 'fallback') fallbackNodes++;
  phases.mark('store');

  const outcome: DsOutcome = {
    namespace: target.ds.namespace,
    name: target.ds.name,
    vpa: target.vpa.name,
    updateMode: target.updateMode,
    metrics: metrics.state,
    pods: pods.size,
    eligible: eligible.size,
    scopes: countScopes(model),
    fallbackNodes,
    samples: sampleCount,
    ooms: ooms.length,
    folded,
    logBytes,
    baseBytes,
    dsWide,
    recs,
    resizes: { requested: 0, completed: 0, refused: 0, skipped: 0 },
    annotated: 0,
    statusPatched: false,
    readUnits: 0,
    writeUnits: 0,
    pendingLogs: loaded.logCycles.length,
  };
  const finish = () => {
    outcome.readUnits = store.stats.readUnits - statsBefore.readUnits;
    outcome.writeUnits = store.stats.writeUnits - statsBefore.writeUnits;
    if (ctx.keepRecommendations === false) outcome.recs = new Map();
    return outcome;
  };
  if (metrics.state !== 'available')
    ctx.logger?.warn('metrics API not usable: recommending from stored history only', {
      daemonSet: ds,
      metricsApi: metrics.state,
      detail: metrics.detail,
    });
  if (target.apply === 'off') return finish();

  // Apply in place.
  const owner = { kind: 'DaemonSet', name: target.ds.name };
  const applyRec = await store.getApply(cluster, ds);
  const records: Record<string, ResizeRecord> = { ...applyRec.records };
  let recordsChanged = false;
  const setRecord = (node: string, r: ResizeRecord | undefined) => {
    const before = records[node];
    if (r) records[node] = r;
    else delete records[node];
    if (JSON.stringify(before) !== JSON.stringify(r)) recordsChanged = true;
  };
  for (const [node, record] of Object.entries(records)) {
    const pod = pods.get(node);
    if (!pod) {
      setRecord(node, undefined);
      continue;
    }
    const seen = resizer.observe(podLike(pod), record);
    setRecord(node, seen.record);
    if (seen.report) {
      reports.push({ report: seen.report, owner });
      if (seen.report.kind === 'resized') outcome.resizes.completed++;
      else outcome.resizes.refused++;
    }
  }
  const oomNow = new Set(ooms.map((o) => o.node));
  const decisions = [];
  for (const [node, pod] of pods) {
    const rec = recs.get(node);
    if (!rec) continue;
    const d = decideUpdate(target, rec, pod, now, settings.updater);
    if (d) decisions.push(d);
    else if (oomNow.has(node) && !fresh.has(node)) {
      // An OOM kill this cycle raises the node's memory: decide on the fresh recommendation.
      const r = refresh(node);
      const again = r && decideUpdate(target, r, pod, now, settings.updater);
      if (again) decisions.push(again);
    }
  }
  decisions.sort(byPriority);
  const resized = new Set<string>();
  for (const candidate of decisions) {
    if (resizer.unsupported) break;
    let d: typeof candidate | undefined = candidate;
    if (!fresh.has(d.node)) {
      // Decided on the stored recommendation: apply the one from the node's full history, if still due.
      const r = refresh(d.node);
      d = r ? decideUpdate(target, r, d.pod, now, settings.updater) : undefined;
      if (!d) continue;
    }
    const current = podLike(d.pod);
    const may = resizer.mayRequest(current, d.desired, records[d.node]);
    if (!may.ok) {
      outcome.resizes.skipped++;
      continue;
    }
    if (!budget.take()) break;
    const result = await resizer.resize({ pod: current, desired: d.desired }, records[d.node]);
    if (result.requests > 1) budget.take(result.requests - 1);
    setRecord(d.node, result.record);
    if (result.report) {
      reports.push({ report: result.report, owner });
      if (result.report.kind === 'resized') {
        outcome.resizes.requested++;
        resized.add(d.node);
      } else outcome.resizes.refused++;
    }
  }
  if (recordsChanged) {
    if (!(await store.putApply(cluster, ds, records, applyRec.version)))
      ctx.logger?.warn('resize records changed underneath; this cycle’s are dropped', { daemonSet: ds });
  }
  phases.mark('resize');

  // Annotations: resized pods first, then the stalest.
  const toAnnotate: PodView[] = [];
  for (const [node, pod] of pods) {
    const rec = recs.get(node);
    if (!rec) continue;
    if (resized.has(node) || annotationStale(pod.annotation, rec, settings.annotationTolerance))
      toAnnotate.push(pod);
  }
  toAnnotate.sort(
    (a, b) =>
      Number(resized.has(b.node)) - Number(resized.has(a.node)) ||
      Number(!!a.annotation) - Number(!!b.annotation),
  );
  for (const pod of toAnnotate) {
    if (!budget.take()) break;
    try {
      await annotatePod(reader, pod.namespace, pod.name, annotationValue(recs.get(pod.node) as NodeRec, now));
      outcome.annotated++;
    } catch (err) {
      if (err instanceof ClusterAccessError && err.status === 404) continue;
      throw err;
    }
  }
  phases.mark('annotate');

  // The VPA's status: on each fold, and whenever the condition is missing.
  const cond = currentCondition(vpa, CONDITION_TYPE);
  const stale = cond?.status !== 'True' || cond.reason !== 'NodeScope' || folded;
  if (stale) {
    const summary = statusSummary(
      recs,
      dsWide,
      stats ?? statsOf(model, eligible, recs, dsWide, lastSampleAt),
    );
    const message = conditionMessage(summary);
    if (
      (cond?.message !== message || cond?.status !== 'True' || cond?.reason !== 'NodeScope') &&
      budget.take()
    ) {
      try {
        await patchVpaStatus(
          reader,
          target.vpa,
          { type: CONDITION_TYPE, status: 'True', reason: 'NodeScope', message },
          now,
          vpa,
          crd === 'scoped' ? { ...summary, updatedAt: new Date(now).toISOString() } : undefined,
        );
        outcome.statusPatched = true;
      } catch (err) {
        ctx.logger?.warn('could not write the VPA status', {
          vpa: `${target.vpa.namespace}/${target.vpa.name}`,
          error: describe(err),
        });
      }
    }
  }
  phases.mark('status');
  return finish();
}

function countScopes(model: DsModel): number {
  let n = 0;
  for (const r of model.nodes.values())
    r.states.forEach((s, j) => {
      if (s || r.raw?.[j]) n++;
    });
  return n;
}

function statsOf(
  model: DsModel,
  eligible: ReadonlySet<string>,
  recs: ReadonlyMap<string, NodeRec>,
  dsWide: Record<string, ContainerRec>,
  lastSampleAt: number,
): DsHead['stats'] {
  let perNodeCpu = 0;
  let perNodeMemory = 0;
  let fallbackNodes = 0;
  for (const r of recs.values()) {
    if (r.source === 'fallback') fallbackNodes++;
    for (const c of Object.values(r.containers)) {
      perNodeCpu += c.target.cpu ?? 0;
      perNodeMemory += c.target.memory ?? 0;
    }
  }
  let wideCpu = 0;
  let wideMemory = 0;
  for (const c of Object.values(dsWide)) {
    wideCpu += c.target.cpu ?? 0;
    wideMemory += c.target.memory ?? 0;
  }
  return {
    nodes: model.nodes.size,
    eligibleNodes: eligible.size,
    fallbackNodes,
    scopes: countScopes(model),
    perNodeCpu,
    perNodeMemory,
    dsWideCpu: wideCpu * recs.size,
    dsWideMemory: wideMemory * recs.size,
    lastSampleAt,
  };
}

function statusSummary(
  recs: ReadonlyMap<string, NodeRec>,
  dsWide: Record<string, ContainerRec>,
  stats: DsHead['stats'],
): StatusSummary {
  const containers: StatusSummary['containers'] = {};
  for (const r of recs.values()) {
    for (const [name, c] of Object.entries(r.containers)) {
      containers[name] ??= {
        min: {},
        max: {},
        daemonSetWide: { ...(dsWide[name]?.target ?? {}) },
      };
      const e = containers[name];
      for (const res of ['cpu', 'memory'] as const) {
        const v = c.target[res];
        if (v === undefined) continue;
        e.min[res] = Math.min(e.min[res] ?? v, v);
        e.max[res] = Math.max(e.max[res] ?? v, v);
      }
    }
  }
  let fallback = 0;
  for (const r of recs.values()) if (r.source === 'fallback') fallback++;
  return {
    nodes: recs.size,
    nodesWithHistory: recs.size - fallback,
    fallbackNodes: fallback,
    containers,
    perNodeTotal: { cpu: stats.perNodeCpu, memory: stats.perNodeMemory },
    daemonSetWideTotal: { cpu: stats.dsWideCpu, memory: stats.dsWideMemory },
  };
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
    containers: target.containers.map((c) => c.name),
    template: target.containers,
    policies: target.policies,
  };
}
