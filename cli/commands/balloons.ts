import { parse as parseYaml } from 'yaml';
import {
  type Amounts,
  amounts,
  capacityOf,
  describeAmounts,
  pairText,
  quantitiesOf,
} from '../../shared/balloons/amounts.js';
import { autoscalerWarnings } from '../../shared/balloons/autoscalers.js';
import { type BalloonPolicy, PolicyError, validatePolicy } from '../../shared/balloons/policy.js';
import { readNode } from '../../shared/balloons/read.js';
import { checkAgainstNode, parseResizeRequest, ResizeRequestError } from '../../shared/balloons/requests.js';
import type { BalloonStore, ClusterBalloons, NodeState } from '../../shared/balloons/store.js';
import { DynamoBalloonStore } from '../../shared/balloons/store-dynamo.js';
import {
  CAPACITY_COLUMNS,
  figuresOf,
  monthlyValue,
  poolOf,
  poolValues,
  resizePreemptionText,
} from '../../shared/balloons/summary-model.js';
import { ClusterSnapshot } from '../../shared/cycle/snapshot.js';
import { clusterAccess } from '../../shared/fleet/cluster-access.js';
import { RawReader } from '../../shared/k8s/raw-reader.js';
import { textTable } from '../../shared/kernel/text-table.js';
import { NONE, readableUsd } from '../../shared/kernel/units-format.js';
import { type CliCommand, readInput, runSubcommand, UsageError } from '../command.js';
import { type CliContext, parseFlags, registeredCluster, targetOptions, withContext } from '../context.js';
import { isDocument, outputFormat, outputOptions, print } from '../output.js';

const usage = `usage:
  fleetscope balloons status [--cluster NAME] [--node NODE] [--pool POOL]
                            [--sort-by node|pool|free|balloon|blocked] [-o table|wide|json|yaml]
  fleetscope balloons resize --cluster NAME --node NODE --cpu Q --memory Q [--by TEXT]
  fleetscope balloons resize --cluster NAME --node NODE --clear
  fleetscope balloons policy set    --cluster NAME --name POLICY --selector SEL --max-cpu Q --max-memory Q
                                    [--min-cpu Q --min-memory Q] [--headroom-percent N]
                                    [--headroom-min-cpu Q --headroom-min-memory Q]
                                    [--step-cpu Q --step-memory Q] [--cooldown-minutes N]
  fleetscope balloons policy set    --cluster NAME --file FILE|-      (YAML or JSON, the same fields)
  fleetscope balloons policy get    --cluster NAME [--name POLICY] [-o table|json|yaml]
  fleetscope balloons policy delete --cluster NAME --name POLICY

  status   per node: allocatable, balloon (capacity that doesn't exist), requested by workloads,
           used (metrics API), free, the size asked for and where from, and blocked reclaims
  resize   the node should offer this much from now on (the VM was resized, or is about to be):
           checked against the node's allocatable, then served at once; --clear drops it
  policy   size a node pool: workloads' requests + headroom (percent, at least the minimum),
           within min..max, in steps, shrinking at most once per cool-down

Sizes are Kubernetes quantities (cpu: 6, 500m; memory: 24Gi, 512Mi).
  --state-dir DIR   local state (default .fleetscope, or FLEETSCOPE_STATE_DIR)
  --aws             act on the deployed stack instead (--stack NAME, default Fleetscope; --region R)`;

const options = {
  ...targetOptions,
  ...outputOptions,
  cluster: { type: 'string' },
  node: { type: 'string' },
  pool: { type: 'string' },
  'sort-by': { type: 'string' },
  cpu: { type: 'string' },
  memory: { type: 'string' },
  by: { type: 'string' },
  clear: { type: 'boolean' },
  name: { type: 'string' },
  selector: { type: 'string' },
  file: { type: 'string' },
  'max-cpu': { type: 'string' },
  'max-memory': { type: 'string' },
  'min-cpu': { type: 'string' },
  'min-memory': { type: 'string' },
  'headroom-percent': { type: 'string' },
  'headroom-min-cpu': { type: 'string' },
  'headroom-min-memory': { type: 'string' },
  'step-cpu': { type: 'string' },
  'step-memory': { type: 'string' },
  'cooldown-minutes': { type: 'string' },
} as const;

type Flags = ReturnType<typeof parseFlags<typeof options>>['values'];

