import { resolve } from 'node:path';
import { claimStoreOf, DynamoClaimStore } from '../../shared/claims/store-dynamo.js';
import { identityColumns } from '../../shared/claims/summary.js';
import { parseLabels, type RegisteredCluster } from '../../shared/fleet/cluster.js';
import { isStale, reachabilityText } from '../../shared/fleet/reachability.js';
import { AlreadyRegisteredError, registerCluster } from '../../shared/fleet/register.js';
import { describeKubeconfigRef, type KubeconfigRef } from '../../shared/k8s/kubeconfig-ref.js';
import { assumeRoleProblem } from '../../shared/k8s/role.js';
import { textTable } from '../../shared/kernel/text-table.js';
import { readConfig } from '../../shared/platform/config.js';
import { type CliCommand, need, runSubcommand, UsageError } from '../command.js';
import { type CliContext, parseFlags, registeredCluster, stateDirOf, withContext } from '../context.js';
import { isDocument, outputFormat, print } from '../output.js';
import { type Flags, options } from './cluster-flags.js';

const usage = `usage:
  fleetscope cluster register --name NAME --kubeconfig FILE [--context CTX] [--label k=v ...]
  fleetscope cluster register --name NAME --secret-id ID [--context CTX] [--label k=v ...] --aws
      [--assume-role ARN [--external-id ID]]   reach an EKS cluster through a role in its own account
  fleetscope cluster list [--cluster NAME ...] [-o table|wide|json|yaml] [--sort-by name|nodes|observed|version|reachable]
  fleetscope cluster refresh [--cluster NAME ...] [-o table|wide|json|yaml]
                                                         inventory now, and what changed
  fleetscope cluster deregister --name NAME           take it out of the fleet, and out of it what
                                                         fleetscope created there (run it again to
                                                         finish one that was interrupted)
  fleetscope cluster adopt --name NAME [--from OWNER]   make this control plane the cluster's owner
  fleetscope cluster adopt --name NAME --force [--kubeconfig FILE [--context CTX]]
                                                         take the cluster over from another control plane
                                                         (another stack or state directory), registering
                                                         it here when it is not yet

  --state-dir DIR   local state (default .fleetscope, or FLEETSCOPE_STATE_DIR)
  --aws             act on the deployed stack instead (--stack NAME, default Fleetscope; --region R)

A cluster is registered only when its kubeconfig loads, the context exists, the role (if any) can be
assumed and the cluster answers. adopt succeeds only while the owner is still the one read (or --from).`;

export const command: CliCommand = {
  name: 'cluster',
  summary: 'register, list and deregister the clusters of the fleet',
  usage,
  outputs: { register: 'action', list: 'data', refresh: 'data', deregister: 'action', adopt: 'action' },
  async run(args) {
    const { values, positionals } = parseFlags(args, options);
    return runSubcommand(positionals, {
      register: () => register(values),
      list: () => list(values),
      // Loaded when used: cluster access and the runtime's delivery would slow every `cluster list`.
      refresh: async () => (await import('./cluster-refresh.js')).refresh(values),
      deregister: () => deregister(values),
      adopt: () => adopt(values),
    });
  },
};

function kubeconfigRefOf(values: Flags): KubeconfigRef {
  const context = values.context;
  if (values.kubeconfig && values['secret-id'])
    throw new UsageError('give --kubeconfig or --secret-id, not both');
  const extra = { ...(context ? { context } : {}), ...assumeRoleOf(values) };
  if (values.kubeconfig) return { kind: 'file', path: resolve(values.kubeconfig), ...extra };
  if (values['secret-id']) return { kind: 'secret', secretId: values['secret-id'], ...extra };
  throw new UsageError('register needs --kubeconfig FILE or --secret-id ID');
}

function assumeRoleOf(values: Flags): Pick<KubeconfigRef, 'assumeRole'> {
  const roleArn = values['assume-role'];
  const externalId = values['external-id'];
  if (!roleArn) {
    if (externalId) throw new UsageError('--external-id goes with --assume-role');
    return {};
  }
  const assumeRole = { roleArn, ...(externalId ? { externalId } : {}) };
  const problem = assumeRoleProblem(assumeRole);
  if (problem) throw new UsageError(problem);
  return { assumeRole };
}

