import { CLAIMS } from '../../shared/claims/capability.js';
import { backendDnsName, CLUSTERSET_ZONE } from '../../shared/claims/dns.js';
import { type ClaimsSettings, describeOp } from '../../shared/claims/identity.js';
import { ClusterClaimsApi } from '../../shared/claims/incluster.js';
import { deleteCustomClaim, setClaim } from '../../shared/claims/membership.js';
import { acceptKubeSystemUid } from '../../shared/claims/rebuilt.js';
import { reconcileClaims, reportLines } from '../../shared/claims/reconcile.js';
import { clusterIdProblem, customClaimProblem, ID_CLAIM } from '../../shared/claims/rules.js';
import { claimStoreOf, DynamoClaimStore } from '../../shared/claims/store-dynamo.js';
import { CLAIMS_SORTS, claimsSummaryLines, claimsView, describeClaims } from '../../shared/claims/summary.js';
import { syncCluster } from '../../shared/claims/sync.js';
import type { RegisteredCluster } from '../../shared/fleet/cluster.js';
import { clusterAccess, resetClusterConnector } from '../../shared/fleet/cluster-access.js';
import { type CliCommand, decimalFlag, need, readInput, runSubcommand, UsageError } from '../command.js';
import { type CliContext, parseFlags, registeredCluster, targetOptions, withContext } from '../context.js';
import { outputFormat, outputOptions, printLines, structured } from '../output.js';
import { claimsPorts } from './clusterset.js';

const usage = `usage:
  fleetscope claims get    [--cluster NAME] [--sort-by cluster|id|clusterset] [-o table|wide|json|yaml]
  fleetscope claims set    --cluster NAME --name CLAIM (--value V | --value-file FILE | --default) [-o ...]
  fleetscope claims delete --cluster NAME --name CLAIM
  fleetscope claims check  [--cluster NAME] [--dry-run] [-o table|json|yaml]
  fleetscope claims accept-uid --cluster NAME   a rebuilt cluster (identity-changed) is still this one
  fleetscope claims dns    --cluster NAME --service SVC --namespace NS --hostname HOST [-o ...]
  fleetscope claims dns    --cluster-id ID --service SVC --namespace NS --hostname HOST [-o ...]
  fleetscope claims config [--cluster NAME] [--new-id-name on|off] [--create-crd on|off] [--ocm auto|off] [-o ...]
  fleetscope claims reconcile [--grace-seconds N] [-o table|json|yaml]

  --state-dir DIR   local state (default .fleetscope, or FLEETSCOPE_STATE_DIR)
  --aws             act on the deployed stack instead (--stack NAME, default Fleetscope; --region R)

Claims (KEP-2149) are kept in DynamoDB and written into each cluster as ClusterProperty objects
(about.k8s.io), and as OCM ClusterClaims where OCM is installed:
  id.k8s.io                  the cluster ID: the kube-system UID, or an RFC 1123 label you set
                             (--default goes back to the UID); immutable while in a ClusterSet
  cluster.clusterset.k8s.io  the same ID under its newer name (claims config --new-id-name off to stop)
  clusterset.k8s.io          the ClusterSet, exactly while a member (see fleetscope clusterset)
  <name>.<your domain>       custom claims: an RFC 1123 subdomain outside *.k8s.io, *.kubernetes.io and
                             sigs.k8s.io; values up to 128 KiB (OCM takes 1024 characters)
check runs the drift check now: edited or deleted claims in the cluster are restored, claims that
must not be there are removed (--dry-run only shows what would be written, and exits 1 when
anything would be, as kubectl diff does). A cluster whose kube-system UID is not the registered one
(rebuilt behind the same endpoint) is reported identity-changed, exit 1, and nothing is written to it:
accept-uid records its new UID and keeps its ID and memberships (it is the same cluster); for a new
cluster, deregister it and register it again.
dns prints a backend's multi-cluster DNS name (<hostname>.<cluster ID>.<svc>.<ns>.svc.clusterset.local),
which exists only within a ClusterSet: with --cluster, the cluster must be a member of one.`;

