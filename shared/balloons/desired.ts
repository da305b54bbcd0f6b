/**
 * The size each node should offer its workloads, from three sources, most specific first:
 *   explicit  a NodeResizeRequested event or `fleetscope balloons resize` (the VM was resized, or will be);
 *   policy    a node pool's policy: workloads' requests plus headroom (the autoscaling story);
 *   host      N kubelets on one host, each offering 1/N of it (the testing story).
 * A node no source speaks for is not managed: its balloon, if any, is deflated.
 */
import { matchesLabels, parseLabelSelector, type Requirement } from '../kernel/label-selector.js';
import { type Amounts, amounts, min } from './amounts.js';
import { type BalloonPolicy, holdShrinks, policySize } from './policy.js';

export const HOST_ID_LABEL = 'fleetscope.io/host-id';
export const KUBELETS_PER_HOST_LABEL = 'fleetscope.io/kubelets-per-host';

export interface ExplicitRequest {
  node: string;
  size: Amounts;
  requestedAt: number;
  /** Who asked: "event" (NodeResizeRequested) or "cli". */
  via: string;
  /** The uid of the node object it was set for: a node recreated under the name is another node. */
  nodeUid?: string;
}

export type SizeSource =
  | { kind: 'explicit'; via: string; requestedAt: number }
  | { kind: 'policy'; policy: string; held: boolean }
  | { kind: 'host'; host: string; kubelets: number };

export interface NodeInput {
  name: string;
  labels: Readonly<Record<string, string>>;
  capacity: Amounts;
  allocatable: Amounts;
  /** Requests of every pod on the node but its balloon (node-scoped DaemonSet pods at their node's size). */
  workloads: Amounts;
}

export interface NodeMemory {
  /** The effective size fleetscope last settled on, and when it last shrank the node. */
  size?: Amounts;
  lastShrinkAt?: number;
}

export interface Desired {
  size: Amounts;
  source: SizeSource;
  /** True when the source asked for more than allocatable offers (clamped; the node cannot give more). */
  clamped: boolean;
  /** What the node's usage requires (with headroom), where it raised the size the source asked for. */
  usageFloor?: Amounts;
}

export interface CompiledPolicy {
  policy: BalloonPolicy;
  requirements: Requirement[];
}

export const compilePolicies = (policies: readonly BalloonPolicy[]): CompiledPolicy[] =>
  [...policies]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((policy) => ({ policy, requirements: parseLabelSelector(policy.selector) }));

/** The policy for a node: the first by name whose selector matches (overlaps are reported by `policy set`). */
export const policyFor = (
  node: { labels: Readonly<Record<string, string>> },
  policies: readonly CompiledPolicy[],
) => policies.find((p) => matchesLabels(p.requirements, node.labels));

/** The host share: a node labelled with a host id and N offers 1/N of the host's capacity. */
export function hostShare(node: NodeInput): { host: string; kubelets: number; size: Amounts } | undefined {
  const host = node.labels[HOST_ID_LABEL];
  const n = Number(node.labels[KUBELETS_PER_HOST_LABEL]);
  if (!host || !Number.isInteger(n) || n < 1) return undefined;
  // Every kubelet on the host reports the whole host as capacity; its own system reserve stays its own.
  const hidden = (r: 'cpu' | 'memory') => Math.ceil((node.capacity[r] * (n - 1)) / n);
  return {
    host,
    kubelets: n,
    size: amounts(
      Math.max(0, node.allocatable.cpu - hidden('cpu')),
      Math.max(0, node.allocatable.memory - hidden('memory')),
    ),
  };
}

export function desiredSize(
  node: NodeInput,
  explicit: ExplicitRequest | undefined,
  policies: readonly CompiledPolicy[],
  memory: NodeMemory,
  now: number,
): Desired | undefined {
  const within = (size: Amounts, source: SizeSource): Desired => {
    const size2 = min(size, node.allocatable);
    return { size: size2, source, clamped: size2.cpu !== size.cpu || size2.memory !== size.memory };
  };
  if (explicit)
    return within(explicit.size, { kind: 'explicit', via: explicit.via, requestedAt: explicit.requestedAt });
  const p = policyFor(node, policies);
  if (p) {
    const wanted = policySize(p.policy, node.workloads);
    const { size, held } = holdShrinks(
      wanted,
      memory.size,
      memory.lastShrinkAt,
      now,
      p.policy.shrinkCooldownMinutes * 60_000,
    );
    return within(size, { kind: 'policy', policy: p.policy.name, held });
  }
  const share = hostShare(node);
  if (share) return within(share.size, { kind: 'host', host: share.host, kubelets: share.kubelets });
  return undefined;
}
