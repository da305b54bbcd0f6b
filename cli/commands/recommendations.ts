import type { RegisteredCluster } from '../../shared/fleet/cluster.js';
import { clusterAccess, describeAccessError } from '../../shared/fleet/cluster-access.js';
import { textTable } from '../../shared/kernel/text-table.js';
import {
  amountFields,
  asOfCell,
  change,
  NONE,
  pairCell,
  readableCpu,
  readableMemory,
  timeCell,
} from '../../shared/kernel/units-format.js';
import {
  exportCheckpoints,
  groupsBy,
  importCheckpoints,
  type SkippedCheckpoint,
} from '../../shared/nodescope/checkpoints.js';
import type { StatusShape } from '../../shared/nodescope/collect.js';
import { applyCrdPlan, planScopedCrd, readVpaCrd } from '../../shared/nodescope/crd-plan.js';
import { type DaemonSetNodes, daemonSetNodes } from '../../shared/nodescope/daemonset-nodes.js';
import {
  type DaemonSetFigures,
  daemonSetFigures,
  daemonSetFiguresOf,
} from '../../shared/nodescope/figures.js';
import { fallbackChain, scopeValueLabel } from '../../shared/nodescope/groups.js';
import { type GuardsSummary, guardsLine } from '../../shared/nodescope/guards/summary.js';
import type { Amounts, ContainerRec } from '../../shared/nodescope/model.js';
import {
  type DaemonSetRecommendations,
  getRecommendations,
  listDaemonSets,
} from '../../shared/nodescope/query.js';
import { type RolloutRecord, rolloutPhrase, sizeChangeWords } from '../../shared/nodescope/rollout.js';
import type { DsHead, NodeScopeStore } from '../../shared/nodescope/store.js';
import { DynamoNodeScopeStore } from '../../shared/nodescope/store-dynamo.js';
import { scopeOf, type TargetScope } from '../../shared/nodescope/targets.js';
import type { UpstreamNotice } from '../../shared/nodescope/upstream-vpa.js';
import type { VerticalPodAutoscalerCheckpoint } from '../../shared/recommendation/index.js';
import { type CliCommand, need, readInput, runSubcommand, UsageError } from '../command.js';
import { parseFlags, registeredCluster, targetOptions, withContext } from '../context.js';
import { whyNoNodeScope } from '../explain/empty-nodescope.js';
import { isDocument, outputFormat, outputOptions, print } from '../output.js';
import { boundsNote } from './recommendations-bounds.js';
import { printHistory } from './recommendations-history.js';