export const command: CliCommand = {
  name: 'balloons',
  summary: 'resizable nodes with balloon pods (KEP-5620): status, explicit sizes, pool policies',
  usage,
  outputs: {
    status: 'data',
    resize: 'action',
    'policy set': 'action',
    'policy get': 'data',
    'policy delete': 'action',
  },
  async run(args) {
    const { values, positionals } = parseFlags(args, options);
    if (positionals[0] === 'policy') {
      return runSubcommand(positionals.slice(1), {
        set: () => policySet(values),
        get: () => policyGet(values),
        delete: () => policyDelete(values),
      });
    }
    return runSubcommand(positionals, { status: () => status(values), resize: () => resize(values) });
  },
};

async function registered(ctx: CliContext, cluster: string | undefined, what: string): Promise<string> {
  if (!cluster) throw new UsageError(`${what} needs --cluster`);
  await registeredCluster(ctx, cluster);
  return cluster;
}

function nodeJson(node: string, s: NodeState) {
  const f = figuresOf(s);
  return {
    node,
    pool: poolOf(s),
    ...(s.source ? { source: s.source } : {}),
    ...(s.autoscaler ? { autoscaler: s.autoscaler } : {}),
    allocatable: capacityOf(f.allocatable),
    balloon: capacityOf(f.balloon),
    workloads: capacityOf(f.workloads),
    ...(f.used ? { used: capacityOf(f.used) } : {}),
    free: capacityOf(f.free),
    ...(s.desired ? { desired: capacityOf(s.desired) } : {}),
    ...(s.blocked
      ? {
          blocked: {
            missing: capacityOf(s.blocked.missing),
            podsInTheWay: s.blocked.pods.map((p) => ({
              namespace: p.namespace,
              name: p.name,
              ...quantitiesOf(p.requests),
            })),
            since: new Date(s.blocked.since).toISOString(),
          },
        }
      : {}),
    ...(s.resize
      ? { resize: { state: s.resize.state, ...(s.resize.message ? { message: s.resize.message } : {}) } }
      : {}),
    ...(s.overcommitted ? { overcommitted: capacityOf(s.overcommitted) } : {}),
    ...(s.overcommittedByUsage ? { overcommittedByUsage: capacityOf(s.overcommittedByUsage) } : {}),
    ...(s.usageFloor ? { usageFloor: capacityOf(s.usageFloor) } : {}),
    ...(s.resizePreemption ? { resizePreemption: s.resizePreemption } : {}),
    ...(s.price
      ? {
          instanceType: s.price.instanceType,
          hourlyUsd: s.price.hourlyUsd,
          priceFrom: s.price.from,
          balloonMonthlyUsd: round2(monthlyValue(s) ?? 0),
        }
      : {}),
  };
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/** A cluster's money: the monthly value of its ballooned capacity, per pool and in all. */
function clusterMoney(c: ClusterBalloons) {
  const pools = poolValues(Object.values(c.nodes));
  return {
    balloonMonthlyUsd: round2(pools.reduce((a, p) => a + p.monthlyUsd, 0)),
    pools: pools.map((p) => ({
      pool: p.pool,
      balloonMonthlyUsd: round2(p.monthlyUsd),
      unpricedNodes: p.unpriced,
    })),
  };
}

/** The wide table's money lines: per cluster, then per pool; unpriced nodes said, not counted as $0. */
function moneyLines(states: ClusterBalloons[]): string[] {
  const lines: string[] = [];
  for (const c of states) {
    const m = clusterMoney(c);
    if (m.pools.length === 0) continue;
    lines.push(
      `${c.cluster}: ballooned capacity worth ${readableUsd(m.balloonMonthlyUsd)}/month at the nodes' prices`,
    );
    for (const p of m.pools)
      lines.push(
        `  pool ${p.pool}: ${readableUsd(p.balloonMonthlyUsd)}/month${p.unpricedNodes ? ` (${p.unpricedNodes} node(s) without a known price: set prices in the policy)` : ''}`,
      );
  }
  return lines;
}

/** The status table (exported for its tests). */
export function statusTable(states: ClusterBalloons[], wide: boolean): string[] {
  const K = CAPACITY_COLUMNS;
  const head: string[] = [
    'CLUSTER',
    K.node,
    K.pool,
    K.allocatable,
    K.balloon,
    K.workloads,
    K.free,
    K.blocked,
  ];
  if (wide)
    head.push(
      K.offers,
      K.used,
      K.desired,
      'RESIZE',
      'PODS IN THE WAY',
      'OVER-COMMITTED BY',
      'BOUNDED BY USAGE',
      'BALLOON $/MONTH',
      'RESIZE PREEMPTION',
    );
  const rows: string[][] = [];
  for (const c of states)
    for (const [node, s] of Object.entries(c.nodes)) {
      const f = figuresOf(s);
      const row = [
        c.cluster,
        node,
        poolOf(s),
        pairText(f.allocatable),
        pairText(f.balloon),
        pairText(f.workloads),
        pairText(f.free),
        pairText(s.blocked?.missing),
      ];
      if (wide)
        row.push(
          pairText(s.size),
          pairText(f.used),
          pairText(s.desired),
          s.resize?.state ?? NONE,
          s.blocked?.pods.map((p) => `${p.namespace}/${p.name}`).join(',') ?? NONE,
          overcommitText(s),
          s.usageFloor ? pairText(s.usageFloor) : NONE,
          s.price ? `${s.price.instanceType} ${readableUsd(monthlyValue(s) ?? 0)}` : NONE,
          resizePreemptionText(s) ?? NONE,
        );
      rows.push(row);
    }
  const impostors = states.flatMap((c) =>
    (c.impostors ?? []).map(
      (p) =>
        `${c.cluster}: impostor ${p.namespace}/${p.name}${p.node ? ` on ${p.node}` : ''} carries the balloon label but is not fleetscope's (counted as a workload, never resized)`,
    ),
  );
  return [...textTable([head, ...rows]), ...(wide ? moneyLines(states) : []), ...impostors];
}

/** --sort-by keys of balloons status: node rows within each cluster (default: by name). */
const NODE_SORTS: Record<string, (a: [string, NodeState], b: [string, NodeState]) => number> = {
  node: ([a], [b]) => a.localeCompare(b),
  pool: ([an, a], [bn, b]) => poolOf(a).localeCompare(poolOf(b)) || an.localeCompare(bn),
  free: ([, a], [, b]) => figuresOf(b).free.cpu - figuresOf(a).free.cpu,
  balloon: ([, a], [, b]) => b.balloon.cpu - a.balloon.cpu,
  blocked: ([, a], [, b]) => Number(Boolean(b.blocked)) - Number(Boolean(a.blocked)),
};

async function status(values: Flags): Promise<number> {
  const format = outputFormat(values);
  const sort = NODE_SORTS[values['sort-by'] ?? 'node'];
  if (!sort)
    throw new UsageError(`--sort-by ${values['sort-by']}: use one of ${Object.keys(NODE_SORTS).join(', ')}`);
  return withContext(values, async (ctx) => {
    const store = new DynamoBalloonStore(ctx.db, ctx.table);
    const names = values.cluster
      ? [await registered(ctx, values.cluster, 'status')]
      : (await ctx.registry.list()).map((c) => c.name);
    const found = await Promise.all(names.map(async (n) => [n, await store.state(n)] as const));
    const states = found.flatMap(([, s]) => (s ? [s] : []));
    // A node no cycle has seen, where a cycle has run, is a name that does not exist (exit 1).
    if (values.node && states.length && !states.some((s) => values.node! in s.nodes))
      throw new Error(
        `node "${values.node}" is not among the nodes the balloon cycle saw in ${states.map((s) => s.cluster).join(', ')} (balloons status lists them)`,
      );
    const keep = ([n, st]: [string, NodeState]) =>
      (!values.node || n === values.node) && (!values.pool || poolOf(st) === values.pool);
    for (const s of states) s.nodes = Object.fromEntries(Object.entries(s.nodes).filter(keep).sort(sort));
    const data = {
      clusters: states.map((s) => ({
        cluster: s.cluster,
        at: new Date(s.at).toISOString(),
        nodes: Object.entries(s.nodes).map(([n, st]) => nodeJson(n, st)),
        ...clusterMoney(s),
        ...(s.impostors?.length ? { impostors: s.impostors } : {}),
        errors: s.errors,
      })),
    };
    if (states.every((s) => Object.keys(s.nodes).length === 0) && !isDocument(format)) {
      for (const line of await whyNoBalloons(store, found, values)) console.log(line);
      return 0;
    }
    print(format, data, (wide) => statusTable(states, wide));
    if (!isDocument(format))
      for (const c of data.clusters)
        for (const w of autoscalerWarnings(c.nodes)) console.log(`${c.cluster}: ${w}`);
    return 0;
  });
}

/** Why status has no rows, per cluster: no clusters, no cycle yet, the filters, or nothing asks for balloons. */
async function whyNoBalloons(
  store: BalloonStore,
  found: (readonly [string, ClusterBalloons | undefined])[],
  values: Flags,
): Promise<string[]> {
  if (found.length === 0)
    return ['no balloons: no clusters registered (fleetscope cluster register adds one)'];
  const lines = ['no balloons:'];
  for (const [cluster, state] of found)
    lines.push(`  ${cluster}: ${await whyNoneIn(store, cluster, state, values)}`);
  return lines;
}

async function whyNoneIn(
  store: BalloonStore,
  cluster: string,
  state: ClusterBalloons | undefined,
  values: Flags,
): Promise<string> {
  if (state && (values.node || values.pool))
    return `no ${values.node ? `node ${values.node}` : `pool ${values.pool}`} with a balloon`;
  // Without a policy or an explicit size the cycle keeps no balloon state: say so, not "no cycle yet".
  const { policies, requests } = await store.load(cluster);
  if (policies.length === 0 && requests.length === 0)
    return 'no balloon policy (fleetscope balloons policy set), explicit size (balloons resize) or shared host (fleetscope.io/host-id) asks for balloons';
  if (!state) return `no cycle has run yet (fleetscope run --once --cluster ${cluster})`;
  return 'its policies match no node, or no cycle has sized one yet';
}

/** Sets (or with --clear drops) a node's explicit size: validated here, applied by the next cycle. */
async function resize(values: Flags): Promise<number> {
  return withContext(values, async (ctx) => {
    const cluster = await registered(ctx, values.cluster, 'resize');
    const { node } = values;
    if (!node) throw new UsageError('resize needs --node');
    const store = new DynamoBalloonStore(ctx.db, ctx.table);
    if (values.clear) {
      await clearSize(store, cluster, node, values);
      return 0;
    }
    const size = await checkedSize(ctx, cluster, node, values);
    await requestSize(ctx, cluster, node, size, values.by);
    // Locally the cycle has run when the bus drains: say what the balloon became.
    if (ctx.runtime) {
      await ctx.runtime.bus.drain();
      const after = balloonAfterResize(await store.state(cluster), node);
      if (after) console.log(after);
    }
    return 0;
  });
}

async function clearSize(store: BalloonStore, cluster: string, node: string, values: Flags): Promise<void> {
  if (values.cpu || values.memory) throw new UsageError('--clear takes no --cpu or --memory');
  const had = (await store.deleteRequest(cluster, node)) === 'removed';
  console.log(
    had
      ? `cleared: node ${node} is sized by its policy or host share again from the next cycle (or its balloon deflates)`
      : `node ${node} of cluster ${cluster} had no explicit size`,
  );
}

/**
 * --cpu and --memory as amounts: a value that does not parse is a usage error (exit 2); a node that does
 * not exist or cannot offer the size is the cluster saying no (exit 1, as for an unknown cluster).
 */
async function checkedSize(ctx: CliContext, cluster: string, node: string, values: Flags): Promise<Amounts> {
  if (values.cpu === undefined || values.memory === undefined)
    throw new UsageError('resize needs --cpu and --memory (or --clear)');
  let size: Amounts;
  try {
    size = parseResizeRequest({ node, cpu: values.cpu, memory: values.memory }).size;
  } catch (err) {
    if (err instanceof ResizeRequestError) throw new UsageError(err.message);
    throw err;
  }
  const reg = (await ctx.registry.get(cluster))!;
  const client = await clusterAccess().client(cluster, reg.kubeconfig);
  const facts = await readNode(new ClusterSnapshot(new RawReader(client), { pageSize: 500 }), node);
  checkAgainstNode(size, node, facts ? amounts(facts.allocatableCpu, facts.allocatableMemory) : undefined);
  return size;
}

async function requestSize(
  ctx: CliContext,
  cluster: string,
  node: string,
  size: Amounts,
  by: string | undefined,
): Promise<void> {
  await ctx.publisher.publish([
    {
      detailType: 'NodeResizeRequested',
      detail: {
        cluster,
        node,
        ...quantitiesOf(size),
        ...(by ? { requestedBy: by } : {}),
        requestedAt: new Date().toISOString(),
      },
      resources: [`cluster/${cluster}`],
    },
  ]);
  console.log(`requested: node ${node} of cluster ${cluster} offers ${describeAmounts(size)}`);
}

/** The node's balloon after the cycle: its size, or what blocked it; nothing if the node has none. */
function balloonAfterResize(state: ClusterBalloons | undefined, node: string): string | undefined {
  const s = state?.nodes[node];
  if (s?.blocked)
    return `blocked: the balloon could not take back ${pairText(s.blocked.missing)}; pods in the way: ${s.blocked.pods.map((p) => `${p.namespace}/${p.name}`).join(', ')}`;
  if (s) return `balloon now ${pairText(s.balloon)} (the node offers ${pairText(s.size)})`;
  return undefined;
}

/** OVER-COMMITTED BY: the requests' figure, or usage's where that is larger (said so). */
const overcommitText = (s: NodeState): string =>
  s.overcommittedByUsage
    ? `${pairText(s.overcommittedByUsage)} (by usage)`
    : s.overcommitted
      ? pairText(s.overcommitted)
      : NONE;

function policyInput(values: Flags): Record<string, unknown> {
  const pairOf = (cpu: string | undefined, memory: string | undefined, name: string) => {
    if (cpu === undefined && memory === undefined) return undefined;
    if (cpu === undefined || memory === undefined)
      throw new UsageError(`--${name}-cpu and --${name}-memory go together`);
    return { cpu, memory };
  };
  return Object.fromEntries(
    Object.entries({
      name: values.name,
      selector: values.selector,
      max: pairOf(values['max-cpu'], values['max-memory'], 'max'),
      min: pairOf(values['min-cpu'], values['min-memory'], 'min'),
      headroomMin: pairOf(values['headroom-min-cpu'], values['headroom-min-memory'], 'headroom-min'),
      step: pairOf(values['step-cpu'], values['step-memory'], 'step'),
      headroomPercent: values['headroom-percent'],
      shrinkCooldownMinutes: values['cooldown-minutes'],
    }).filter(([, v]) => v !== undefined),
  );
}

async function policySet(values: Flags): Promise<number> {
  let input = values.file ? parseYaml(await readInput(values.file)) : policyInput(values);
  if (values.file && (typeof input !== 'object' || input === null))
    throw new UsageError(`${values.file}: not a policy object`);
  if (values.file && values.name) input = { ...input, name: values.name };
  let policy: BalloonPolicy;
  try {
    policy = validatePolicy(input);
  } catch (err) {
    if (err instanceof PolicyError) throw new UsageError(`policy ${err.message}`);
    throw err;
  }
  return withContext(values, async (ctx) => {
    const cluster = await registered(ctx, values.cluster, 'policy set');
    await new DynamoBalloonStore(ctx.db, ctx.table).putPolicy(cluster, policy);
    console.log(
      `policy ${policy.name} set in cluster ${cluster}: nodes matching "${policy.selector}" are sized from the next cycle`,
    );
    return 0;
  });
}

const policyJson = (p: BalloonPolicy) => ({
  name: p.name,
  selector: p.selector,
  headroomPercent: p.headroomPercent,
  headroomMin: capacityOf(p.headroomMin),
  min: capacityOf(p.min),
  max: capacityOf(p.max),
  step: capacityOf(p.step),
  shrinkCooldownMinutes: p.shrinkCooldownMinutes,
});

async function policyGet(values: Flags): Promise<number> {
  const format = outputFormat(values);
  return withContext(values, async (ctx) => {
    const cluster = await registered(ctx, values.cluster, 'policy get');
    const { policies } = await new DynamoBalloonStore(ctx.db, ctx.table).load(cluster);
    const shown = policies.filter((p) => !values.name || p.name === values.name);
    if (values.name && shown.length === 0)
      throw new Error(`cluster ${cluster} has no balloon policy "${values.name}"`);
    if (shown.length === 0 && !isDocument(format)) {
      console.log(`no balloon policies in cluster ${cluster}`);
      return 0;
    }
    print(format, { cluster, policies: shown.map(policyJson) }, () =>
      textTable([
        ['NAME', 'SELECTOR', 'HEADROOM', 'MIN', 'MAX', 'STEP', 'COOL-DOWN'],
        ...shown.map((p) => [
          p.name,
          p.selector,
          `${p.headroomPercent}% (>= ${pairText(p.headroomMin)})`,
          pairText(p.min),
          pairText(p.max),
          pairText(p.step),
          `${p.shrinkCooldownMinutes}m`,
        ]),
      ]),
    );
    return 0;
  });
}

async function policyDelete(values: Flags): Promise<number> {
  return withContext(values, async (ctx) => {
    const cluster = await registered(ctx, values.cluster, 'policy delete');
    if (!values.name) throw new UsageError('policy delete needs --name');
    if ((await new DynamoBalloonStore(ctx.db, ctx.table).deletePolicy(cluster, values.name)) === 'absent')
      throw new Error(`cluster ${cluster} has no balloon policy "${values.name}"`);
    console.log(
      `policy ${values.name} deleted from cluster ${cluster}: its nodes' balloons deflate from the next cycle`,
    );
    return 0;
  });
}
