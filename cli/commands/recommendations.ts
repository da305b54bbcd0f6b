import { clusterAccess, describeAccessError } from '../../shared/fleet/cluster-access.js';
import { textTable } from '../../shared/kernel/text-table.js';
import { amountFields, cpuCell, memoryCell } from '../../shared/kernel/units-format.js';
import { exportCheckpoints, importCheckpoints } from '../../shared/nodescope/checkpoints.js';
import { installScopedCrd } from '../../shared/nodescope/crd.js';
import { daemonSetPlacement, type PlacementCheck } from '../../shared/nodescope/daemonset-nodes.js';
import type { Amounts, ContainerRec } from '../../shared/nodescope/model.js';
import { getRecommendations, listDaemonSets } from '../../shared/nodescope/query.js';
import type { DsHead } from '../../shared/nodescope/store.js';
import { NodeScopeStore } from '../../shared/nodescope/store.js';
import type { VerticalPodAutoscalerCheckpoint } from '../../shared/recommendation/index.js';
import { type CliCommand, need, readInput, runSubcommand, UsageError } from '../command.js';
import { parseFlags, registeredCluster, targetOptions, withContext } from '../context.js';
import { whyNoNodeScope } from '../explain/empty-nodescope.js';
import { outputOptions, structured } from '../output.js';

const usage = `usage:
  fleetscope recommendations list [--cluster NAME] [-n NAMESPACE] [--sort-by name|nodes|scopes|as-of] [-o table|json|yaml]
  fleetscope recommendations get --cluster NAME --daemonset NAMESPACE/NAME [--node NODE] [--live] [-o table|json|yaml]
  fleetscope recommendations install-crd --cluster NAME
  fleetscope recommendations checkpoints --cluster NAME --daemonset NAMESPACE/NAME [--node NODE]
  fleetscope recommendations import-checkpoints --cluster NAME --daemonset NAMESPACE/NAME --file FILE|-

  list         the node-scoped DaemonSets (KEP-4943) of the fleet or of one cluster
  get          per-node recommendations next to the DaemonSet-wide one; --live recomputes them from the
               stored states (what the next cycle would compute), else what the last fold stored
  install-crd  install the VerticalPodAutoscaler CRD variant with spec.scope (enum, CEL rule) in a cluster
  checkpoints  the stored history as upstream VerticalPodAutoscalerCheckpoint objects (a List, JSON):
               one per node and container (spec.scopeValue = node) and one DaemonSet-wide per container
  import-checkpoints
               load node-scoped checkpoints (a List, or an array) as the history of nodes that have none

  --state-dir DIR   local state (default .fleetscope, or FLEETSCOPE_STATE_DIR)
  --aws             act on the deployed stack instead (--stack NAME, default Fleetscope; --region R)`;

const options = {
  ...targetOptions,
  cluster: { type: 'string' },
  daemonset: { type: 'string' },
  node: { type: 'string' },
  file: { type: 'string' },
  live: { type: 'boolean' },
  namespace: { type: 'string', short: 'n' },
  'sort-by': { type: 'string' },
  ...outputOptions,
} as const;

export const command: CliCommand = {
  name: 'recommendations',
  summary: 'node-scoped DaemonSet recommendations (KEP-4943): list, get per node, install the scoped VPA CRD',
  usage,
  async run(args) {
    const { values, positionals } = parseFlags(args, options);
    return runSubcommand(positionals, {
      list: () => list(values),
      get: () => get(values),
      'install-crd': () => installCrd(values),
      checkpoints: () => checkpoints(values),
      'import-checkpoints': () => importFrom(values),
    });
  },
};

type Flags = ReturnType<typeof parseFlags<typeof options>>['values'];

// Tables in the units people read (m or cores, Mi or Gi); VPA's uncapped 1e14 reads "unbounded".
const cpu = (a: Amounts | undefined) => cpuCell(a?.cpu);
const mem = (a: Amounts | undefined) => memoryCell(a?.memory);

/** One container's recommendation in the JSON/YAML vocabulary (unit-named numbers and quantities). */
function recFields(r: ContainerRec) {
  return Object.fromEntries(Object.entries(r).map(([k, a]) => [k, amountFields(a as Amounts)]));
}
const containersView = (cs: Record<string, ContainerRec>) =>
  Object.fromEntries(Object.entries(cs).map(([c, r]) => [c, recFields(r)]));