const usage = `usage:
  fleetscope recommendations list [--cluster NAME] [-n NAMESPACE] [--sort-by name|nodes|scopes|as-of] [-o table|wide|json|yaml]
  fleetscope recommendations get --cluster NAME --daemonset NAMESPACE/NAME [--node NODE] [--stored] [-o table|wide|json|yaml]
  fleetscope recommendations install-crd --cluster NAME [--status-shape upstream|deckhouse] [--dry-run]
  fleetscope recommendations checkpoints --cluster NAME --daemonset NAMESPACE/NAME [--node NODE | --scope LABEL] [-o json|yaml|table|wide]
  fleetscope recommendations import-checkpoints --cluster NAME --daemonset NAMESPACE/NAME [--scope LABEL] --file FILE|- [-o ...]
  fleetscope recommendations history --cluster NAME --daemonset NAMESPACE/NAME [--node NODE] [-o table|wide|json|yaml|name] [--no-headers]

  list         the node-scoped DaemonSets (KEP-4943) of the fleet or of one cluster: what their pods
               request today beside the per-node targets, the same figures as the report's
  get          per-node recommendations next to the DaemonSet-wide one, each beside what the node's pod
               requests now with the change (current → target (delta, %)), recomputed from the stored
               states as the next cycle would (the report's figures); --stored shows what the last
               fold stored instead. Both say as of when.
  install-crd  install the VerticalPodAutoscaler CRD variant with spec.scope (a label key, CEL rule) in a
               cluster; prints what it changes (path by path) first; --dry-run: only that, checked by the
               API server (dryRun=All), nothing written. --status-shape: where the groups go:
               upstream (AEP-10031 as it stands: status.recommendationGroups, targets only,
               status.recommendation the DaemonSet-wide fallback) or deckhouse (the fork's older
               status.groups with bounds, status.recommendation empty); default: upstream, or the
               installed CRD's own where its scope is upstream's or the fork's
  checkpoints  the stored history as upstream VerticalPodAutoscalerCheckpoint objects (a List; JSON unless
               -o yaml, or -o table|wide for a summary per checkpoint):
               one per node and container (spec.scopeValue = node) and one DaemonSet-wide per container;
               --scope LABEL: one per node-label group instead (AEP-10031: scopeValue = the label's
               value, "__absent__" without it), to hand the history back to upstream VPA
  import-checkpoints
               load node-scoped checkpoints (a List, or an array) as the history of nodes that have none;
               --scope LABEL: upstream's group checkpoints (DaemonSetScope), each group's history
               shared evenly among its nodes
  history      per node, what was sent to its pod, when, and what came of it: requested, actuated,
               deferred, infeasible, error, refused (by the apiserver), guarded-by a LimitRange, a
               ResourceQuota or the memory in use (never sent), reverted and why; the newest 20 per
               node, 30 days at most (-o name: one CLUSTER/NAMESPACE/DAEMONSET/NODE per node)

  --state-dir DIR   local state (default .fleetscope, or FLEETSCOPE_STATE_DIR)
  --aws             act on the deployed stack instead (--stack NAME, default Fleetscope; --region R)`;

const options = {
  ...targetOptions,
  cluster: { type: 'string' },
  daemonset: { type: 'string' },
  node: { type: 'string' },
  file: { type: 'string' },
  live: { type: 'boolean' },
  stored: { type: 'boolean' },
  namespace: { type: 'string', short: 'n' },
  'sort-by': { type: 'string' },
  'dry-run': { type: 'boolean' },
  'status-shape': { type: 'string' },
  scope: { type: 'string' },
  ...outputOptions,
} as const;

export const command: CliCommand = {
  name: 'recommendations',
  summary: 'node-scoped DaemonSet recommendations (KEP-4943): list, get per node, install the scoped VPA CRD',
  usage,
  outputs: {
    list: 'data',
    get: 'data',
    'install-crd': 'action',
    checkpoints: 'data',
    'import-checkpoints': 'data',
    history: 'data',
  },
  async run(args) {
    const { values, positionals } = parseFlags(args, options);
    return runSubcommand(positionals, {
      list: () => list(values),
      get: () => get(values),
      'install-crd': () => installCrd(values),
      checkpoints: () => checkpoints(values),
      'import-checkpoints': () => importFrom(values),
      history: () => history(values),
    });
  },
};

type Flags = ReturnType<typeof parseFlags<typeof options>>['values'];

/** One container's recommendation in the JSON/YAML vocabulary (unit-named numbers and quantities). */
function recFields(r: ContainerRec) {
  return Object.fromEntries(Object.entries(r).map(([k, a]) => [k, amountFields(a as Amounts)]));
}
const containersView = (cs: Record<string, ContainerRec>) =>
  Object.fromEntries(Object.entries(cs).map(([c, r]) => [c, recFields(r)]));

/** A DaemonSet's recommendations for -o json|yaml, every amount in the shared vocabulary. */
function recsView<
  R extends {
    dsWide: Record<string, ContainerRec>;
    nodes: Record<string, unknown>;
    groups?: Record<string, Record<string, ContainerRec>>;
    scope?: TargetScope;
  },