const options = {
  ...targetOptions,
  cluster: { type: 'string' },
  name: { type: 'string' },
  value: { type: 'string' },
  'value-file': { type: 'string' },
  default: { type: 'boolean' },
  ...outputOptions,
  'dry-run': { type: 'boolean' },
  'cluster-id': { type: 'string' },
  service: { type: 'string' },
  namespace: { type: 'string' },
  hostname: { type: 'string' },
  'new-id-name': { type: 'string' },
  'create-crd': { type: 'string' },
  ocm: { type: 'string' },
  'grace-seconds': { type: 'string' },
  'sort-by': { type: 'string' },
} as const;

type Flags = ReturnType<typeof parseFlags<typeof options>>['values'];

export const command: CliCommand = {
  name: 'claims',
  summary: 'get, set, delete and check cluster claims (id.k8s.io and custom claims, KEP-2149)',
  usage,
  outputs: {
    get: 'data',
    set: 'data',
    delete: 'action',
    check: 'data',
    'accept-uid': 'action',
    dns: 'data',
    config: 'data',
    reconcile: 'data',
  },
  async run(args) {
    const { values, positionals } = parseFlags(args, options);
    return runSubcommand(positionals, {
      get: () => get(values),
      set: () => set(values),
      delete: () => del(values),
      check: () => check(values),
      'accept-uid': () => acceptUid(values),
      dns: () => dns(values),
      config: () => config(values),
      reconcile: () => reconcile(values),
    });
  },
};

async function get(values: Flags): Promise<number> {
  const out = structured(values);
  const sortBy = values['sort-by'];
  if (sortBy && !CLAIMS_SORTS[sortBy])
    throw new UsageError(`--sort-by ${sortBy}: use one of ${Object.keys(CLAIMS_SORTS).join(', ')}`);
  if (sortBy && values.cluster)
    throw new UsageError('--sort-by sorts the list of every cluster: drop --cluster');
  const wide = outputFormat(values) === 'wide';
  return withContext(values, async (ctx) => {
    const store = new DynamoClaimStore(ctx.db, ctx.table);
    if (!values.cluster) {
      if (out) {
        const ids = (await store.listIdentities()).sort(CLAIMS_SORTS[sortBy ?? 'cluster']);
        const views = await Promise.all(ids.map((i) => claimsView(store, i.cluster)));
        out(views.map(jsonView));
      } else {
        // The table alone, as kubectl get prints it (the count above it is npm start's summary): scripts
        // read the rows. An empty list keeps its line saying so.
        const [count, ...table] = await claimsSummaryLines(claimStoreOf(ctx), {
          wide,
          ...(sortBy ? { sortBy } : {}),
        });
        printLines(table.length ? table : [count!]);
      }
      return 0;
    }
    await registeredCluster(ctx, values.cluster);
    const view = await claimsView(store, values.cluster);
    if (out) out(jsonView(view));
    else for (const line of describeClaims(view)) console.log(line);
    return 0;
  });
}

function jsonView(v: Awaited<ReturnType<typeof claimsView>>) {
  return {
    cluster: v.cluster,
    clusterId: v.identity?.clusterId,
    idSource: v.identity?.idSource,
    clusterSet: v.identity?.clusterSet,
    pending: v.identity?.pending,
    claims: v.claims,
    inCluster: v.sync,
  };
}

async function readValue(values: Flags): Promise<string | undefined> {
  const given = [values.value !== undefined, values['value-file'] !== undefined, values.default === true];
  if (given.filter(Boolean).length !== 1)
    throw new UsageError('give exactly one of --value, --value-file or --default');
  if (values.default) return undefined;
  if (values.value !== undefined) return values.value;
  return readInput(values['value-file']!);
}