/** A DaemonSet's recommendations for -o json|yaml, every amount in the shared vocabulary. */
function recsView<R extends { dsWide: Record<string, ContainerRec>; nodes: Record<string, unknown> }>(
  recs: R,
) {
  const nodes = Object.fromEntries(
    Object.entries(recs.nodes as Record<string, { containers: Record<string, ContainerRec> }>).map(
      ([n, rec]) => [n, { ...rec, containers: containersView(rec.containers) }],
    ),
  );
  return { ...recs, dsWide: containersView(recs.dsWide), nodes };
}

/** --sort-by keys of recommendations list (default: cluster, then namespace/name). */
const HEAD_SORTS: Record<string, (a: DsHead, b: DsHead) => number> = {
  name: () => 0,
  nodes: (a, b) => b.stats.eligibleNodes - a.stats.eligibleNodes,
  scopes: (a, b) => b.stats.scopes - a.stats.scopes,
  'as-of': (a, b) => b.baseAt - a.baseAt,
};

async function list(values: Flags): Promise<number> {
  const sort = HEAD_SORTS[values['sort-by'] ?? 'name'];
  if (!sort) throw new UsageError(`--sort-by: use one of ${Object.keys(HEAD_SORTS).join(', ')}`);
  const out = structured(values);
  return withContext(values, async (ctx) => {
    if (values.cluster) await registeredCluster(ctx, values.cluster);
    const all = await listDaemonSets(new NodeScopeStore(ctx.db, ctx.table), values.cluster);
    const heads = all.filter((h) => !values.namespace || h.namespace === values.namespace).sort(sort);
    if (out) {
      out(heads);
      return 0;
    }
    if (heads.length === 0) {
      if (all.length) console.log(`no node-scoped DaemonSets in namespace ${values.namespace}`);
      else console.log(await whyNoNodeScope(ctx, values.cluster));
      return 0;
    }
    console.log(
      textTable([
        [
          'CLUSTER',
          'DAEMONSET',
          'VPA',
          'MODE',
          'NODES',
          'FALLBACK',
          'SCOPES',
          'PER-NODE VS DS-WIDE (CPU, MEM)',
          'AS OF',
        ],
        ...heads.map((h) => [
          h.cluster,
          `${h.namespace}/${h.name}`,
          h.vpa.name,
          h.updateMode,
          String(h.stats.eligibleNodes),
          String(h.stats.fallbackNodes),
          String(h.stats.scopes),
          `${delta(h.stats.perNodeCpu, h.stats.dsWideCpu)}, ${delta(h.stats.perNodeMemory, h.stats.dsWideMemory)}`,
          new Date(h.baseAt).toISOString(),
        ]),
      ]).join('\n'),
    );
    return 0;
  });
}

function delta(a: number, b: number): string {
  if (!b) return '-';
  const p = ((a - b) / b) * 100;
  return `${p >= 0 ? '+' : ''}${p.toFixed(0)}%`;
}

function daemonSetOf(
  values: Flags,
  what: string,
): { cluster: string; ds: string; namespace: string; name: string } {
  if (!values.cluster) throw new UsageError(`${what} needs --cluster`);
  const ds = values.daemonset;
  if (!ds?.includes('/')) throw new UsageError(`${what} needs --daemonset NAMESPACE/NAME`);
  const [namespace, name] = ds.split('/', 2) as [string, string];
  return { cluster: values.cluster, ds, namespace, name };
}

async function checkpoints(values: Flags): Promise<number> {
  const { cluster, ds, namespace, name } = daemonSetOf(values, 'checkpoints');
  return withContext(values, async (ctx) => {
    await registeredCluster(ctx, cluster);
    const items = await exportCheckpoints(new NodeScopeStore(ctx.db, ctx.table), cluster, namespace, name, {
      ...(values.node ? { node: values.node } : {}),
    });
    if (!items) {
      console.error(`no node-scoped history for ${ds} in cluster ${cluster}`);
      return 1;
    }
    console.log(JSON.stringify({ apiVersion: 'v1', kind: 'List', items }, null, 2));
    return 0;
  });
}

