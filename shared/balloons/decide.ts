/**
 * The decision of one cycle, node by node, from what was read (nodes, pods, stored state) and nothing
 * else: which nodes are managed, what each should offer, what its balloon becomes, and what is blocked.
 * Pure: the cycle (./cycle.ts) reads, calls this, and acts on the answer.
 */
import {
  type Amounts,
  add,
  amounts,
  each,
  equal,
  isZero,
  max,
  min,
  RESOURCES,
  sub,
  ZERO,
} from './amounts.js';
import { type BalloonNode, type CountedPod, heldNode } from './cluster-read.js';
import {
  type CompiledPolicy,
  type Desired,
  desiredSize,
  type ExplicitRequest,
  HOST_ID_LABEL,
  KUBELETS_PER_HOST_LABEL,
} from './desired.js';
import { pendingDemand } from './pending.js';
import { nodePrice, sharedHostPrice } from './prices.js';
import { staleRequest } from './requests.js';
import { BALLOON_FLOOR, type BalloonPlan, type PodInTheWay, planBalloon, podsInTheWay } from './sizing.js';
import type { BlockedReclaim, NodeState } from './store.js';

export interface NodeDecision {
  node: string;
  /** The node's balloon pod, when it has one. */
  balloon?: CountedPod;
  desired?: Desired;
  plan?: BalloonPlan;
  /** Resize the balloon to this now (absent: leave it). */
  resizeTo?: Amounts;
  state: NodeState;
  /** The node's allocatable changed since the last cycle (hotplug, a cloud resize). */
  capacityChanged?: { from: Amounts; to: Amounts };
  /** A reclaim newly blocked, or blocked for a different amount than last cycle. */
  newlyBlocked: boolean;
  /** The node became over-committed (allocatable below what is held), or by a different amount. */
  newlyOvercommitted?: boolean;
}

export interface DecideInput {
  now: number;
  nodes: readonly BalloonNode[];
  pods: readonly CountedPod[];
  policies: readonly CompiledPolicy[];
  requests: readonly ExplicitRequest[];
  previous: Readonly<Record<string, NodeState>>;
  usage?: ReadonlyMap<string, Amounts>;
  /** Give every node its whole capacity back (the feature turning off): every balloon to the floor. */
  drain?: boolean;
}

interface NodePods {
  balloon?: CountedPod;
  others: CountedPod[];
  requests: Amounts;
}

function podsByNode(pods: readonly CountedPod[]): Map<string, NodePods> {
  const out = new Map<string, NodePods>();
  for (const p of pods) {
    const node = heldNode(p);
    if (node === '') continue; // waiting to be scheduled: demand (./pending.ts), not load
    let n = out.get(node);
    if (!n) {
      n = { others: [], requests: ZERO };
      out.set(node, n);
    }
    // Two balloon pods on a node (a replacement racing its predecessor): size the newer, count the other.
    if (p.balloon && p.node !== '' && !n.balloon) n.balloon = p;
    else {
      n.others.push(p);
      n.requests = add(n.requests, p.requests);
    }
  }
  return out;
}

const inTheWay = (pods: readonly CountedPod[]): PodInTheWay[] =>
  pods.map((p) => ({ namespace: p.namespace, name: p.name, requests: p.requests }));

function blockedOf(
  plan: BalloonPlan,
  others: readonly CountedPod[],
  before: BlockedReclaim | undefined,
  now: number,
) {
  if (RESOURCES.every((r) => plan.blocked[r] === 0)) return { blocked: undefined, changed: false };
  const changed = !before || !equal(before.missing, plan.blocked);
  const blocked: BlockedReclaim = {
    missing: plan.blocked,
    pods: podsInTheWay(inTheWay(others), plan.blocked),
    since: changed || !before ? now : before.since,
  };
  return { blocked, changed };
}

