import {
  type ClaimsPorts,
  joinClusterSet,
  leaveClusterSet,
  type MembershipResult,
  moveClusterSet,
} from '../../shared/claims/membership.js';
import { clusterSetProblem } from '../../shared/claims/rules.js';
import { claimStoreOf, DynamoClaimStore } from '../../shared/claims/store-dynamo.js';
import { claimsView, clusterSetLines } from '../../shared/claims/summary.js';
import { type CliCommand, need, runSubcommand, UsageError } from '../command.js';
import { type CliContext, parseFlags, targetOptions, withContext } from '../context.js';
import { outputFormat, outputOptions, printLines, structured } from '../output.js';

const usage = `usage:
  fleetscope clusterset join  --cluster NAME --set CLUSTERSET
  fleetscope clusterset leave --cluster NAME [--set CLUSTERSET]
  fleetscope clusterset move  --cluster NAME --to CLUSTERSET
  fleetscope clusterset list  [--set CLUSTERSET] [-o table|wide|json|yaml]

  --state-dir DIR   local state (default .fleetscope, or FLEETSCOPE_STATE_DIR)
  --aws             act on the deployed stack instead (--stack NAME, default Fleetscope; --region R)

A cluster is a member of at most one ClusterSet. While it is, it carries the claim
clusterset.k8s.io = CLUSTERSET and its id.k8s.io cannot change (rename: leave, change, rejoin).
Within a ClusterSet no two members have the same id.k8s.io: a join with a taken ID is refused.
The change is recorded in DynamoDB at once and written into the cluster by the claims worker
(locally before the command returns; with --aws within seconds).`;

const options = {
  ...targetOptions,
  cluster: { type: 'string' },
  set: { type: 'string' },
  to: { type: 'string' },
  ...outputOptions,
} as const;

type Flags = ReturnType<typeof parseFlags<typeof options>>['values'];

export const command: CliCommand = {
  name: 'clusterset',
  summary: 'join, leave or move between ClusterSets (KEP-2149 membership)',
  usage,
  outputs: { join: 'data', leave: 'data', move: 'data', list: 'data' },
  async run(args) {
    const { values, positionals } = parseFlags(args, options);
    return runSubcommand(positionals, {
      join: () => {
        const set = setName(values.set, '--set', 'join');
        return change(values, (p, c) => joinClusterSet(p, c, set));
      },
      leave: () => change(values, (p, c) => leaveClusterSet(p, c, values.set)),
      move: () => {
        const to = setName(values.to, '--to', 'move');
        return change(values, (p, c) => moveClusterSet(p, c, to));
      },
      list: () => list(values),
    });
  },
};

/** A ClusterSet name from the command line: one that does not parse is a usage error, on any fleet. */
function setName(value: string | undefined, flag: string, verb: string): string {
  const name = need(value, `${verb} needs ${flag}`);
  const problem = clusterSetProblem(name);
  if (problem) throw new UsageError(`${flag}: ${problem}`);
  return name;
}

export function claimsPorts(ctx: CliContext): ClaimsPorts {
  return {
    store: new DynamoClaimStore(ctx.db, ctx.table),
    registry: ctx.registry,
    publisher: ctx.publisher,
    warn: (m) => console.error(`warning: ${m}`),
  };
}

async function change(
  values: Flags,
  op: (p: ClaimsPorts, cluster: string) => Promise<MembershipResult>,
): Promise<number> {
  const cluster = need(values.cluster, 'give the cluster with --cluster NAME');
  return withContext(values, async (ctx) => {
    const ports = claimsPorts(ctx);
    const r = await op(ports, cluster);
    await ctx.runtime?.bus.drain(); // local: the claims worker has written the cluster when this returns
    const view = await claimsView(ports.store, cluster);
    const out = structured(values);
    if (out) {
      out({ ...r, claims: view.claims, inCluster: view.sync });
      return 0;
    }
    // One line, as every changing command prints: what changed, and where the cluster's copy stands
    // (`claims get --cluster NAME` shows every claim).
    const what = r.changed
      ? r.clusterSet
        ? `cluster ${cluster} is now a member of ClusterSet ${r.clusterSet} (id.k8s.io ${r.clusterId})`
        : `cluster ${cluster} left its ClusterSet (id.k8s.io ${r.clusterId} stays)`
      : r.clusterSet
        ? `cluster ${cluster} already is a member of ClusterSet ${r.clusterSet}`
        : `cluster ${cluster} is not a member of any ClusterSet`;
    const where =
      ctx.mode === 'aws'
        ? 'the claims worker writes it into the cluster within seconds'
        : view.sync
          ? `in-cluster ${view.sync.state}${view.sync.error ? ` (${view.sync.error})` : ''}`
          : 'in-cluster not written yet';
    console.log(`${what}; ${where}`);
    return 0;
  });
}

async function list(values: Flags): Promise<number> {
  return withContext(values, async (ctx) => {
    if (structured(values)) {
      const identities = await new DynamoClaimStore(ctx.db, ctx.table).listIdentities();
      const members = identities
        .filter((i) => i.clusterSet && (!values.set || i.clusterSet === values.set))
        .map((i) => ({
          clusterSet: i.clusterSet,
          cluster: i.cluster,
          clusterId: i.clusterId,
          memberSince: i.memberSince,
        }));
      structured(values)?.(members);
      return 0;
    }
    const wide = outputFormat(values) === 'wide';
    printLines(await clusterSetLines(claimStoreOf(ctx), values.set, wide));
    return 0;
  });
}