/** The registration as printed: an external ID is said to be set, never shown. */
function printable(c: RegisteredCluster): RegisteredCluster {
  const role = c.kubeconfig.assumeRole;
  if (!role?.externalId) return c;
  return { ...c, kubeconfig: { ...c.kubeconfig, assumeRole: { ...role, externalId: '(set)' } } };
}

async function register(values: Flags): Promise<number> {
  const name = need(values.name, 'register needs --name');
  const ref = kubeconfigRefOf(values);
  let labels: Record<string, string>;
  try {
    labels = parseLabels(values.label ?? []);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  return withContext(values, async (ctx) => {
    const { clusterAccess } = await import('../../shared/fleet/cluster-access.js');
    const { verifyThroughStack } = await import('../remote-verify.js');
    const access = clusterAccess();
    // A deregistration killed halfway may have left the name's records (features, balloons): a new cluster under
    // that name starts from the defaults, not from what the old one was set to.
    if (!(await ctx.registry.get(name)))
      await (await import('./cluster-deregister.js')).forgetClusterRecords(ctx, name);
    const cluster = await registerCluster(
      { name, kubeconfig: ref, labels },
      {
        store: ctx.registry,
        publisher: ctx.publisher,
        // Against a deployed stack the check runs in its verify function, as the workers will reach
        // the cluster (a member role trusts the control plane, not the operator).
        verify: ctx.verifyFunction
          ? (name, r) => verifyThroughStack(ctx.verifyFunction as string, name, r)
          : (name, r) => access.verify(name, r),
        warn: (m) => console.error(`warning: ${m}`),
        owner: readConfig().controlPlane,
        idHolder: (id) => idHolder(ctx, id),
        // Locally: the cluster itself says whether another control plane owns it (a deployed stack's
        // verify function does not write to clusters; its first cycle takes the lease).
        ...(ctx.verifyFunction
          ? {}
          : {
              holdOwner: async (n: string, r: KubeconfigRef) =>
                (await import('../../shared/fleet/owner-lease.js')).ownerRefusal(
                  n,
                  await access.client(n, r),
                  Date.now(),
                ),
            }),
      },
    ).catch((err) => {
      throw err instanceof AlreadyRegisteredError
        ? new Error(alreadyRegistered(err.existing, ctx.mode === 'local' ? stateDirOf(values) : undefined))
        : err;
    });
    console.log(`registered cluster ${cluster.name}`);
    return 0;
  });
}

/**
 * `adopt --force`: the cluster's owner lease taken from whichever control plane holds it, with the
 * identity the cluster carries (its ID, ClusterSet membership and custom claims, as they are:
 * shared/claims/adoption.ts), registered here first when it is not yet. The old control plane sees the
 * lease at its next claims pass, stops writing and gives up its membership record of the cluster.
 */
async function takeOver(name: string, values: Flags): Promise<number> {
  const { clusterAccess } = await import('../../shared/fleet/cluster-access.js');
  const { holdOwnerLease, controlPlaneIdentity } = await import('../../shared/fleet/owner-lease.js');
  const { adoptIdentity, adoptionProblem, readCarried } = await import('../../shared/claims/adoption.js');
  const { ClusterClaimsApi } = await import('../../shared/claims/incluster.js');
  const { claimsPorts } = await import('./clusterset.js');
  const access = clusterAccess();
  return withContext(values, async (ctx) => {
    const me = controlPlaneIdentity(); // the runtime names this state's control plane
    const claims = claimsPorts(ctx);
    // Whom the lease was taken from; `resumed`: it was this control plane's already (an adoption killed
    // after its lease write and run again, or one repeated), so it was taken from no one this time.
    let from = 'no control plane';
    let resumed = false;
    let carried: Awaited<ReturnType<typeof readCarried>> | undefined;
    let uid = '';
    const take = async (n: string, ref: KubeconfigRef) => {
      const client = await access.client(n, ref);
      const api = new ClusterClaimsApi(client);
      carried = await readCarried(api);
      uid = await api.kubeSystemUid();
      const problem = await adoptionProblem(claims, n, carried);
      if (problem) return `cluster "${n}" not adopted: ${problem}`;
      const r = await holdOwnerLease(client, me, Date.now(), { force: true });
      if (r.before.kind === 'other' || r.before.kind === 'expired')
        from = `control plane "${r.before.holder}"`;
      resumed = r.before.kind === 'mine';
      return r.held ? undefined : `cluster "${n}": the owner lease changed meanwhile; try again`;
    };
    const adopt = async (c: RegisteredCluster) => {
      if (!carried) return;
      await adoptIdentity(claims, { cluster: c.name, kubeSystemUid: uid, kubeconfig: c.kubeconfig, carried });
    };
    const existing = await ctx.registry.get(name);
    if (existing) {
      const refused = await take(name, existing.kubeconfig);
      if (refused) throw new Error(refused);
      await adopt(existing);
      await ctx.registry.recordOwnedElsewhere(name, undefined, new Date().toISOString());
    } else {
      if (!values.kubeconfig && !values['secret-id'])
        throw new UsageError(
          `cluster "${name}" is not registered here: give --kubeconfig FILE (and --context) to take it over`,
        );
      await registerCluster(
        { name, kubeconfig: kubeconfigRefOf(values), labels: parseLabels(values.label ?? []) },
        {
          store: ctx.registry,
          publisher: ctx.publisher,
          verify: (n, r) => access.verify(n, r),
          warn: (m) => console.error(`warning: ${m}`),
          owner: readConfig().controlPlane,
          holdOwner: take,
          idHolder: (id) => idHolder(ctx, id),
          prepare: adopt,
        },
      );
    }
    const id = await claims.store.getIdentity(name);
    const what = id
      ? ` with ID ${id.clusterId}${id.clusterSet ? ` in ClusterSet ${id.clusterSet}` : ''}`
      : '';
    const registered = existing ? '' : ' (registered here)';
    console.log(
      resumed
        ? `cluster ${name}: taken over by ${me}${what}${registered}; the owner lease was already this control plane's (an adoption resumed or repeated)`
        : `cluster ${name}: taken over from ${from} by ${me}${what}${registered}`,
    );
    return 0;
  });
}

/**
 * The name is taken (by `npm start`'s demo, or an earlier walkthrough): where the registration points and
 * the three ways on, the command for each.
 */
function alreadyRegistered(existing: RegisteredCluster, stateDir: string | undefined): string {
  const where = stateDir ? ` in ${stateDir}` : '';
  return (
    `cluster "${existing.name}" is already registered${where} (${describeKubeconfigRef(existing.kubeconfig)}, ` +
    `since ${existing.registeredAt}): deregister it first (fleetscope cluster deregister --name ${existing.name}), ` +
    'register this one under another --name, or keep separate state (--state-dir DIR or FLEETSCOPE_STATE_DIR)'
  );
}

async function list(values: Flags): Promise<number> {
  const format = outputFormat(values);
  const sortBy = sortKey(values['sort-by']);
  return withContext(values, async (ctx) => {
    const clusters = values.cluster?.length
      ? await Promise.all([...new Set(values.cluster)].map((n) => registeredCluster(ctx, n)))
      : await ctx.registry.list();
    const ids = await identityColumns(
      claimStoreOf(ctx),
      clusters.map((c) => c.name),
    );
    const statuses = await ctx.registry.statuses(clusters.map((c) => c.name));
    const now = Date.now();
    const rows = clusters.map((c) => {
      const status = statuses.get(c.name);
      // An observation carries its staleness: JSON readers get the same judgement as the table.
      return {
        cluster: printable(c),
        claims: ids[c.name],
        status: status && { ...status, stale: isStale(status, now) },
      };
    });
    rows.sort(sortBy);
    if (rows.length === 0 && !isDocument(format)) {
      console.log('no clusters registered (fleetscope cluster register adds one)');
      return 0;
    }
    print(format, rows, (wide) => clusterTable(rows, wide));
    return 0;
  });
}

type ListRow = {
  cluster: Pick<
    RegisteredCluster,
    'name' | 'labels' | 'owner' | 'registeredAt' | 'kubeconfig' | 'ownedElsewhere' | 'deregistering'
  >;
  claims?: { id?: string; clusterSet?: string };
  status?: {
    reachable: boolean;
    serverVersion?: string;
    nodeCount?: number;
    metricsApi?: string;
    observedAt: string;
    error?: string;
  };
};

const SORTS: Record<string, (a: ListRow, b: ListRow) => number> = {
  name: (a, b) => a.cluster.name.localeCompare(b.cluster.name),
  nodes: (a, b) => (b.status?.nodeCount ?? -1) - (a.status?.nodeCount ?? -1),
  observed: (a, b) => (b.status?.observedAt ?? '').localeCompare(a.status?.observedAt ?? ''),
  version: (a, b) =>
    (a.status?.serverVersion ?? '').localeCompare(b.status?.serverVersion ?? '', 'en', { numeric: true }),
  reachable: (a, b) => Number(a.status?.reachable ?? -1) - Number(b.status?.reachable ?? -1),
};

function sortKey(key = 'name'): (a: ListRow, b: ListRow) => number {
  const sort = SORTS[key];
  if (!sort) throw new UsageError(`--sort-by ${key}: use one of ${Object.keys(SORTS).join(', ')}`);
  return sort;
}

/**
 * Who acts on the cluster: another control plane that holds its owner Lease (it was adopted from
 * here), or the registration's owner; a deregistration left halfway says so.
 */
function ownerText(c: ListRow['cluster']): string {
  if (c.deregistering) return 'deregistering';
  if (c.ownedElsewhere) return `${c.ownedElsewhere.holder} (lease)`;
  return c.owner ?? 'any';
}

function clusterTable(rows: ListRow[], wide: boolean): string[] {
  const now = Date.now();
  const head = ['NAME', 'ID', 'CLUSTERSET', 'REACHABLE', 'VERSION', 'NODES', 'METRICS'];
  if (wide) head.push('OBSERVED AT (WALL TIME)', 'REGISTERED AT', 'KUBECONFIG', 'ERROR');
  return textTable([
    [...head, 'OWNER', 'LABELS'],
    ...rows.map(({ cluster, claims, status }) => [
      cluster.name,
      claims?.id ?? '-',
      claims?.clusterSet ?? '-',
      reachabilityText(status, now),
      status?.serverVersion ?? '-',
      status?.nodeCount?.toString() ?? '-',
      status?.metricsApi ?? '-',
      ...(wide
        ? [
            status?.observedAt ?? '-',
            cluster.registeredAt,
            describeKubeconfigRef(cluster.kubeconfig),
            status?.error ?? '',
          ]
        : []),
      ownerText(cluster),
      Object.entries(cluster.labels)
        .map(([k, v]) => `${k}=${v}`)
        .join(',') || '-',
    ]),
  ]);
}

/** The registered cluster whose ID is `id` (an operator's ID, which no UID guard names). */
async function idHolder(ctx: CliContext, id: string): Promise<string | undefined> {
  return (await new DynamoClaimStore(ctx.db, ctx.table).listIdentities()).find((i) => i.clusterId === id)
    ?.cluster;
}

async function deregister(values: Flags): Promise<number> {
  const name = need(values.name, 'deregister needs --name');
  return withContext(values, async (ctx) => {
    const { deregisterNamed } = await import('./cluster-deregister.js');
    return deregisterNamed(ctx, name);
  });
}

async function adopt(values: Flags): Promise<number> {
  const name = need(values.name, 'adopt needs --name');
  if (values.force) return takeOver(name, values);
  return withContext(values, async (ctx) => {
    const me = readConfig().controlPlane;
    const cluster = await ctx.registry.get(name);
    if (!cluster) throw new Error(`cluster "${name}" is not registered`);
    const from = values.from ?? cluster.owner;
    if (values.from !== undefined && values.from !== cluster.owner)
      throw new Error(
        `cluster "${name}" is owned by ${cluster.owner ?? 'no control plane'}, not ${values.from}`,
      );
    if (from === me) {
      console.log(`cluster ${name} is already owned by ${me}`);
      return 0;
    }
    if (!(await ctx.registry.transferOwner(name, from, me)))
      throw new Error(
        `cluster "${name}" changed owner meanwhile; read it again (cluster list) before adopting`,
      );
    console.log(`cluster ${name}: owner ${from ?? '(none)'} -> ${me}`);
    return 0;
  });
}
