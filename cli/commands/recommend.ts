/**
 * `fleetscope recommend --input FILE`: one scope's recommendation computed offline from a history file,
 * with the same library the pipeline uses (shared/recommendation). See `fleetscope recommend --help`.
 */
import { z } from 'zod';
import { formatCpu, formatMemory, parseCpu, parseMemory } from '../../shared/kernel/quantity.js';
import { textTable } from '../../shared/kernel/text-table.js';
import type { Bytes, EpochMillis, Millicores } from '../../shared/kernel/units.js';
import {
  change,
  cpuCell,
  memoryCell,
  NONE,
  pairCell,
  readableCpu,
  readableMemory,
} from '../../shared/kernel/units-format.js';
import {
  addCpuSample,
  addMemorySample,
  type ContainerPolicy,
  type ContainerToRecommend,
  createState,
  OptionsError,
  parseGoDuration,
  parseRfc3339,
  type RecommenderOptions,
  type ResourceAmounts,
  recommend,
  recordOom,
  resolveOptions,
  type ScopeState,
  toCheckpoint,
} from '../../shared/recommendation/index.js';
import { type CliCommand, readInput, UsageError } from '../command.js';
import { parseFlags } from '../context.js';
import { outputFormat, outputOptions, print } from '../output.js';

const usage = `usage: fleetscope recommend --input FILE [-o json|yaml|table|wide]

Computes a recommendation offline from one pod's history, exactly as the upstream VPA recommender would
(fleetscope's per-node DaemonSet scope: give the history of the pod on one node).

  --input FILE   the history as JSON; "-" reads standard input
  -o FORMAT      json (default: the document a pipeline reads), yaml, table or wide (people)

input:
  {"containers": [{"name": "agent",
                   "cpuSamples":    [{"t": "2024-01-01T00:00:00Z", "millicores": 120}],
                   "memorySamples": [{"t": "2024-01-01T00:00:00Z", "bytes": 104857600}],
                   "ooms":          [{"t": "2024-01-02T03:04:05Z", "memoryRequestBytes": 134217728}],
                   "policy":   {"mode": "Auto" | "Off", "minAllowed": {"cpu": "50m", "memory": "64Mi"},
                                "maxAllowed": {...}, "controlledResources": ["cpu", "memory"],
                                "controlledValues": "RequestsAndLimits" | "RequestsOnly"},
                   "requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {...}}],
   "options": {"targetCpuPercentile": 0.9, "recommendationMarginFraction": 0.15,
               "podRecommendationMinCpuMillicores": 25, "podRecommendationMinMemoryMb": 250,
               "cpuHistogramDecayHalfLife": "24h", "memoryAggregationInterval": "24h",
               "memoryAggregationIntervalCount": 8, "oomBumpUpRatio": 1.2, "oomMinBumpUp": 104857600, ...}}
  Option names are the recommender's flags in camelCase; durations are Go durations ("24h", "1h30m").
  CPU samples are added in the order given; memory samples and OOMs in time order, a memory sample
  before an OOM at the same instant (the recommender sees a cycle's samples before its OOM events).

output (standard output):
  {"containers": [{"name", "target": {"cpuMillicores", "memoryBytes", "cpu", "memory"}, "lowerBound",
                   "upperBound", "uncappedTarget", "limits"?, "checkpoint"}]}
  A container with mode Off (or without CPU samples) gets no recommendation, only its checkpoint.
  "now" (the checkpoint's lastUpdateTime, and the end of the memory window in progress) is the latest
  sample or OOM time in the input. "limits" are the current limits scaled to the target, kept in the
  current limit/request ratio, for RequestsAndLimits containers that have limits.`;

const RFC3339_MESSAGE = 'not an RFC 3339 timestamp';

/** An RFC 3339 time, as epoch milliseconds (whole milliseconds only). */
const timestamp = z.string().transform((s, ctx) => {
  const t = parseRfc3339(s);
  if (t === undefined) {
    ctx.addIssue({ code: 'custom', message: RFC3339_MESSAGE });
    return z.NEVER;
  }
  if (t % 1_000_000n !== 0n) {
    ctx.addIssue({ code: 'custom', message: 'sub-millisecond precision is not supported' });
    return z.NEVER;
  }
  return Number(t / 1_000_000n) as EpochMillis;
});