function decideNode(
  node: BalloonNode,
  pods: NodePods | undefined,
  input: DecideInput,
  explicit: ExplicitRequest | undefined,
  demand: Amounts,
): NodeDecision | undefined {
  const prev = input.previous[node.name];
  const workloads = pods?.requests ?? ZERO;
  const balloon = pods?.balloon;
  const sized = desiredSize(
    { ...node, workloads: add(workloads, demand) },
    explicit,
    input.policies,
    { size: prev?.size, lastShrinkAt: prev?.lastShrinkAt },
    input.now,
  );
  // Draining gives the node its capacity back, but it stays in its pool (the report groups by it). A
  // balloon that is not sound (./integrity.ts) is deflated to the floor and never inflated.
  const used = input.usage?.get(node.name);
  const desired =
    input.drain || balloon?.problems ? undefined : boundByUsage(sized, used, node, input.policies);
  if (!desired && !balloon) return undefined;
  const current = balloon?.requests ?? BALLOON_FLOOR;
  // A node nobody sizes any more gets its capacity back: its balloon is deflated to the floor.
  const plan = planBalloon(
    { allocatable: node.allocatable, others: workloads, balloon: current },
    desired?.size ?? sub(node.allocatable, BALLOON_FLOOR),
  );
  const { blocked, changed } = blockedOf(plan, pods?.others ?? [], prev?.blocked, input.now);
  const capacityChanged =
    prev && !equal(prev.allocatable, node.allocatable)
      ? { from: prev.allocatable, to: node.allocatable }
      : undefined;
  const state = nodeState(node, input, {
    workloads,
    current,
    plan,
    balloon,
    desired,
    blocked,
    pool: sized?.source,
  });
  const over = state.overcommitted;
  return {
    node: node.name,
    ...(over && !(prev?.overcommitted && equal(prev.overcommitted, over))
      ? { newlyOvercommitted: true }
      : {}),
    ...(balloon ? { balloon } : {}),
    ...(desired ? { desired } : {}),
    plan,
    ...(balloon && !equal(plan.next, current) ? { resizeTo: plan.next } : {}),
    state,
    ...(capacityChanged ? { capacityChanged } : {}),
    newlyBlocked: changed,
  };
}

/** What this cycle decided for a node, as {@link nodeState} stores it. */
interface NodeOutcome {
  workloads: Amounts;
  /** The balloon's requests now (the floor when there is no balloon pod). */
  current: Amounts;
  plan: BalloonPlan;
  balloon?: CountedPod;
  desired?: Desired;
  blocked?: BlockedReclaim;
  /** What sizes the node when balloons are on (kept while draining: the node's pool). */
  pool?: Desired['source'];
}

/** The node's state for the next cycle; a resize in flight is kept only while it is this balloon's. */
function nodeState(node: BalloonNode, input: DecideInput, o: NodeOutcome): NodeState {
  const prev = input.previous[node.name];
  const used = input.usage?.get(node.name);
  return {
    allocatable: node.allocatable,
    capacity: node.capacity,
    workloads: o.workloads,
    balloon: o.current,
    target: o.plan.target,
    size: max(ZERO, sub(node.allocatable, o.current)),
    ...overcommit(node.allocatable, add(o.workloads, o.current)),
    ...usageOvercommit(
      node.allocatable,
      add(o.workloads, o.current),
      used && add(max(o.workloads, used), o.current),
    ),
    ...(o.desired?.usageFloor ? { usageFloor: o.desired.usageFloor } : {}),
    ...(prev?.lastShrinkAt !== undefined ? { lastShrinkAt: prev.lastShrinkAt } : {}),
    ...(used ? { used } : {}),
    ...(o.desired ? { desired: o.desired.size } : {}),
    ...(o.pool ? { source: o.pool } : {}),
    ...(o.balloon ? { podUid: o.balloon.uid } : {}),
    ...(o.balloon?.problems ? { unsound: [...o.balloon.problems] } : {}),
    ...(o.blocked ? { blocked: o.blocked } : {}),
    ...priceOf(node, input.policies, o.desired),
    ...(prev?.resize && prev.resize.podUid === o.balloon?.uid ? { resize: prev.resize } : {}),
  };
}

/** The node's price: its own policy's override first, then the other policies' (by name), then the table. */
function priceOf(node: BalloonNode, policies: readonly CompiledPolicy[], desired: Desired | undefined) {
  const own = desired?.source.kind === 'policy' ? desired.source.policy : undefined;
  const ordered = [...policies].sort((a, b) => Number(b.policy.name === own) - Number(a.policy.name === own));
  // Every kubelet on a shared host reports the whole host: the host is priced once, a share per node.
  const price = sharedHostPrice(
    nodePrice(
      node.labels,
      ordered.map((p) => p.policy.prices),
    ),
    hostShareOf(node.labels),
  );
  return price ? { price } : {};
}

