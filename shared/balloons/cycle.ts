/**
 * One balloon cycle of one cluster: load what the operator asked (policies, explicit sizes) and the
 * last cycle's state; make sure the PriorityClass and DaemonSet exist for the nodes to manage; follow up
 * the resizes already requested (a Deferred inflate is reverted at once); decide every node; resize
 * within the write budget; read the inflated balloons back after the kubelet had time to answer and
 * revert what it deferred, in the same cycle; store the state (conditionally on its version).
 *
 * Reads come from the cycle's shared snapshot (`read`), so nodes and pods read by node scope in the same
 * invocation are not read again.
 */
import {
  type PodLike,
  pairOf,
  type ResizeApi,
  type ResizeRecord,
  type ResizeReport,
  type Resizer,
} from '../resize/index.js';
import { type Amounts, amounts, equal, RESOURCES, sub } from './amounts.js';
import { type BalloonNode, type CountedPod, decide, type NodeDecision } from './decide.js';
import { type CompiledPolicy, compilePolicies, HOST_ID_LABEL } from './desired.js';
import type { BalloonObjects } from './incluster.js';
import { BALLOON_CONTAINER, type Selection } from './manifests.js';
import { type BalloonSettings, DEFAULT_BALLOON_SETTINGS } from './settings.js';
import type { BalloonItems, BalloonStore, NodeState } from './store.js';
import { type BalloonSummary, summarize } from './summary-model.js';

export interface BalloonPod extends CountedPod {
  /** The pod as the resize mechanism reads it. */
  like: PodLike;
  /** What the kubelet allocated to the balloon container (the size a Deferred inflate is reverted to). */
  allocated?: Amounts;
}

/** What the cycle reads from the cluster; the shared snapshot of the invocation provides it. */
export interface ClusterRead {
  nodes(): Promise<BalloonNode[]>;
  /** Every pod bound to a node and not finished. */
  pods(): Promise<BalloonPod[]>;
}

export interface BalloonCycleContext {
  cluster: string;
  cycleId: string;
  store: BalloonStore;
  objects: BalloonObjects;
  resizer: Resizer;
  /** The resizer's calls, for reading inflated balloons back. */
  api: ResizeApi;
  read: ClusterRead;
  settings?: Partial<BalloonSettings>;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** Size this node only (an explicit request being served at once); the others keep their state. */
  onlyNode?: string;
  /**
   * Deflate every balloon to the floor whatever asks for a size (the first task of turning balloons
   * off): the nodes get their whole capacity back before the DaemonSet goes.
   */
  drain?: boolean;
}

export interface Revert {
  node: string;
  pod: string;
  podUid: string;
  from: Amounts;
  to: Amounts;
  message: string;
}

export interface BalloonCycleResult {
  cluster: string;
  at: number;
  managed: boolean;
  summary: BalloonSummary;
  decisions: NodeDecision[];
  reports: ResizeReport[];
  reverts: Revert[];
  unknownNodes: string[];
  errors: string[];
}

const desiredOf = (a: Amounts) => ({ [BALLOON_CONTAINER]: { requests: { cpu: a.cpu, memory: a.memory } } });
const specOf = (pod: PodLike): Amounts | undefined => {
  const c = pod.spec?.containers?.find((x) => x.name === BALLOON_CONTAINER);
  return c ? amountsOfList(c.resources?.requests) : undefined;
};
const amountsOfList = (l: { [r: string]: string | undefined } | undefined): Amounts => {
  const p = pairOf(l);
  return amounts(p.cpu ?? 0, p.memory ?? 0);
};

/** Whether anything asks for balloons in this cluster (otherwise the cycle reads no pod at all). */
function wanted(items: BalloonItems, nodes: readonly BalloonNode[]): boolean {
  return (
    items.policies.length > 0 ||
    items.requests.length > 0 ||
    Object.keys(items.state?.nodes ?? {}).length > 0 ||
    nodes.some((n) => n.labels[HOST_ID_LABEL] !== undefined)
  );
}