const count = z
  .number()
  .int('must be an integer')
  .nonnegative('must not be negative')
  .max(Number.MAX_SAFE_INTEGER, 'is too large');

function quantity<T extends number>(parse: (s: string | number) => T, what: string) {
  return z.union([z.string(), z.number()]).transform((v, ctx) => {
    let amount: T;
    try {
      amount = parse(v);
    } catch (err) {
      ctx.addIssue({
        code: 'custom',
        message: `not a ${what} quantity: ${err instanceof Error ? err.message : err}`,
      });
      return z.NEVER;
    }
    if (!(amount >= 0) || !Number.isSafeInteger(amount)) {
      ctx.addIssue({ code: 'custom', message: `${what} must be a non-negative quantity` });
      return z.NEVER;
    }
    return amount;
  });
}

const cpuQuantity = quantity(parseCpu, 'CPU');
const memoryQuantity = quantity(parseMemory, 'memory');

const resourceList = z.object({ cpu: cpuQuantity.optional(), memory: memoryQuantity.optional() }).strict();

const goDuration = z.string().refine(
  (s) => {
    try {
      return parseGoDuration(s) > 0n;
    } catch {
      return false;
    }
  },
  { message: 'not a positive Go duration such as "24h", "1h30m" or "500ms"' },
);

const positiveInt = z.number().int('must be an integer').positive('must be positive');

const fraction = z.number().refine(Number.isFinite, 'must be a finite number');
// A percentile outside [0, 1] is a typo (90 for 0.9), not a request: refuse it rather than clamp.
const percentile = z
  .number()
  .min(0, 'a percentile is between 0 and 1')
  .max(1, 'a percentile is between 0 and 1');

const optionsSchema = z
  .object({
    targetCpuPercentile: percentile.optional(),
    recommendationLowerBoundCpuPercentile: percentile.optional(),
    recommendationUpperBoundCpuPercentile: percentile.optional(),
    targetMemoryPercentile: percentile.optional(),
    recommendationLowerBoundMemoryPercentile: percentile.optional(),
    recommendationUpperBoundMemoryPercentile: percentile.optional(),
    recommendationMarginFraction: fraction.optional(),
    podRecommendationMinCpuMillicores: z.number().nonnegative('must not be negative').optional(),
    podRecommendationMinMemoryMb: z.number().nonnegative('must not be negative').optional(),
    confidenceIntervalCpu: goDuration.optional(),
    confidenceIntervalMemory: goDuration.optional(),
    cpuHistogramDecayHalfLife: goDuration.optional(),
    memoryHistogramDecayHalfLife: goDuration.optional(),
    memoryAggregationInterval: goDuration.optional(),
    memoryAggregationIntervalCount: positiveInt.optional(),
    oomBumpUpRatio: z.number().nonnegative('must not be negative').optional(),
    oomMinBumpUp: z.number().nonnegative('must not be negative').optional(),
    oomMinBumpUpBytes: z.number().nonnegative('must not be negative').optional(),
    roundCpuMillicores: positiveInt.optional(),
    roundMemoryBytes: positiveInt.optional(),
    containerRecommendationMaxAllowedCpu: cpuQuantity.optional(),
    containerRecommendationMaxAllowedMemory: memoryQuantity.optional(),
  })
  .strict();

const containerSchema = z
  .object({
    name: z.string().min(1),
    cpuSamples: z.array(z.object({ t: timestamp, millicores: count }).strict()).default([]),
    memorySamples: z.array(z.object({ t: timestamp, bytes: count }).strict()).default([]),
    ooms: z.array(z.object({ t: timestamp, memoryRequestBytes: count }).strict()).default([]),
    policy: z
      .object({
        mode: z.enum(['Auto', 'Off']).optional(),
        minAllowed: resourceList.optional(),
        maxAllowed: resourceList.optional(),
        controlledResources: z.array(z.enum(['cpu', 'memory'])).optional(),
        controlledValues: z.enum(['RequestsAndLimits', 'RequestsOnly']).optional(),
      })
      .strict()
      .superRefine((policy, ctx) => {
        for (const r of ['cpu', 'memory'] as const) {
          const min = policy.minAllowed?.[r];
          const max = policy.maxAllowed?.[r];
          if (min !== undefined && max !== undefined && min > max)
            ctx.addIssue({ code: 'custom', path: ['minAllowed', r], message: `exceeds maxAllowed.${r}` });
        }
      })
      .optional(),
    requests: resourceList.optional(),
    limits: resourceList.optional(),
  })
  .strict();