async function set(values: Flags): Promise<number> {
  const cluster = need(values.cluster, 'set needs --cluster');
  const name = need(values.name, 'set needs --name');
  const value = await readValue(values);
  if (value === undefined && name !== ID_CLAIM) throw new UsageError(`--default only applies to ${ID_CLAIM}`);
  // A name or value that does not parse is wrong on any fleet: usage (2), before anything is read.
  const invalid =
    value === undefined
      ? null
      : name === ID_CLAIM
        ? clusterIdProblem(value)
        : customClaimProblem(name, value);
  if (invalid) throw new UsageError(invalid);
  const out = structured(values);
  return withContext(values, async (ctx) => {
    const ports = claimsPorts(ctx);
    const r = await setClaim(ports, cluster, name, value);
    if (!out) for (const w of r.warnings) console.error(`warning: ${w}`);
    await ctx.runtime?.bus.drain();
    const view = await claimsView(ports.store, cluster);
    if (out) {
      out({ changed: r.changed, name, warnings: r.warnings, ...jsonView(view) });
      return 0;
    }
    console.log(
      r.changed
        ? `set ${name} on cluster ${cluster}`
        : `${name} on cluster ${cluster} already had that value`,
    );
    for (const line of describeClaims(view)) console.log(line);
    return 0;
  });
}

async function del(values: Flags): Promise<number> {
  const cluster = need(values.cluster, 'delete needs --cluster');
  const name = need(values.name, 'delete needs --name');
  return withContext(values, async (ctx) => {
    const ports = claimsPorts(ctx);
    const r = await deleteCustomClaim(ports, cluster, name);
    await ctx.runtime?.bus.drain();
    console.log(
      r.changed ? `deleted ${name} from cluster ${cluster}` : `cluster ${cluster} has no claim ${name}`,
    );
    return 0;
  });
}

function statusLines(
  cluster: string,
  s: { state: string; error?: string; writes?: string[]; warnings?: string[] } | undefined,
): string[] {
  if (!s) return [`${cluster}: no result yet`];
  const lines = [`${cluster}: ${s.state}${s.error ? ` (${s.error})` : ''}`];
  for (const w of s.writes ?? []) lines.push(`  ${w}`);
  for (const w of s.warnings ?? []) lines.push(`  warning: ${w}`);
  return lines;
}

/** One cluster's drift check as -o json|yaml carries it (dry run: the writes it would make). */
interface CheckResult {
  cluster: string;
  state: string;
  error?: string;
  writes: string[];
  warnings: string[];
  checkedAt?: string;
}

async function check(values: Flags): Promise<number> {
  const out = structured(values);
  return withContext(values, async (ctx) => {
    const clusters = values.cluster
      ? [await registeredCluster(ctx, values.cluster)]
      : await ctx.registry.list();
    if (clusters.length === 0 && !out) {
      console.log('no clusters registered (fleetscope cluster register adds one)');
      return 0;
    }
    const dry = values['dry-run'] ?? false;
    const results = dry ? await dryRun(ctx, clusters) : await checkNow(ctx, clusters);
    if (out) out(results);
    else for (const r of results) for (const line of checkLines(r, dry)) console.log(line);
    // A dry run with writes pending is a difference, as `kubectl diff` exits 1 on one.
    const failed = (r: CheckResult) =>
      dry ? r.error !== undefined || r.writes.length > 0 : !['in-sync', 'repaired'].includes(r.state);
    return results.some(failed) ? 1 : 0;
  });
}

/** The operator's decision for a cluster held as identity-changed: it is the same cluster. */
async function acceptUid(values: Flags): Promise<number> {
  const name = need(values.cluster, 'accept-uid needs --cluster');
  return withContext(values, async (ctx) => {
    const cluster = await registeredCluster(ctx, name);
    const access = clusterAccess();
    try {
      const uid = await new ClusterClaimsApi(await access.client(name, cluster.kubeconfig)).kubeSystemUid();
      const before = await new DynamoClaimStore(ctx.db, ctx.table).getIdentity(name);
      const after = await acceptKubeSystemUid(claimsPorts(ctx), name, uid);
      console.log(
        before?.kubeSystemUid === uid
          ? `cluster ${name}: kube-system UID ${uid} is already the registered one`
          : `cluster ${name}: kube-system UID ${uid} accepted (was ${before?.kubeSystemUid ?? 'unknown'}); its ID stays ${after.clusterId}${after.clusterSet ? `, a member of ClusterSet ${after.clusterSet}` : ''}`,
      );
      return 0;
    } finally {
      await resetClusterConnector();
    }
  });
}