>(recs: R) {
  const nodes = Object.fromEntries(
    Object.entries(recs.nodes as Record<string, { containers: Record<string, ContainerRec> }>).map(
      ([n, rec]) => [n, { ...rec, containers: containersView(rec.containers) }],
    ),
  );
  const groups = Object.fromEntries(
    Object.entries(recs.groups ?? {}).map(([v, c]) => [v, containersView(c)]),
  );
  return {
    ...recs,
    ...(recs.scope ? { fallbackChain: fallbackChain(recs.scope) } : {}),
    dsWide: containersView(recs.dsWide),
    ...(recs.groups ? { groups } : {}),
    nodes,
  };
}

/** One listed DaemonSet: its head and the figures every view shares (live, as the report reads them). */
interface Listed {
  head: DsHead;
  figures: DaemonSetFigures;
  /** The groups with a recommendation (label scopes; per-node scopes count their new-node groups). */
  groups: number;
  /** What upstream VPA's components would do to its VPA (the last cycle's warnings). */
  warnings: string[];
  /** What the resize guards held back at the last cycle that changed it (guards/). */
  guards?: GuardsSummary;
  /** Canary wave, hold and reverts (the apply item's rollout). */
  rollout: RolloutRecord | undefined;
}

/** --sort-by keys of recommendations list (default: cluster, then namespace/name). */
const SORTS: Record<string, (a: Listed, b: Listed) => number> = {
  name: () => 0,
  nodes: (a, b) => b.figures.nodes.length - a.figures.nodes.length,
  scopes: (a, b) => b.head.stats.scopes - a.head.stats.scopes,
  'as-of': (a, b) => b.figures.asOf.localeCompare(a.figures.asOf),
};

async function list(values: Flags): Promise<number> {
  const sort = SORTS[values['sort-by'] ?? 'name'];
  if (!sort)
    throw new UsageError(`--sort-by ${values['sort-by']}: use one of ${Object.keys(SORTS).join(', ')}`);
  const format = outputFormat(values);
  return withContext(values, async (ctx) => {
    if (values.cluster) await registeredCluster(ctx, values.cluster);
    const store = new DynamoNodeScopeStore(ctx.db, ctx.table);
    const all = await listDaemonSets(store, values.cluster);
    const heads = all.filter((h) => !values.namespace || h.namespace === values.namespace);
    const clusters = values.cluster ? [values.cluster] : (await ctx.registry.list()).map((c) => c.name);
    const notices = (await noticesIn(store, clusters)).filter(
      (n) => !values.namespace || n.namespace === values.namespace,
    );
    if (heads.length === 0 && !isDocument(format)) {
      if (all.length) console.log(`no node-scoped DaemonSets in namespace ${values.namespace}`);
      else console.log(await whyNoNodeScope(ctx, values.cluster));
      for (const line of noticeLines(notices)) console.log(line);
      return 0;
    }
    const listed = (await Promise.all(heads.map((h) => listedOf(store, h, notices)))).sort(sort);
    print(format, listed.map(headView), (wide) => [
      ...headTable(listed, wide, Date.now()),
      ...noticeLines(notices),
      ...guardLines(listed),
    ]);
    return 0;
  });
}

async function listedOf(store: NodeScopeStore, head: DsHead, notices: ClusterNotice[]): Promise<Listed> {
  const [recs, apply] = await Promise.all([
    getRecommendations(store, head.cluster, head.namespace, head.name, { live: true }),
    store.getApply(head.cluster, `${head.namespace}/${head.name}`),
  ]);
  return {
    head,
    figures: daemonSetFiguresOf(head, recs),
    groups: Object.keys(recs?.groups ?? {}).length,
    warnings: warningsOf(notices, head),
    ...(recs?.guards ? { guards: recs.guards } : {}),
    rollout: apply.rollout,
  };
}

/** A notice of the last cycle of a cluster (upstream-vpa.ts): a skipped VPA, or a warning. */
type ClusterNotice = UpstreamNotice & { cluster: string };