/** Above what the node's pods use (metrics.k8s.io), where no policy says: +10%. */
export const USAGE_HEADROOM_PERCENT = 10;
const USAGE_STEP = amounts(250, 256 * 1024 * 1024);

/**
 * A node never offers less than its pods use, with headroom (the policy's, or 10%): if the ballooned
 * capacity is really absent from the VM, a node sized below its usage is where OOM kills come from.
 */
function boundByUsage(
  d: Desired | undefined,
  used: Amounts | undefined,
  node: BalloonNode,
  policies: readonly CompiledPolicy[],
): Desired | undefined {
  if (!d || !used) return d;
  const p =
    d.source.kind === 'policy'
      ? policies.find((x) => x.policy.name === (d.source as { policy: string }).policy)
      : undefined;
  const pct = p?.policy.headroomPercent ?? USAGE_HEADROOM_PERCENT;
  // Rounded up to the policy's step (250m / 256Mi without one): usage moves a little every reading,
  // and a size that followed it would resize the balloon every cycle.
  const step = p?.policy.step ?? USAGE_STEP;
  const floor = min(
    node.allocatable,
    each((r) => {
      const want = used[r] + Math.max(Math.ceil((used[r] * pct) / 100), p?.policy.headroomMin[r] ?? 0);
      return Math.ceil(want / step[r]) * step[r];
    }),
  );
  if (RESOURCES.every((r) => d.size[r] >= floor[r])) return d;
  return { ...d, size: max(d.size, floor), usageFloor: floor };
}

/** The number of kubelets on the node's host, when it is labelled as one of N (./desired.ts hostShare). */
function hostShareOf(labels: Readonly<Record<string, string>>): number | undefined {
  const n = Number(labels[KUBELETS_PER_HOST_LABEL]);
  return labels[HOST_ID_LABEL] && Number.isInteger(n) && n > 1 ? n : undefined;
}

/**
 * What pods use beyond their requests is held too: a VM without the ballooned capacity has only the
 * rest. Kept apart from the requests' figure (which the kubelet's admission and the Events follow, and
 * which does not move with usage's noise); shown where it is the larger.
 */
function usageOvercommit(
  allocatable: Amounts,
  requested: Amounts,
  held: Amounts | undefined,
): { overcommittedByUsage?: Amounts } {
  if (!held) return {};
  const over = max(ZERO, sub(held, allocatable));
  return isZero(over) || equal(over, max(ZERO, sub(requested, allocatable)))
    ? {}
    : { overcommittedByUsage: over };
}

/** How far the node's pods and balloon hold beyond its allocatable, when they do. */
function overcommit(allocatable: Amounts, held: Amounts): { overcommitted?: Amounts } {
  const over = max(ZERO, sub(held, allocatable));
  return isZero(over) ? {} : { overcommitted: over };
}

/** An explicit size that no longer applies (./requests.ts staleRequest), and why. */
export interface StaleRequest {
  request: ExplicitRequest;
  why: string;
}

export function decide(input: DecideInput): { decisions: NodeDecision[]; stale: StaleRequest[] } {
  const byNode = podsByNode(input.pods);
  const nodes = new Map(input.nodes.map((n) => [n.name, n]));
  const stale: StaleRequest[] = [];
  const explicit = new Map<string, ExplicitRequest>();
  for (const r of input.requests) {
    const why = staleRequest(r, nodes.get(r.node));
    if (why) stale.push({ request: r, why });
    else explicit.set(r.node, r);
  }
  const demand = input.drain
    ? new Map<string, Amounts>()
    : pendingDemand(
        input.pods.filter((p) => heldNode(p) === ''),
        input.nodes,
        new Map([...byNode].map(([n, p]) => [n, p.requests])),
        input.policies,
        new Set(explicit.keys()),
      );
  const decisions: NodeDecision[] = [];
  for (const node of input.nodes) {
    const d = decideNode(
      node,
      byNode.get(node.name),
      input,
      explicit.get(node.name),
      demand.get(node.name) ?? ZERO,
    );
    if (d) decisions.push(d);
  }
  return { decisions, stale };
}