const inputSchema = z
  .object({
    containers: z.array(containerSchema).superRefine((containers, ctx) => {
      const seen = new Set<string>();
      containers.forEach((c, i) => {
        if (seen.has(c.name))
          ctx.addIssue({
            code: 'custom',
            path: [i, 'name'],
            message: `container "${c.name}" is listed twice`,
          });
        seen.add(c.name);
      });
    }),
    options: optionsSchema.optional(),
  })
  .strict();

export type RecommendInput = z.input<typeof inputSchema>;
type ParsedInput = z.output<typeof inputSchema>;
type ParsedContainer = ParsedInput['containers'][number];

/** containers[0].cpuSamples[3].t */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out === '' ? String(p) : `.${String(p)}`;
  }
  return out || '(input)';
}

function describeIssue(issue: z.core.$ZodIssue): string[] {
  // One line per unknown field, named by its own path: "containers[0].foo: unknown field".
  if (issue.code === 'unrecognized_keys')
    return issue.keys.map((k) => `${formatPath([...issue.path, k])}: unknown field`);
  return [`${formatPath(issue.path)}: ${issue.message}`];
}

export class InputError extends Error {
  override name = 'InputError';
}

function parseInput(json: unknown): ParsedInput {
  const result = inputSchema.safeParse(json);
  if (!result.success) throw new InputError(result.error.issues.flatMap(describeIssue).join('\n'));
  const options = result.data.options ?? {};
  try {
    resolveOptions(options as RecommenderOptions);
  } catch (err) {
    if (err instanceof OptionsError) throw new InputError(`options.${err.message}`);
    throw err;
  }
  return result.data;
}

interface AmountsJson {
  cpuMillicores?: number;
  memoryBytes?: number;
  cpu?: string;
  memory?: string;
}

function amountsJson(r: ResourceAmounts): AmountsJson {
  const out: AmountsJson = {};
  if (r.cpu !== undefined) out.cpuMillicores = r.cpu;
  if (r.memory !== undefined) out.memoryBytes = r.memory;
  if (r.cpu !== undefined) out.cpu = formatCpu(r.cpu);
  if (r.memory !== undefined) out.memory = formatMemory(r.memory);
  return out;
}

type HistoryEvent = { t: EpochMillis; kind: 0; bytes: Bytes } | { t: EpochMillis; kind: 1; request: Bytes };

/**
 * Builds a container's state from its history: CPU samples in input order, then memory samples and
 * OOMs merged by time (stable; a memory sample before an OOM at the same instant).
 */
export function buildState(
  c: ParsedContainer,
  options: RecommenderOptions,
  fallbackCreation: EpochMillis,
): ScopeState {
  const times = [...c.cpuSamples, ...c.memorySamples, ...c.ooms].map((s) => s.t);
  const creation = times.length > 0 ? (Math.min(...times) as EpochMillis) : fallbackCreation;
  const state = createState(creation, options);
  for (const s of c.cpuSamples) addCpuSample(state, s.t, s.millicores as Millicores);
  const events: HistoryEvent[] = [
    ...c.memorySamples.map((s) => ({ t: s.t, kind: 0 as const, bytes: s.bytes as Bytes })),
    ...c.ooms.map((o) => ({ t: o.t, kind: 1 as const, request: o.memoryRequestBytes as Bytes })),
  ];
  events.sort((a, b) => a.t - b.t || a.kind - b.kind);
  for (const e of events) {
    if (e.kind === 0) addMemorySample(state, e.t, e.bytes);
    else recordOom(state, e.t, e.request);
  }
  return state;
}

export interface RecommendOutput {
  containers: Array<{
    name: string;
    /** The current requests (from the input), beside the recommendation. */
    requests?: AmountsJson;
    target?: AmountsJson;
    lowerBound?: AmountsJson;
    upperBound?: AmountsJson;
    uncappedTarget?: AmountsJson;
    limits?: AmountsJson;
    checkpoint: ReturnType<typeof toCheckpoint>;
  }>;
}