export async function runBalloonCycle(ctx: BalloonCycleContext): Promise<BalloonCycleResult> {
  const settings = { ...DEFAULT_BALLOON_SETTINGS, ...ctx.settings };
  const now = (ctx.now ?? Date.now)();
  const errors: string[] = [];
  const items = await ctx.store.load(ctx.cluster);
  const policies = compile(items, errors);
  const nodes = await ctx.read.nodes();
  const idle: BalloonCycleResult = {
    cluster: ctx.cluster,
    at: now,
    managed: false,
    summary: summarize([], now),
    decisions: [],
    reports: [],
    reverts: [],
    unknownNodes: [],
    errors,
  };
  if (!wanted(items, nodes) && !ctx.drain) return idle;
  if (ctx.drain && !(await ctx.objects.daemonSetExists())) return idle;

  const unsupported = await resizeUnsupported(ctx, items, now, settings);
  if (unsupported) return unsupportedResult(ctx, idle, items, unsupported, errors);
  const selection: Selection = { policies: items.policies, explicitNodes: items.requests.map((r) => r.node) };
  if (!ctx.drain) {
    await ctx.objects.ensurePriorityClass();
    await ctx.objects.ensureDaemonSet(selection);
  }
  const pods = await ctx.read.pods();
  const usage = await ctx.objects.nodeUsage().catch(() => undefined);

  const previous = items.state?.nodes ?? {};
  const reports: ResizeReport[] = [];
  const reverts: Revert[] = [];
  const balloons = new Map(pods.filter((p) => p.balloon).map((p) => [p.node, p]));
  const records = new Map<string, ResizeRecord | undefined>();
  const reverted = new Set<string>();
  // Follow up what earlier cycles requested; a Deferred inflate goes back to what the kubelet allocated.
  for (const [node, pod] of balloons) {
    const seen = ctx.resizer.observe(pod.like, previous[node]?.resize);
    if (seen.report) reports.push(seen.report);
    records.set(node, seen.record);
    if (seen.record?.state === 'deferred') {
      const r = await revert(ctx, pod, seen.record, errors);
      if (r) {
        reverts.push(r.revert);
        reports.push(...r.reports);
        records.set(node, r.record);
        reverted.add(node);
        pod.requests = r.revert.to;
      }
    }
  }

  const { decisions, unknownNodes } = decide({
    ...(ctx.drain ? { drain: true } : {}),
    now,
    nodes,
    pods,
    policies,
    requests: items.requests,
    previous,
    ...(usage ? { usage } : {}),
  });
  for (const n of unknownNodes) errors.push(`explicit size for node ${n}: the node does not exist`);
  // A node whose inflate was just reverted waits for the next cycle's fresh read before another try.
  const inflated = await apply(
    ctx,
    settings,
    decisions.filter((d) => !reverted.has(d.node)),
    records,
    reports,
    errors,
  );
  if (inflated.length > 0) await settle(ctx, settings, inflated, records, reports, reverts, errors);

  const state = stateOf(decisions, records, previous, ctx.onlyNode, now);
  const gone = ctx.resizer.unsupported;
  const saved = await ctx.store.saveState(
    {
      cluster: ctx.cluster,
      at: now,
      cycleId: ctx.cycleId,
      nodes: state,
      errors,
      ...(gone ? { unsupported: gone, unsupportedUntil: now + settings.unsupportedRecheckMs } : {}),
    },
    items.state?.version,
  );
  if (!saved)
    errors.push('another balloon cycle of this cluster stored its state first; this one was not stored');
  return {
    cluster: ctx.cluster,
    at: now,
    managed: true,
    summary: summarize(Object.values(state), now, reverts.length),
    decisions,
    reports,
    reverts,
    unknownNodes,
    errors,
  };
}

const UNSUPPORTED =
  'the API server has no pods/resize subresource (Kubernetes before 1.32, or InPlacePodVerticalScaling off): balloons cannot be resized, so none are created';