function checkLines(r: CheckResult, dry: boolean): string[] {
  if (!dry) return statusLines(r.cluster, r.checkedAt ? r : undefined);
  const head = r.error
    ? `${r.state} (${r.error})`
    : r.writes.length
      ? `${r.writes.length} write(s) needed`
      : 'in-sync';
  return [`${r.cluster}: ${head}`, ...r.writes.map((w) => `  would ${w}`)];
}

/** The drift check where it always runs: in the claims worker, asked through the bus. */
async function checkNow(ctx: CliContext, clusters: RegisteredCluster[]): Promise<CheckResult[]> {
  const store = new DynamoClaimStore(ctx.db, ctx.table);
  const at = new Date().toISOString();
  await ctx.publisher.publish(
    clusters.map((c) => ({
      detailType: 'ClusterWorkRequested' as const,
      detail: { cluster: c.name, capability: CLAIMS, cycleId: `${CLAIMS}/manual/${at}`, requestedAt: at },
      resources: [`cluster/${c.name}`],
    })),
  );
  if (ctx.runtime) await ctx.runtime.bus.drain();
  const results: CheckResult[] = [];
  for (const c of clusters) {
    let s = await store.getSyncStatus(c.name);
    // --aws: the worker runs in Lambda; wait (bounded) for its result.
    for (let waited = 0; !ctx.runtime && (!s || s.at < at) && waited < 90_000; waited += 2000) {
      await new Promise((r) => setTimeout(r, 2000));
      s = await store.getSyncStatus(c.name);
    }
    if (s && s.at < at) s = undefined;
    results.push(
      s
        ? {
            cluster: c.name,
            state: s.state,
            ...(s.error ? { error: s.error } : {}),
            writes: s.writes ?? [],
            warnings: s.warnings ?? [],
            checkedAt: s.at,
          }
        : { cluster: c.name, state: 'no result yet', writes: [], warnings: [] },
    );
  }
  return results;
}

async function dryRun(ctx: CliContext, clusters: RegisteredCluster[]): Promise<CheckResult[]> {
  const access = clusterAccess();
  const ports = {
    ...claimsPorts(ctx),
    publisher: { publish: async () => {} },
    connect: async (c: RegisteredCluster) => new ClusterClaimsApi(await access.client(c.name, c.kubeconfig)),
  };
  const results: CheckResult[] = [];
  try {
    for (const c of clusters) {
      const r = await syncCluster(ports, c, { dryRun: true });
      results.push({
        cluster: c.name,
        state: r.error ? r.state : r.ops.length + r.ocmOps.length ? 'drift' : 'in-sync',
        ...(r.error ? { error: r.error } : {}),
        writes: [...r.ops.map(describeOp), ...r.ocmOps.map((op) => `${describeOp(op)} (OCM ClusterClaim)`)],
        warnings: r.warnings,
      });
    }
  } finally {
    await resetClusterConnector();
  }
  return results;
}

