/**
 * Cluster identity in the soak (issue 34, defects 5 and 11, KEP-2149):
 *
 * - every value each cluster's `id.k8s.io` ClusterProperty takes during the run, watched in the
 *   simulated apiserver's store (every write that reaches it, whoever made it);
 * - a rebuilt kube-system: one cluster's kube-system gets a new UID behind the same endpoint (the
 *   namespace replaced in place, so its workloads stay: fleetscope only ever sees the UID), and an
 *   operator then registers it again under another name, which must be refused, naming the decision;
 * - a deregistration killed mid-way (SIGKILL of the CLI at a chosen write: ./killed-cli.ts), left so
 *   for a cycle, then run again to its end, and the cluster registered again under its name (by the
 *   main runtime, as the fleet was first registered: on the soak's clock, where `cluster register`
 *   would announce its features on this machine's, months off the simulated clusters'): it must come
 *   back with nothing of the old registration (no feature's desired value inherited);
 * - a cluster adopted (`cluster adopt --force`) by a second control plane (its own state directory), the
 *   CLI killed mid-way and then run again to its end; the soak's control plane must learn at its next
 *   pass that it no longer owns the cluster, and the cycle after takes it back the same way (killed,
 *   then finished): the cluster keeps its ID through both, and ends owned by the soak's again.
 */
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import type { Simulator } from '../local/sim/index.js';
import type { StoreEvent } from '../local/sim/store.js';
import { runCli, runKilledCli } from './cli-ops.js';
import { cycleAt, type SoakConfig } from './config.js';
import type { AdoptionRun, CliResult, IdSeen } from './records.js';

const ID_COLLECTION = 'clusterproperties.about.k8s.io';
const ID_KEY = 'id.k8s.io';

type Watchable = Simulator & {
  state(name: string): { store: { subscribe(l: (ev: StoreEvent) => void): () => void } };
};

/** Records each change of value of every cluster's id.k8s.io, by cycle. */
export class IdentityWatch {
  readonly seen: IdSeen[] = [];
  cycle = 0;
  private readonly last = new Map<string, string | undefined>();
  private readonly offs: (() => void)[];

  constructor(sim: Simulator) {
    this.offs = sim.clusters.map((c) =>
      (sim as Watchable).state(c.name).store.subscribe((ev) => {
        if (ev.collection !== ID_COLLECTION || ev.key !== ID_KEY) return;
        const value = ev.type === 'DELETED' ? undefined : (ev.object?.spec?.value as string | undefined);
        if (this.last.has(c.name) && this.last.get(c.name) === value) return;
        this.last.set(c.name, value);
        this.seen.push({ cluster: c.name, cycle: this.cycle, value });
      }),
    );
  }

  close(): void {
    for (const off of this.offs) off();
  }
}

/** kube-system with a new UID, in place (its objects stay); the UID derived from the cluster's name. */
export function rebuildKubeSystem(sim: Simulator, cluster: string): { oldUid: string; newUid: string } {
  const store = sim.cluster(cluster).store;
  const ns = store.get('namespaces', 'kube-system');
  if (!ns?.metadata?.uid) throw new Error(`${cluster}: no kube-system namespace to rebuild`);
  const h = createHash('sha256').update(`rebuilt ${cluster}`).digest('hex');
  const newUid = `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
  const { resourceVersion: _rv, ...metadata } = ns.metadata;
  store.put('namespaces', { ...ns, metadata: { ...metadata, uid: newUid } });
  return { oldUid: ns.metadata.uid, newUid };
}

/** `cluster register` of a simulated cluster, through its context in the soak's kubeconfig. */
export const registerArgs = (name: string, kubeconfig: string, context: string): string[] => [
  'cluster',
  'register',
  '--name',
  name,
  '--kubeconfig',
  kubeconfig,
  '--context',
  context,
  '--label',
  'fleetscope.io/source=soak',
];

/** The write of `cluster deregister` that the kill comes before: past its first, before its last. */
export const DEREGISTER_KILL_AT_WRITE = 2;

export function killDeregistration(cluster: string, stateDir: string) {
  return runKilledCli(['cluster', 'deregister', '--name', cluster], stateDir, DEREGISTER_KILL_AT_WRITE);
}

/** After a killed deregistration: run it again to its end, and register the cluster again (`register`). */
export async function finishAndRegisterAgain(
  cluster: string,
  stateDir: string,
  register: () => Promise<boolean>,
): Promise<{ finish: CliResult; register: CliResult }> {
  const finish = await runCli(['cluster', 'deregister', '--name', cluster], stateDir);
  const ok = finish.code === 0 && (await register());
  const args = ['(runtime)', 'register', '--name', cluster];
  return {
    finish,
    register: { args, code: ok ? 0 : 1, output: ok ? '' : 'the runtime did not register it' },
  };
}

/**
 * The DynamoDB writes of `cluster adopt --force` that the kills come before. Away (not registered in
 * the adopting control plane): the owner Lease taken, the UID guard and the registration written, the
 * carried identity not yet. Back (registered, owned elsewhere): the owner Lease taken, nothing recorded.
 */
export const ADOPT_AWAY_KILL_AT_WRITE = 3;
export const ADOPT_BACK_KILL_AT_WRITE = 1;

/** The owner identity of the control plane a state directory is (as the local runtime names it). */
export const controlPlaneOf = (stateDir: string): string => `local:${resolve(stateDir)}`;

/** `cluster adopt --force` from `stateDir`, killed before its write `atWrite`, then run again to its end. */
export async function adoptKilledThenFinished(
  cluster: string,
  stateDir: string,
  atWrite: number,
  extra: string[] = [],
): Promise<AdoptionRun> {
  const args = ['cluster', 'adopt', '--name', cluster, '--force', ...extra];
  const kill = await runKilledCli(args, stateDir, atWrite);
  const finish = await runCli(args, stateDir);
  return { by: controlPlaneOf(stateDir), killed: kill.killed, kill, finish };
}

/**
 * The cycles in which the identity faults change a cluster's registration (run.ts identityOps: the last
 * cluster rebuilt, the second deregistered and registered again, the first adopted away and back), by
 * cluster: what fleetscope remembered of it may be gone then, by design.
 */
export function registrationCycles(
  cfg: Pick<SoakConfig, 'cycles' | 'rebuildAt' | 'deregisterAt' | 'adoptAt'>,
  names: readonly string[],
): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>();
  if (names.length < 3) return out;
  const add = (cluster: string | undefined, ...cycles: number[]) => {
    if (cluster) out.set(cluster, new Set([...(out.get(cluster) ?? []), ...cycles]));
  };
  add(names.at(-1), cycleAt(cfg, cfg.rebuildAt));
  const dereg = cycleAt(cfg, cfg.deregisterAt);
  add(names[1], dereg, dereg + 1);
  const adopt = cycleAt(cfg, cfg.adoptAt);
  add(names[0], adopt, adopt + 1);
  return out;
}