/**
 * A cluster without pods/resize is reported and left alone: asked once (discovery) before the first
 * DaemonSet is created, and again only after the recheck interval.
 */
async function resizeUnsupported(
  ctx: BalloonCycleContext,
  items: BalloonItems,
  now: number,
  settings: BalloonSettings,
): Promise<string | undefined> {
  const s = items.state;
  if (s?.unsupported && s.unsupportedUntil !== undefined && now < s.unsupportedUntil) return s.unsupported;
  if (s && !s.unsupported) return undefined;
  return (await ctx.objects.resizeSupported()) ? undefined : UNSUPPORTED;
}

async function unsupportedResult(
  ctx: BalloonCycleContext,
  idle: BalloonCycleResult,
  items: BalloonItems,
  why: string,
  errors: string[],
): Promise<BalloonCycleResult> {
  errors.push(why);
  const settings = { ...DEFAULT_BALLOON_SETTINGS, ...ctx.settings };
  const s = items.state;
  if (!s?.unsupported || s.unsupportedUntil === undefined || idle.at >= s.unsupportedUntil)
    await ctx.store.saveState(
      {
        cluster: ctx.cluster,
        at: idle.at,
        cycleId: ctx.cycleId,
        nodes: {},
        errors,
        unsupported: why,
        unsupportedUntil: idle.at + settings.unsupportedRecheckMs,
      },
      s?.version,
    );
  return { ...idle, errors };
}

function compile(items: BalloonItems, errors: string[]): CompiledPolicy[] {
  const ok: CompiledPolicy[] = [];
  for (const p of items.policies) {
    try {
      ok.push(...compilePolicies([p]));
    } catch (err) {
      errors.push(`policy ${p.name}: ${(err as Error).message}`);
    }
  }
  return ok.sort((a, b) => a.policy.name.localeCompare(b.policy.name));
}

/** Sends the decided resizes within the budget; returns the nodes whose balloon was inflated. */
async function apply(
  ctx: BalloonCycleContext,
  settings: BalloonSettings,
  decisions: NodeDecision[],
  records: Map<string, ResizeRecord | undefined>,
  reports: ResizeReport[],
  errors: string[],
): Promise<NodeDecision[]> {
  const inflated: NodeDecision[] = [];
  let budget = settings.writeBudget;
  // Deflates first: they give capacity back and never wait for anything.
  const order = [...decisions].sort(
    (a, b) => Number(isInflate(a)) - Number(isInflate(b)) || a.node.localeCompare(b.node),
  );
  for (const d of order) {
    if (!d.resizeTo || !d.balloon) continue;
    if (ctx.onlyNode !== undefined && d.node !== ctx.onlyNode) continue;
    const pod = d.balloon as BalloonPod;
    const desired = desiredOf(d.resizeTo);
    const record = records.get(d.node);
    if (!ctx.resizer.mayRequest(pod.like, desired, record).ok) continue;
    if (budget-- <= 0) break;
    try {
      const res = await ctx.resizer.resize({ pod: pod.like, desired }, record);
      records.set(d.node, res.record);
      if (res.report) reports.push(res.report);
      if (res.report?.kind !== 'resized') continue;
      d.state.balloon = d.resizeTo;
      if (isInflate(d)) inflated.push(d);
    } catch (err) {
      errors.push(`node ${d.node}: resizing the balloon failed: ${(err as Error).message}`);
    }
  }
  return inflated;
}

const isInflate = (d: NodeDecision) =>
  d.resizeTo !== undefined &&
  d.balloon !== undefined &&
  RESOURCES.some((r) => d.resizeTo![r] > d.balloon!.requests[r]);