/** The notices the clusters' last cycles recorded. */
async function noticesIn(store: NodeScopeStore, clusters: string[]): Promise<ClusterNotice[]> {
  const records = await Promise.all(clusters.map((c) => store.getCluster(c)));
  return records.flatMap((r) => (r?.notices ?? []).map((n) => ({ ...n, cluster: r?.cluster ?? '' })));
}

/** The warnings on the VPA that sizes a DaemonSet: what upstream VPA's components would do to it. */
const warningsOf = (
  notices: ClusterNotice[],
  h: { cluster: string; namespace: string; vpa: { name: string } },
) =>
  notices
    .filter(
      (n) =>
        n.kind === 'warning' &&
        n.cluster === h.cluster &&
        n.namespace === h.namespace &&
        n.vpa === h.vpa.name,
    )
    .map((n) => n.reason);

/** Skipped VPAs and warnings, one line each, under a table. */
function noticeLines(notices: ClusterNotice[]): string[] {
  if (notices.length === 0) return [];
  return [
    '',
    ...notices.map(
      (n) =>
        `${n.kind === 'skipped' ? 'skipped' : 'warning'}: ${n.cluster} VPA ${n.namespace}/${n.vpa}: ${n.reason}`,
    ),
  ];
}

/** The resizes the guards hold back, one line per DaemonSet, under a table. */
function guardLines(listed: Listed[]): string[] {
  const held = listed.filter((l) => l.guards);
  if (held.length === 0) return [];
  return [
    '',
    ...held.map(
      (l) =>
        `held: ${l.head.cluster} ${l.head.namespace}/${l.head.name}: ${guardsLine(l.guards as GuardsSummary)}`,
    ),
  ];
}

/** A node-scoped DaemonSet as -o json|yaml carry it: amounts in the shared vocabulary, times as RFC 3339. */
function headView({ head: h, figures: f, groups, warnings, guards, rollout }: Listed) {
  const st = h.stats;
  return {
    cluster: h.cluster,
    namespace: h.namespace,
    name: h.name,
    vpa: h.vpa,
    updateMode: h.updateMode,
    scope: scopeOfHead(h).key,
    groups,
    containers: h.containers,
    requests: Object.fromEntries(h.template.map((c) => [c.name, amountFields(c.requests)])),
    nodes: f.nodes.length,
    fallbackNodes: f.nodes.filter((n) => n.source === 'fallback').length,
    scopes: st.scopes,
    requestsNow: amountFields(f.requestsTotal),
    perNode: amountFields(f.perNodeTotal),
    dsWide: amountFields(f.dsWideTotal),
    perNodeVsRequestsNowPercent: {
      cpu: percent(f.perNodeTotal.cpu, f.requestsTotal.cpu),
      memory: percent(f.perNodeTotal.memory, f.requestsTotal.memory),
    },
    perNodeVsDsWidePercent: {
      cpu: percent(f.perNodeTotal.cpu, f.dsWideTotal.cpu),
      memory: percent(f.perNodeTotal.memory, f.dsWideTotal.memory),
    },
    asOf: f.asOf,
    foldedThrough: h.foldedThrough,
    ...(st.lastSampleAt ? { lastSampleAt: new Date(st.lastSampleAt).toISOString() } : {}),
    warnings,
    ...(guards ? { guards: { ...guards, at: new Date(guards.at).toISOString() } } : {}),
    rollout: rolloutView(rollout, Date.parse(f.asOf)),
  };
}

/**
 * The rollout as -o json|yaml carry it: times as RFC 3339, the reverts with why. The phrase is said as
 * of the listing's own time (the cluster's clock at its last cycle), not this machine's: a document is
 * the stored state, the same at every read, whatever the caller's clock says.
 */