async function dns(values: Flags): Promise<number> {
  const service = need(values.service, 'dns needs --service');
  const namespace = need(values.namespace, 'dns needs --namespace');
  const hostname = need(values.hostname, 'dns needs --hostname');
  const out = structured(values);
  let clusterId = values['cluster-id'];
  if (!clusterId) {
    const cluster = need(values.cluster, 'dns needs --cluster NAME or --cluster-id ID');
    const code = await withContext(values, async (ctx) => {
      await registeredCluster(ctx, cluster);
      const i = await new DynamoClaimStore(ctx.db, ctx.table).getIdentity(cluster);
      if (!i) throw new Error(`cluster "${cluster}" has no ${ID_CLAIM} yet`);
      if (!i.clusterSet)
        throw new Error(
          `cluster "${cluster}" is not a member of any ClusterSet: its multi-cluster DNS names (${CLUSTERSET_ZONE}) exist only within a ClusterSet (join one with "fleetscope clusterset join --cluster ${cluster} --set CLUSTERSET")`,
        );
      clusterId = i.clusterId;
      return 0;
    });
    if (code) return code;
  }
  const name = backendDnsName({ hostname, clusterId: clusterId!, service, namespace });
  if (out)
    out({
      ...(values.cluster ? { cluster: values.cluster } : {}),
      clusterId,
      service,
      namespace,
      hostname,
      dnsName: name,
    });
  else console.log(name);
  return 0;
}

function onOff(value: string | undefined, flag: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === 'on' || value === 'true') return true;
  if (value === 'off' || value === 'false') return false;
  throw new UsageError(`${flag} takes on or off`);
}

async function config(values: Flags): Promise<number> {
  const change: Partial<ClaimsSettings> = {};
  const newName = onOff(values['new-id-name'], '--new-id-name');
  const createCrd = onOff(values['create-crd'], '--create-crd');
  if (newName !== undefined) change.writeClusterIdName = newName;
  if (createCrd !== undefined) change.createCrd = createCrd;
  if (values.ocm !== undefined) {
    if (values.ocm !== 'auto' && values.ocm !== 'off') throw new UsageError('--ocm takes auto or off');
    change.ocm = values.ocm;
  }
  const out = structured(values);
  return withContext(values, async (ctx) => {
    const store = new DynamoClaimStore(ctx.db, ctx.table);
    if (values.cluster) await registeredCluster(ctx, values.cluster);
    if (Object.keys(change).length) await store.putSettings(change, values.cluster);
    const effective = await store.settingsFor(values.cluster);
    if (out) {
      out({
        ...(values.cluster ? { cluster: values.cluster } : { scope: 'fleet' }),
        updated: Object.keys(change).length > 0,
        newIdName: effective.writeClusterIdName,
        createCrd: effective.createCrd,
        ocm: effective.ocm,
      });
      return 0;
    }
    const scope = values.cluster ? `cluster ${values.cluster}` : 'the fleet';
    console.log(
      `claims settings for ${scope}${Object.keys(change).length ? ' (updated; applied by the next check)' : ''}:`,
    );
    console.log(
      `  new-id-name  ${effective.writeClusterIdName ? 'on' : 'off'}   (also write cluster.clusterset.k8s.io)`,
    );
    console.log(
      `  create-crd   ${effective.createCrd ? 'on' : 'off'}   (create the ClusterProperty CRD when absent)`,
    );
    console.log(`  ocm          ${effective.ocm}   (mirror to OCM ClusterClaims where OCM is installed)`);
    return 0;
  });
}

async function reconcile(values: Flags): Promise<number> {
  const grace = values['grace-seconds'];
  const graceSeconds = grace === undefined ? undefined : decimalFlag('--grace-seconds', grace);
  const out = structured(values);
  return withContext(values, async (ctx) => {
    const report = await reconcileClaims({
      ...claimsPorts(ctx),
      ...(graceSeconds !== undefined ? { graceMs: graceSeconds * 1000 } : {}),
    });
    const conflict = report.actions.some((a) => a.kind === 'conflict');
    if (out) {
      out(report);
      return conflict ? 1 : 0;
    }
    const lines = reportLines(report);
    console.log(
      `examined ${report.identities} identities and ${report.guards} guards: ${lines.length ? '' : 'nothing to repair'}`,
    );
    for (const line of lines) console.log(`  ${line}`);
    return conflict ? 1 : 0;
  });
}
