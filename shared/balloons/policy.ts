/**
 * Balloon policies: the autoscaling story of KEP-5620. A policy selects a node pool by label and sizes
 * each node of it to what its workloads request plus a headroom, bounded and moved in steps, with a
 * cool-down between shrinks so that a node is not squeezed and released on every cycle.
 */
import { parseLabelSelector, SelectorError } from '../kernel/label-selector.js';
import { rfc1123LabelProblem } from '../kernel/names.js';
import {
  AmountError,
  type Amounts,
  amounts,
  amountWords,
  parseAmounts,
  RESOURCES,
  type Resource,
} from './amounts.js';

export interface BalloonPolicy {
  /** DNS label, unique in the cluster. */
  name: string;
  /** Label selector of the nodes it sizes (the kubectl string form). */
  selector: string;
  /** Headroom above the workloads' requests: percent of them, and at least headroomMin. */
  headroomPercent: number;
  headroomMin: Amounts;
  /** Bounds of the node's effective size. */
  min: Amounts;
  max: Amounts;
  /** The effective size moves in multiples of this (rounded up: never below what is needed). */
  step: Amounts;
  /** A node is shrunk at most once per cool-down; it grows at once. */
  shrinkCooldownMinutes: number;
  /** USD per hour by instance type, over the shipped EC2 table (./prices.ts), to value ballooned capacity. */
  prices?: Record<string, number>;
}

export class PolicyError extends Error {
  override name = 'PolicyError';
}

export const POLICY_DEFAULTS = {
  headroomPercent: 10,
  headroomMin: { cpu: '250m', memory: '256Mi' },
  min: { cpu: '500m', memory: '512Mi' },
  step: { cpu: '250m', memory: '256Mi' },
  shrinkCooldownMinutes: 10,
} as const;

type PolicyInput = Partial<Record<keyof BalloonPolicy, unknown>>;

/** Decimal only: Number() would also take "0x10" as 16, "1e2" as 100 and " " as 0. */
const DECIMAL = /^\s*\d+(\.\d+)?\s*$/;

function number(field: string, v: unknown, lo: number, hi: number): number {
  const n = typeof v === 'string' && DECIMAL.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n) || n < lo || n > hi)
    throw new PolicyError(`${field}: must be a number from ${lo} to ${hi} (got ${JSON.stringify(v)})`);
  return n;
}

function pair(field: string, v: unknown): Amounts {
  try {
    return parseAmounts(field, v as { cpu?: unknown; memory?: unknown });
  } catch (err) {
    if (err instanceof AmountError) throw new PolicyError(err.message);
    throw err;
  }
}

/**
 * A policy from user input (CLI flags, a file), with defaults for what is left out. Every refusal names
 * the field; nothing is stored until this has passed.
 */
const FIELDS = new Set<string>([
  'name',
  'selector',
  'headroomPercent',
  'headroomMin',
  'min',
  'max',
  'step',
  'shrinkCooldownMinutes',
  'prices',
]);

export function validatePolicy(input: PolicyInput): BalloonPolicy {
  // A misspelt field would silently leave its default in place ("headroomPercnt: 50" stores 10%).
  const unknown = Object.keys(input).filter((k) => !FIELDS.has(k));
  if (unknown.length > 0)
    throw new PolicyError(`${unknown[0]}: unknown field (a policy has ${[...FIELDS].join(', ')})`);
  const name = String(input.name ?? '');
  const problem = rfc1123LabelProblem(name, 'name');
  if (problem) throw new PolicyError(`name: ${problem}`);
  if (typeof input.selector !== 'string' || input.selector.trim() === '')
    throw new PolicyError('selector: a node label selector is required (for example "pool=batch")');
  try {
    parseLabelSelector(input.selector);
  } catch (err) {
    if (err instanceof SelectorError) throw new PolicyError(`selector: ${err.message}`);
    throw err;
  }
  if (input.max === undefined) throw new PolicyError('max: cpu and memory are required');
  const policy: BalloonPolicy = {
    name,
    selector: input.selector.trim(),
    headroomPercent: number(
      'headroomPercent',
      input.headroomPercent ?? POLICY_DEFAULTS.headroomPercent,
      0,
      1000,
    ),
    headroomMin: pair('headroomMin', input.headroomMin ?? POLICY_DEFAULTS.headroomMin),
    min: pair('min', input.min ?? POLICY_DEFAULTS.min),
    max: pair('max', input.max),
    step: pair('step', input.step ?? POLICY_DEFAULTS.step),
    shrinkCooldownMinutes: number(
      'shrinkCooldownMinutes',
      input.shrinkCooldownMinutes ?? POLICY_DEFAULTS.shrinkCooldownMinutes,
      0,
      7 * 24 * 60,
    ),
  };
  if (input.prices !== undefined) policy.prices = prices(input.prices);
  for (const r of RESOURCES) {
    if (policy.min[r] > policy.max[r])
      throw new PolicyError(
        `min.${r}: ${amountWords(r, policy.min[r])} exceeds max.${r} ${amountWords(r, policy.max[r])}`,
      );
    if (policy.step[r] <= 0) throw new PolicyError(`step.${r}: must be greater than zero`);
    if (policy.max[r] <= 0)
      throw new PolicyError(`max.${r}: must be greater than zero (a node offering no ${r} can never grow)`);
  }
  return policy;
}

const INSTANCE_TYPE = /^[a-z0-9]([a-z0-9.-]{0,61}[a-z0-9])?$/i;

/** prices: instance type -> USD per hour, each named in the error when it is not one. */
function prices(v: unknown): Record<string, number> {
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    throw new PolicyError(
      'prices: a map of instance type to USD per hour is required (for example {"m5.large": 0.096})',
    );
  const out: Record<string, number> = {};
  for (const [type, price] of Object.entries(v)) {
    if (!INSTANCE_TYPE.test(type))
      throw new PolicyError(
        `prices: ${JSON.stringify(type)} is not an instance type (node.kubernetes.io/instance-type value)`,
      );
    out[type] = number(`prices.${type}`, price, 0, 1000);
  }
  return out;
}

const roundUp = (v: number, step: number) => Math.ceil(v / step) * step;

/**
 * The size a policy wants for a node whose workloads request `workloads`: requests + headroom, rounded
 * up to the step, within [min, max] (max wins over the step: it is a hard bound).
 */
export function policySize(policy: BalloonPolicy, workloads: Amounts): Amounts {
  const one = (r: Resource) => {
    const headroom = Math.max(
      Math.ceil((workloads[r] * policy.headroomPercent) / 100),
      policy.headroomMin[r],
    );
    const stepped = roundUp(workloads[r] + headroom, policy.step[r]);
    return Math.min(policy.max[r], Math.max(policy.min[r], stepped));
  };
  return amounts(one('cpu'), one('memory'));
}

/**
 * The cool-down: a resource whose size would shrink keeps its current size until `cooldown` has passed
 * since the node last shrank. Growth is never held back.
 */
export function holdShrinks(
  wanted: Amounts,
  current: Amounts | undefined,
  lastShrinkAt: number | undefined,
  now: number,
  cooldownMs: number,
): { size: Amounts; held: boolean } {
  if (!current || lastShrinkAt === undefined || now - lastShrinkAt >= cooldownMs)
    return { size: wanted, held: false };
  let held = false;
  const one = (r: Resource) => {
    if (wanted[r] < current[r]) {
      held = true;
      return current[r];
    }
    return wanted[r];
  };
  return { size: amounts(one('cpu'), one('memory')), held };
}
