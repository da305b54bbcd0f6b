/**
 * Explicit node sizes (NodeResizeRequested, `fleetscope balloons resize`): checked against the node
 * before anything is stored. The error names the field and the rule it broke.
 */
import { rfc1123SubdomainProblem } from '../kernel/names.js';
import { AmountError, type Amounts, amounts, amountWords, parseAmount, RESOURCES } from './amounts.js';
import type { ExplicitRequest } from './desired.js';

export class ResizeRequestError extends Error {
  override name = 'ResizeRequestError';
}

export interface RawResizeRequest {
  node: string;
  cpu: unknown;
  memory: unknown;
}

/** The request's own fields (node name, quantities); the node itself is checked by `checkAgainstNode`. */
export function parseResizeRequest(raw: RawResizeRequest): { node: string; size: Amounts } {
  const problem = rfc1123SubdomainProblem(raw.node, 'node');
  if (problem) throw new ResizeRequestError(problem);
  try {
    const size = amounts(parseAmount('cpu', 'cpu', raw.cpu), parseAmount('memory', 'memory', raw.memory));
    for (const r of RESOURCES)
      if (size[r] === 0)
        throw new ResizeRequestError(
          `${r}: must be greater than zero (node ${raw.node} would offer its pods no ${r}; use --clear to give the node back)`,
        );
    return { node: raw.node, size };
  } catch (err) {
    if (err instanceof AmountError) throw new ResizeRequestError(err.message);
    throw err;
  }
}

/** A size the node cannot offer (above its allocatable) is refused, naming the resource. */
export function checkAgainstNode(size: Amounts, node: string, allocatable: Amounts | undefined): void {
  if (!allocatable) throw new ResizeRequestError(`node: "${node}" does not exist in the cluster`);
  for (const r of RESOURCES) {
    if (size[r] > allocatable[r]) {
      throw new ResizeRequestError(
        `${r}: ${amountWords(r, size[r])} exceeds node ${node}'s allocatable ${amountWords(r, allocatable[r])} (a node cannot offer more than it has; resize the VM first)`,
      );
    }
  }
}

export const explicitRequest = (
  node: string,
  size: Amounts,
  via: string,
  at: number,
  nodeUid?: string,
): ExplicitRequest => ({ node, size, requestedAt: at, via, ...(nodeUid ? { nodeUid } : {}) });

/**
 * Why an explicit size no longer applies, or undefined while it does: a size belongs to the node object
 * it was set for. Its node is gone, or a node of that name is another object (cloud names are recycled):
 * another uid. (A size stored before sizes kept the uid is matched by name until it is set again.)
 */
export function staleRequest(r: ExplicitRequest, node: { uid?: string } | undefined): string | undefined {
  if (!node) return `node ${r.node} no longer exists`;
  if (r.nodeUid && node.uid && r.nodeUid !== node.uid)
    return `node ${r.node} is another node now (uid ${node.uid}; the size was set for uid ${r.nodeUid})`;
  return undefined;
}