/** The whole command without I/O: validated input in, output document out. Throws InputError. */
export function runRecommend(json: unknown): RecommendOutput {
  const input = parseInput(json);
  const options = (input.options ?? {}) as RecommenderOptions;
  const allTimes = input.containers.flatMap((c) =>
    [...c.cpuSamples, ...c.memorySamples, ...c.ooms].map((s) => s.t),
  );
  if (allTimes.length === 0)
    throw new InputError('containers: no samples or OOMs, nothing to recommend from');
  // "now" is the latest event of the history: the recommender runs right after it.
  const now = allTimes.reduce((a, b) => (b > a ? b : a)) as EpochMillis;
  const states = new Map<string, ScopeState>();
  const toRecommend: ContainerToRecommend[] = input.containers.map((c) => {
    const state = buildState(c, options, now);
    states.set(c.name, state);
    const entry: ContainerToRecommend = { name: c.name, state };
    if (c.policy) entry.policy = c.policy as ContainerPolicy;
    if (c.requests) entry.requests = c.requests as ResourceAmounts;
    if (c.limits) entry.limits = c.limits as ResourceAmounts;
    return entry;
  });
  const recommendations = new Map(recommend(toRecommend, options).map((r) => [r.name, r]));
  return {
    containers: input.containers.map((c) => {
      const rec = recommendations.get(c.name);
      const checkpoint = toCheckpoint(states.get(c.name) as ScopeState, now);
      const requests = c.requests ? { requests: amountsJson(c.requests as ResourceAmounts) } : {};
      if (!rec) return { name: c.name, ...requests, checkpoint };
      return {
        name: c.name,
        ...requests,
        target: amountsJson(rec.target),
        lowerBound: amountsJson(rec.lowerBound),
        upperBound: amountsJson(rec.upperBound),
        uncappedTarget: amountsJson(rec.uncappedTarget),
        ...(rec.limits ? { limits: amountsJson(rec.limits) } : {}),
        checkpoint,
      };
    }),
  };
}

export const command: CliCommand = {
  name: 'recommend',
  summary: "compute one scope's recommendation offline from a history file",
  usage,
  outputs: { '': 'data' },
  async run(args: string[]): Promise<number> {
    const { values, positionals } = parseFlags(args, {
      input: { type: 'string', short: 'i' },
      ...outputOptions,
    } as const);
    // JSON stays the default: scripts read this command's output.
    const format = outputFormat({ ...values, output: values.output ?? 'json' });
    if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
    if (!values.input) throw new UsageError('--input FILE is required ("-" for standard input)');
    const text = await readInput(values.input); // its error names the file, and why (exit 1)
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      console.error(`fleetscope recommend: input: not JSON: ${err instanceof Error ? err.message : err}`);
      return 1;
    }
    let output: RecommendOutput;
    try {
      output = runRecommend(json);
    } catch (err) {
      if (err instanceof InputError) {
        console.error(
          err.message
            .split('\n')
            .map((line) => `fleetscope recommend: ${line}`)
            .join('\n'),
        );
        return 1;
      }
      throw err;
    }
    print(format, output, (wide) => recommendTable(output, wide));
    return 0;
  },
};

/** Current requests next to the target, with the change; the bounds (and wide: uncapped target, limits). */
function recommendTable(output: RecommendOutput, wide: boolean): string[] {
  const head = ['CONTAINER', 'CPU', 'MEMORY', 'CPU RANGE', 'MEMORY RANGE'];
  const range = (lo?: number, hi?: number, cell = cpuCell) => `${cell(lo)}..${cell(hi)}`;
  const rows = output.containers.map((c) => {
    const row = [
      c.name,
      change(c.requests?.cpuMillicores, c.target?.cpuMillicores, readableCpu),
      change(c.requests?.memoryBytes, c.target?.memoryBytes, readableMemory),
      range(c.lowerBound?.cpuMillicores, c.upperBound?.cpuMillicores),
      range(c.lowerBound?.memoryBytes, c.upperBound?.memoryBytes, memoryCell),
    ];
    if (wide)
      row.push(
        pairCell({ cpu: c.uncappedTarget?.cpuMillicores, memory: c.uncappedTarget?.memoryBytes }),
        c.limits ? pairCell({ cpu: c.limits.cpuMillicores, memory: c.limits.memoryBytes }) : NONE,
      );
    return row;
  });
  return textTable([wide ? [...head, 'UNCAPPED', 'LIMITS'] : head, ...rows]);
}