function rolloutView(r: RolloutRecord | undefined, asOf: number) {
  const at = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
  // The table's '-' placeholder is no value in a document: no rollout, no phrase.
  const phrase = rolloutPhrase(r, asOf);
  return {
    ...(phrase !== '-' ? { phrase } : {}),
    ...(r?.wave
      ? {
          wave: {
            startedAt: at(r.wave.startedAt),
            canaries: r.wave.canaries,
            releasedAt: at(r.wave.releasedAt),
          },
        }
      : {}),
    ...(r?.hold ? { hold: { ...r.hold, until: at(r.hold.until), at: at(r.hold.at) } } : {}),
    reverts: (r?.reverts ?? []).map((e) => ({
      node: e.node,
      at: at(e.at),
      reason: e.reason,
      detail: e.detail,
      sizeChange: sizeChangeWords(e.from, e.to),
    })),
  };
}

function headTable(listed: Listed[], wide: boolean, now: number): string[] {
  const head = ['CLUSTER', 'DAEMONSET', 'VPA', 'MODE', 'SCOPE', 'NODES', 'GROUPS', 'FALLBACK', 'SCOPES'];
  head.push('CPU (TODAY → PER-NODE)', 'MEMORY (TODAY → PER-NODE)', 'VS DS-WIDE (CPU, MEM)');
  if (wide) head.push('DS-WIDE SUM', 'CONTAINERS', 'LAST SAMPLE');
  head.push('ROLLOUT', 'AS OF');
  return textTable([
    head,
    ...listed.map(({ head: h, figures: f, groups, rollout }) => [
      h.cluster,
      `${h.namespace}/${h.name}`,
      h.vpa.name,
      h.updateMode,
      scopeOfHead(h).key,
      String(f.nodes.length),
      // Groups where the scope is a label key; per node, the nodes are the groups.
      scopeOfHead(h).perNode ? NONE : String(groups),
      String(f.nodes.filter((n) => n.source === 'fallback').length),
      String(h.stats.scopes),
      change(f.requestsTotal.cpu, f.perNodeTotal.cpu, readableCpu),
      change(f.requestsTotal.memory, f.perNodeTotal.memory, readableMemory),
      `${delta(f.perNodeTotal.cpu, f.dsWideTotal.cpu)}, ${delta(f.perNodeTotal.memory, f.dsWideTotal.memory)}`,
      ...(wide
        ? [
            pairCell(f.dsWideTotal),
            h.containers.join(','),
            h.stats.lastSampleAt ? timeCell(h.stats.lastSampleAt) : NONE,
          ]
        : []),
      rolloutPhrase(rollout, now),
      asOfCell(Date.parse(f.asOf), now),
    ]),
  ]);
}

/** The scope a head was built for (heads from before scopes: node). */
const scopeOfHead = (h: DsHead): TargetScope => h.scope ?? scopeOf('node', undefined);

/** The change from b to a in percent (null without a base to compare with). */
function percent(a: number, b: number): number | null {
  return b ? Math.round(((a - b) / b) * 100) : null;
}

function delta(a: number, b: number): string {
  const p = percent(a, b);
  return p === null ? NONE : `${p >= 0 ? '+' : ''}${p}%`;
}

/** The DaemonSet a command is about: --cluster and --daemonset NAMESPACE/NAME (`ds`). */
interface DaemonSetTarget {
  cluster: string;
  ds: string;
  namespace: string;
  name: string;
}

function daemonSetOf(values: Flags, what: string): DaemonSetTarget {
  if (!values.cluster) throw new UsageError(`${what} needs --cluster`);
  const ds = values.daemonset;
  if (!ds?.includes('/')) throw new UsageError(`${what} needs --daemonset NAMESPACE/NAME`);
  const [namespace, name] = ds.split('/', 2) as [string, string];
  return { cluster: values.cluster, ds, namespace, name };
}