/** Reads the inflated balloons back once the kubelet had time to answer, and reverts what it deferred. */
async function settle(
  ctx: BalloonCycleContext,
  settings: BalloonSettings,
  inflated: NodeDecision[],
  records: Map<string, ResizeRecord | undefined>,
  reports: ResizeReport[],
  reverts: Revert[],
  errors: string[],
): Promise<void> {
  if (settings.settleMs > 0)
    await (ctx.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms))))(settings.settleMs);
  for (const d of inflated) {
    const pod = d.balloon as BalloonPod;
    try {
      const fresh = await ctx.api.readPod(pod.namespace, pod.name);
      if (!fresh || fresh.metadata?.uid !== pod.uid) continue;
      const seen = ctx.resizer.observe(fresh, records.get(d.node));
      if (seen.report) reports.push(seen.report);
      records.set(d.node, seen.record);
      if (seen.record?.state !== 'deferred') continue;
      const r = await revert(
        ctx,
        { ...pod, like: fresh, allocated: allocatedOf(fresh) ?? pod.allocated },
        seen.record,
        errors,
      );
      if (r) {
        reverts.push(r.revert);
        reports.push(...r.reports);
        records.set(d.node, r.record);
        d.state.balloon = r.revert.to;
      }
    } catch (err) {
      errors.push(`node ${d.node}: reading the balloon back failed: ${(err as Error).message}`);
    }
  }
}

export function allocatedOf(pod: PodLike): Amounts | undefined {
  const s = pod.status?.containerStatuses?.find((c) => c.name === BALLOON_CONTAINER);
  const list = s?.allocatedResources ?? s?.resources?.requests;
  return list ? amountsOfList(list) : undefined;
}

/**
 * A Deferred inflate goes back to the size the kubelet allocated: left pending, the scheduler would
 * keep counting the larger request and turn new pods away from a node that never shrank, and the
 * kubelet would apply it on its own later, whatever had been decided since.
 */
async function revert(
  ctx: BalloonCycleContext,
  pod: BalloonPod,
  record: ResizeRecord,
  errors: string[],
): Promise<{ revert: Revert; record?: ResizeRecord; reports: ResizeReport[] } | undefined> {
  const to = pod.allocated ?? allocatedOf(pod.like);
  const from = specOf(pod.like);
  if (!to || !from || equal(to, from)) return undefined;
  try {
    const res = await ctx.resizer.resize({ pod: pod.like, desired: desiredOf(to) }, undefined);
    return {
      revert: {
        node: pod.node,
        pod: pod.name,
        podUid: pod.uid,
        from,
        to,
        message: record.message ?? 'deferred by the kubelet',
      },
      ...(res.record ? { record: res.record } : {}),
      reports: res.report ? [res.report] : [],
    };
  } catch (err) {
    errors.push(`node ${pod.node}: reverting a deferred inflate failed: ${(err as Error).message}`);
    return undefined;
  }
}

/**
 * What the node offers after the cycle (allocatable less the balloon as it now stands), and when it last
 * shrank: the cool-down counts from inflates that were made, not from those only wanted.
 */
function settled(d: NodeDecision, now: number): Pick<NodeState, 'size' | 'lastShrinkAt'> {
  const size = sub(d.state.allocatable, d.state.balloon);
  const grew = d.balloon !== undefined && RESOURCES.some((r) => d.state.balloon[r] > d.balloon!.requests[r]);
  return grew
    ? { size, lastShrinkAt: now }
    : { size, ...(d.state.lastShrinkAt !== undefined ? { lastShrinkAt: d.state.lastShrinkAt } : {}) };
}

/** The state to store: every decided node with its resize record (a node-only cycle keeps the others). */
function stateOf(
  decisions: readonly NodeDecision[],
  records: Map<string, ResizeRecord | undefined>,
  previous: Readonly<Record<string, NodeState>>,
  onlyNode: string | undefined,
  now: number,
): Record<string, NodeState> {
  const out: Record<string, NodeState> = onlyNode === undefined ? {} : { ...previous };
  for (const d of decisions) {
    if (onlyNode !== undefined && d.node !== onlyNode) continue;
    const record = records.get(d.node);
    const { resize: _old, ...rest } = d.state;
    out[d.node] = { ...rest, ...settled(d, now), ...(record ? { resize: record } : {}) };
  }
  return out;
}
