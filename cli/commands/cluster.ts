import { resolve } from 'node:path';
import { identityColumns } from '../../shared/claims/summary.js';
import { parseLabels } from '../../shared/fleet/cluster.js';
import { clusterAccess } from '../../shared/fleet/cluster-access.js';
import { deregisterCluster, registerCluster } from '../../shared/fleet/register.js';
import type { KubeconfigRef } from '../../shared/k8s/kubeconfig-ref.js';
import { textTable } from '../../shared/kernel/text-table.js';
import { type CliCommand, need, runSubcommand, UsageError } from '../command.js';
import { parseFlags, targetOptions, withContext } from '../context.js';
import { outputFormat, outputOptions, print } from '../output.js';

const usage = `usage:
  fleetscope cluster register --name NAME --kubeconfig FILE [--context CTX] [--label k=v ...]
  fleetscope cluster register --name NAME --secret-id ID [--context CTX] [--label k=v ...] --aws
  fleetscope cluster list [-o table|wide|json|yaml] [--sort-by name|nodes|observed]
  fleetscope cluster deregister --name NAME

  --state-dir DIR   local state (default .fleetscope, or FLEETSCOPE_STATE_DIR)
  --aws             act on the deployed stack instead (--stack NAME, default Fleetscope; --region R)

A cluster is registered only when its kubeconfig loads, the context exists and the cluster answers.`;

const options = {
  ...targetOptions,
  name: { type: 'string' },
  kubeconfig: { type: 'string' },
  'secret-id': { type: 'string' },
  context: { type: 'string' },
  label: { type: 'string', multiple: true },
  ...outputOptions,
  'sort-by': { type: 'string' },
} as const;

export const command: CliCommand = {
  name: 'cluster',
  summary: 'register, list and deregister the clusters of the fleet',
  usage,
  async run(args) {
    const { values, positionals } = parseFlags(args, options);
    return runSubcommand(positionals, {
      register: () => register(values),
      list: () => list(values),
      deregister: () => deregister(values),
    });
  },
};

type Flags = ReturnType<typeof parseFlags<typeof options>>['values'];

function kubeconfigRefOf(values: Flags): KubeconfigRef {
  const context = values.context;
  if (values.kubeconfig && values['secret-id'])
    throw new UsageError('give --kubeconfig or --secret-id, not both');
  if (values.kubeconfig)
    return { kind: 'file', path: resolve(values.kubeconfig), ...(context ? { context } : {}) };
  if (values['secret-id'])
    return { kind: 'secret', secretId: values['secret-id'], ...(context ? { context } : {}) };
  throw new UsageError('register needs --kubeconfig FILE or --secret-id ID');
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
    const access = clusterAccess();
    const cluster = await registerCluster(
      { name, kubeconfig: ref, labels },
      {
        store: ctx.registry,
        publisher: ctx.publisher,
        verify: (name, r) => access.verify(name, r),
        warn: (m) => console.error(`warning: ${m}`),
      },
    );
    console.log(`registered cluster ${cluster.name}`);
    return 0;
  });
}

async function list(values: Flags): Promise<number> {
  const format = outputFormat(values);
  const sortBy = sortKey(values['sort-by']);
  return withContext(values, async (ctx) => {
    const clusters = await ctx.registry.list();
    const ids = await identityColumns(
      ctx.db,
      ctx.table,
      clusters.map((c) => c.name),
    );
    const rows = await Promise.all(
      clusters.map(async (c) => ({
        cluster: c,
        claims: ids[c.name],
        status: await ctx.registry.getStatus(c.name),
      })),
    );
    rows.sort(sortBy);
    if (rows.length === 0 && format !== 'json' && format !== 'yaml') {
      console.log('no clusters registered (fleetscope cluster register adds one)');
      return 0;
    }
    print(format, rows, () => clusterTable(rows));
    return 0;
  });
}

type ListRow = {
  cluster: { name: string; labels: Record<string, string> };
  claims?: { id?: string; clusterSet?: string };
  status?: {
    reachable: boolean;
    serverVersion?: string;
    nodeCount?: number;
    metricsApi?: string;
    observedAt: string;
  };
};

const SORTS: Record<string, (a: ListRow, b: ListRow) => number> = {
  name: (a, b) => a.cluster.name.localeCompare(b.cluster.name),
  nodes: (a, b) => (b.status?.nodeCount ?? -1) - (a.status?.nodeCount ?? -1),
  observed: (a, b) => (b.status?.observedAt ?? '').localeCompare(a.status?.observedAt ?? ''),
};

function sortKey(key = 'name'): (a: ListRow, b: ListRow) => number {
  const sort = SORTS[key];
  if (!sort) throw new UsageError(`--sort-by ${key}: use one of ${Object.keys(SORTS).join(', ')}`);
  return sort;
}

function clusterTable(rows: ListRow[]): string[] {
  return textTable([
    ['NAME', 'ID', 'CLUSTERSET', 'REACHABLE', 'VERSION', 'NODES', 'METRICS', 'OBSERVED', 'LABELS'],
    ...rows.map(({ cluster, claims, status }) => [
      cluster.name,
      claims?.id ?? '-',
      claims?.clusterSet ?? '-',
      status ? (status.reachable ? 'yes' : 'no') : '-',
      status?.serverVersion ?? '-',
      status?.nodeCount?.toString() ?? '-',
      status?.metricsApi ?? '-',
      status ? age(status.observedAt) : 'never',
      Object.entries(cluster.labels)
        .map(([k, v]) => `${k}=${v}`)
        .join(',') || '-',
    ]),
  ]);
}

async function deregister(values: Flags): Promise<number> {
  const name = need(values.name, 'deregister needs --name');
  return withContext(values, async (ctx) => {
    await deregisterCluster(name, {
      store: ctx.registry,
      publisher: ctx.publisher,
      warn: (m) => console.error(`warning: ${m}`),
    });
    console.log(`deregistered cluster ${name}`);
    return 0;
  });
}

/** How long ago an inventory was taken: the REACHABLE column is only as fresh as this. */
function age(iso: string, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 120) return `${s}s ago`;
  if (s < 7200) return `${Math.round(s / 60)}m ago`;
  if (s < 172800) return `${Math.round(s / 3600)}h ago`;
  return `${Math.round(s / 86400)}d ago`;
}