async function checkpoints(values: Flags): Promise<number> {
  const target = daemonSetOf(values, 'checkpoints');
  const { cluster, ds, namespace, name } = target;
  // A List to import or apply: JSON unless another format is asked for.
  const format = values.output || values.json ? outputFormat(values) : 'json';
  if (values.scope && values.node) throw new UsageError('--scope and --node: choose one');
  return withContext(values, async (ctx) => {
    const registered = await registeredCluster(ctx, cluster);
    const nodes = values.scope
      ? await nodesOf(registered, target, 'group the history by node label')
      : undefined;
    if (values.scope && !nodes) return 1;
    const items = await exportCheckpoints(
      new DynamoNodeScopeStore(ctx.db, ctx.table),
      cluster,
      namespace,
      name,
      {
        ...(values.node ? { node: values.node } : {}),
        ...(values.scope && nodes ? { groups: groupsBy(nodes.eligible, values.scope) } : {}),
      },
    );
    // Thrown, not printed: every failure reads "fleetscope recommendations: ..." (cli/main.ts), exit 1.
    if (!items) throw new Error(`no node-scoped history for ${ds} in cluster ${cluster}`);
    print(format, { apiVersion: 'v1', kind: 'List', items }, (wide) => checkpointTable(items, wide));
    return 0;
  });
}

function checkpointTable(items: VerticalPodAutoscalerCheckpoint[], wide: boolean): string[] {
  const head = ['NAME', 'NODE', 'CONTAINER', 'SAMPLES', 'LAST UPDATE'];
  if (wide) head.push('FIRST SAMPLE', 'LAST SAMPLE');
  return textTable([
    head,
    ...items.map((c) => [
      c.metadata?.name ?? '',
      c.spec.scopeValue ?? '(DaemonSet-wide)',
      c.spec.containerName,
      String(c.status.totalSamplesCount ?? 0),
      c.status.lastUpdateTime ?? NONE,
      ...(wide ? [c.status.firstSampleStart ?? NONE, c.status.lastSampleStart ?? NONE] : []),
    ]),
  ]);
}

async function importFrom(values: Flags): Promise<number> {
  const target = daemonSetOf(values, 'import-checkpoints');
  const { cluster, ds, namespace, name } = target;
  if (!values.file) throw new UsageError('import-checkpoints needs --file FILE (or - for stdin)');
  const format = outputFormat(values);
  const { valid, invalid } = checkpointsIn(await readInput(values.file));
  return withContext(values, async (ctx) => {
    const nodes = await nodesOf(
      await registeredCluster(ctx, cluster),
      target,
      'check the checkpoints against',
    );
    if (!nodes) return 1;
    const result = await importCheckpoints(
      new DynamoNodeScopeStore(ctx.db, ctx.table),
      cluster,
      namespace,
      name,
      valid,
      Date.now(),
      nodes.check,
      values.scope ? groupsBy(nodes.eligible, values.scope) : undefined,
    );
    if (!result) {
      console.error(`nodescope has not seen ${ds} in cluster ${cluster} yet (a cycle creates it)`);
      return 1;
    }
    const skipped = [...invalid, ...result.reasons];
    print(format, { cluster, daemonSet: ds, imported: result.imported, skipped }, () => [
      `${cluster} ${ds}: ${result.imported} checkpoint(s) imported, ${skipped.length} skipped`,
      ...skipped.map((s) => `  skipped ${s.checkpoint}: ${s.reason}`),
    ]);
    return 0;
  });
}

const isCheckpoint = (c: unknown): c is VerticalPodAutoscalerCheckpoint =>
  (c as VerticalPodAutoscalerCheckpoint)?.kind === 'VerticalPodAutoscalerCheckpoint' &&
  typeof (c as VerticalPodAutoscalerCheckpoint).spec?.containerName === 'string' &&
  typeof (c as VerticalPodAutoscalerCheckpoint).status === 'object';

/**
 * The checkpoints of a file (a JSON list, or an object with `items` as kubectl prints): those that are
 * checkpoints, and the rest as skipped items.
 */
function checkpointsIn(text: string): {
  valid: VerticalPodAutoscalerCheckpoint[];
  invalid: SkippedCheckpoint[];
} {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UsageError('the checkpoints file is not JSON');
  }
  const items = (Array.isArray(parsed) ? parsed : (parsed as { items?: unknown[] })?.items) ?? [];
  return {
    valid: items.filter(isCheckpoint),
    invalid: items.flatMap((c, i) =>
      isCheckpoint(c)
        ? []
        : [
            {
              checkpoint: `item [${i}]`,
              reason: 'not a VerticalPodAutoscalerCheckpoint with spec.containerName and status',
            },
          ],
    ),
  };
}