async function importFrom(values: Flags): Promise<number> {
  const { cluster, ds, namespace, name } = daemonSetOf(values, 'import-checkpoints');
  if (!values.file) throw new UsageError('import-checkpoints needs --file FILE (or - for stdin)');
  const text = await readInput(values.file);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError('the checkpoints file is not JSON');
  }
  const items = (Array.isArray(parsed) ? parsed : (parsed as { items?: unknown[] })?.items) ?? [];
  const isCheckpoint = (c: unknown): c is VerticalPodAutoscalerCheckpoint =>
    (c as VerticalPodAutoscalerCheckpoint)?.kind === 'VerticalPodAutoscalerCheckpoint' &&
    typeof (c as VerticalPodAutoscalerCheckpoint).spec?.containerName === 'string' &&
    typeof (c as VerticalPodAutoscalerCheckpoint).status === 'object';
  const valid = items.filter(isCheckpoint);
  const invalid = items.flatMap((c, i) =>
    isCheckpoint(c)
      ? []
      : [
          {
            checkpoint: `item [${i}]`,
            reason: 'not a VerticalPodAutoscalerCheckpoint with spec.containerName and status',
          },
        ],
  );
  return withContext(values, async (ctx) => {
    const registered = await ctx.registry.get(cluster);
    if (!registered) {
      console.error(`cluster ${cluster} is not registered`);
      return 1;
    }
    // Only the cluster's own nodes that the DaemonSet can run on take history: read them live.
    let placement: PlacementCheck;
    try {
      const client = await clusterAccess().client(registered.name, registered.kubeconfig);
      placement = await daemonSetPlacement(client, cluster, namespace, name);
    } catch (err) {
      console.error(
        `cannot read the nodes of ${cluster} and ${ds} to check the checkpoints against: ${describeAccessError(err)}`,
      );
      return 1;
    }
    const result = await importCheckpoints(
      new NodeScopeStore(ctx.db, ctx.table),
      cluster,
      namespace,
      name,
      valid,
      Date.now(),
      placement,
    );
    if (!result) {
      console.error(`nodescope has not seen ${ds} in cluster ${cluster} yet (a cycle creates it)`);
      return 1;
    }
    const skipped = [...invalid, ...result.reasons];
    console.log(`${cluster} ${ds}: ${result.imported} checkpoint(s) imported, ${skipped.length} skipped`);
    for (const s of skipped) console.log(`  skipped ${s.checkpoint}: ${s.reason}`);
    return 0;
  });
}

async function get(values: Flags): Promise<number> {
  const { cluster, ds, namespace, name } = daemonSetOf(values, 'get');
  return withContext(values, async (ctx) => {
    await registeredCluster(ctx, cluster);
    const recs = await getRecommendations(new NodeScopeStore(ctx.db, ctx.table), cluster, namespace, name, {
      ...(values.node ? { node: values.node } : {}),
      live: values.live ?? false,
    });
    if (!recs) {
      console.error(`no node-scoped recommendations for ${ds} in cluster ${values.cluster}`);
      return 1;
    }
    if (values.node && !recs.nodes[values.node]) {
      console.error(
        `no recommendation for node ${values.node} (the DaemonSet does not run there, or it is new)`,
      );
      return 1;
    }
    const out = structured(values);
    if (out) {
      out(recsView(recs));
      return 0;
    }
    console.log(
      `${values.cluster} ${ds} (VPA ${recs.vpa}, updateMode ${recs.updateMode}), ${recs.mode} as of ${recs.asOf}`,
    );
    const rows: string[][] = [
      ['NODE', 'SOURCE', 'CONTAINER', 'TARGET CPU', 'TARGET MEM', 'LOWER', 'UPPER', 'UNCAPPED'],
    ];
    const line = (node: string, source: string, c: string, r: ContainerRec) => [
      node,
      source,
      c,
      cpu(r.target),
      mem(r.target),
      `${cpu(r.lowerBound)}/${mem(r.lowerBound)}`,
      `${cpu(r.upperBound)}/${mem(r.upperBound)}`,
      `${cpu(r.uncappedTarget)}/${mem(r.uncappedTarget)}`,
    ];
    for (const [c, r] of Object.entries(recs.dsWide).sort())
      rows.push(line('(DaemonSet-wide)', 'upstream', c, r));
    for (const node of Object.keys(recs.nodes).sort()) {
      const rec = recs.nodes[node];
      if (!rec) continue;
      for (const [c, r] of Object.entries(rec.containers).sort()) rows.push(line(node, rec.source, c, r));
    }
    console.log(textTable(rows).join('\n'));
    return 0;
  });
}

async function installCrd(values: Flags): Promise<number> {
  const name = need(values.cluster, 'install-crd needs --cluster');
  return withContext(values, async (ctx) => {
    const cluster = await registeredCluster(ctx, name);
    const client = await clusterAccess().client(cluster.name, cluster.kubeconfig);
    const outcome = await installScopedCrd(client);
    console.log(
      outcome === 'unchanged'
        ? `${cluster.name}: the VerticalPodAutoscaler CRD already carries spec.scope`
        : `${cluster.name}: VerticalPodAutoscaler CRD ${outcome} with spec.scope (enum node, CEL: DaemonSet targets only)`,
    );
    return 0;
  });
}