/**
 * Only the cluster's own nodes that the DaemonSet can run on take history (and make up its label
 * groups): read them live. Undefined (and said why) when the cluster cannot be read.
 */
async function nodesOf(
  registered: RegisteredCluster,
  { cluster, ds, namespace, name }: DaemonSetTarget,
  why: string,
): Promise<DaemonSetNodes | undefined> {
  try {
    const client = await clusterAccess().client(registered.name, registered.kubeconfig);
    return await daemonSetNodes(client, cluster, namespace, name);
  } catch (err) {
    console.error(`cannot read the nodes of ${cluster} and ${ds} to ${why}: ${describeAccessError(err)}`);
    return undefined;
  }
}

async function history(values: Flags): Promise<number> {
  const target = daemonSetOf(values, 'history');
  const format = outputFormat(values);
  return withContext(values, (ctx) =>
    printHistory(ctx, { ...target, ...(values.node ? { node: values.node } : {}) }, format),
  );
}

async function get(values: Flags): Promise<number> {
  const { cluster, ds, namespace, name } = daemonSetOf(values, 'get');
  if (values.live && values.stored) throw new UsageError('--live and --stored: choose one');
  const format = outputFormat(values);
  return withContext(values, async (ctx) => {
    await registeredCluster(ctx, cluster);
    const store = new DynamoNodeScopeStore(ctx.db, ctx.table);
    const recs = await getRecommendations(store, cluster, namespace, name, {
      ...(values.node ? { node: values.node } : {}),
      live: !values.stored,
    });
    if (!recs) {
      const skipped = (await noticesIn(store, [cluster])).find(
        (n) => n.kind === 'skipped' && n.daemonSet === ds,
      );
      throw new Error(
        `no node-scoped recommendations for ${ds} in cluster ${values.cluster}` +
          (skipped ? `: its VPA ${skipped.namespace}/${skipped.vpa} is skipped (${skipped.reason})` : ''),
      );
    }
    if (values.node && !recs.nodes[values.node])
      throw new Error(
        `no recommendation for node ${values.node} (the DaemonSet does not run there, or it is new)`,
      );
    const figures = daemonSetFigures(recs);
    const byNode = new Map(figures.nodes.map((n) => [n.node, n]));
    const view = recsView(recs);
    for (const [node, rec] of Object.entries(view.nodes)) {
      const f = byNode.get(node);
      if (f) Object.assign(rec, { requests: amountFields(f.requests), requestsFrom: f.requestsFrom });
    }
    const warnings = warningsOf(await noticesIn(store, [cluster]), {
      cluster,
      namespace,
      vpa: { name: recs.vpa },
    });
    const { podRequests: _, ...doc } = {
      ...view,
      requests: Object.fromEntries(Object.entries(recs.requests).map(([c, a]) => [c, amountFields(a)])),
      warnings,
    };
    const what = recs.mode === 'live' ? 'live (recomputed from the stored states)' : 'stored (the last fold)';
    print(format, doc, (wide) => [
      `${values.cluster} ${ds} (VPA ${recs.vpa}, updateMode ${recs.updateMode}, scope ${recs.scope.key}), ${what} as of ${asOfCell(Date.parse(recs.asOf), Date.now())} on the cluster's clock (sim time on a simulator)`,
      `each node's pod is sized from the first that has a recommendation: ${fallbackChain(recs.scope).join(' → ')}`,
      ...warnings.map((w) => `warning: ${w}`),
      ...(recs.guards ? [`held: ${guardsLine(recs.guards)}`] : []),
      ...recsTable(recs, wide),
      ...[boundsNote(recs)].filter((n) => n !== undefined),
    ]);
    return 0;
  });
}

/** Per node and container: current request → target (delta, %), the bounds (unbounded when uncapped). */
function recsTable(recs: DaemonSetRecommendations, wide: boolean): string[] {
  const head = ['NODE', 'SOURCE', 'CONTAINER', 'CPU (REQUEST → TARGET)', 'MEMORY (REQUEST → TARGET)'];
  head.push('LOWER', 'UPPER', ...(wide ? ['UNCAPPED'] : []));
  // A node's row starts from what its pod requests now; the DaemonSet-wide row from the template.
  const line = (node: string, source: string, c: string, r: ContainerRec) => {
    const now = recs.podRequests[node]?.[c] ?? recs.requests[c];
    return [
      node,
      source,
      c,
      change(now?.cpu, r.target?.cpu, readableCpu),
      change(now?.memory, r.target?.memory, readableMemory),
      pairCell(r.lowerBound),
      pairCell(r.upperBound),
      ...(wide ? [pairCell(r.uncappedTarget)] : []),
    ];
  };
  const rows: string[][] = [head];
  for (const [c, r] of Object.entries(recs.dsWide).sort())
    rows.push(line('(DaemonSet-wide)', 'upstream', c, r));
  const label = recs.scope.groupLabel;
  for (const value of Object.keys(recs.groups).sort())
    for (const [c, r] of Object.entries(recs.groups[value] ?? {}).sort())
      rows.push(line(`(group ${scopeValueLabel(label, value)})`, 'merged', c, r));
  for (const node of Object.keys(recs.nodes).sort()) {
    const rec = recs.nodes[node];
    if (!rec) continue;
    const source =
      rec.source === 'group' && rec.group !== undefined
        ? `group ${scopeValueLabel(label, rec.group)}`
        : rec.source;
    for (const [c, r] of Object.entries(rec.containers).sort()) rows.push(line(node, source, c, r));
  }
  return textTable(rows);
}

/** What each status shape publishes, as install-crd says it. */
const STATUS_SHAPES: Record<StatusShape, string> = {
  upstream:
    'AEP-10031 as it stands: status.recommendationGroups (targets only), status.recommendation the DaemonSet-wide fallback',
  deckhouse: "the Deckhouse fork's status.groups (with bounds), status.recommendation left empty",
};

async function installCrd(values: Flags): Promise<number> {
  const name = need(values.cluster, 'install-crd needs --cluster');
  const dryRun = values['dry-run'] ?? false;
  const asked = values['status-shape'];
  if (asked !== undefined && !(asked in STATUS_SHAPES))
    throw new UsageError(`--status-shape ${asked}: use one of ${Object.keys(STATUS_SHAPES).join(', ')}`);
  return withContext(values, async (ctx) => {
    const cluster = await registeredCluster(ctx, name);
    const client = await clusterAccess().client(cluster.name, cluster.kubeconfig);
    const plan = planScopedCrd(await readVpaCrd(client), asked as StatusShape | undefined);
    const says = `status shape ${plan.shape}: ${STATUS_SHAPES[plan.shape]}`;
    if (plan.action === 'unchanged') {
      console.log(
        `${cluster.name}: the VerticalPodAutoscaler CRD already is fleetscope's variant (${says}); nothing to change`,
      );
      return 0;
    }
    console.log(`${cluster.name}: ${says}`);
    // What it will change, before it changes it.
    console.log(
      `${cluster.name}: ${dryRun ? 'would' : 'will'} ${plan.action} the VerticalPodAutoscaler CRD:`,
    );
    for (const c of plan.changes) console.log(`  ${c}`);
    await applyCrdPlan(client, plan, { dryRun });
    console.log(
      dryRun
        ? `${cluster.name}: dry run: the API server accepts it (dryRun=All); nothing was written`
        : `${cluster.name}: VerticalPodAutoscaler CRD ${plan.action === 'create' ? 'created' : 'updated'}`,
    );
    return 0;
  });
}
