/**
 * The soak: the local runtime, in child processes, over a simulated fleet for many cycles of every
 * capability in the catalogue (compressed time: each cycle advances the clusters' clock by the shortest
 * schedule period and runs every schedule once, in dependency order), with faults on a share of the
 * Kubernetes requests, runtimes killed with SIGKILL at random points and restarted on the same state,
 * two runtimes racing for part of the run and CLI commands changing memberships meanwhile; then every
 * registered invariant is checked on what is left.
 */
import { createReadStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { DeadLetter } from '../local/invoker.js';
import { connectState } from '../local/state/connect.js';
import { BALLOONS } from '../shared/balloons/events.js';
import { CAPABILITIES } from '../shared/capabilities.js';
import { CLAIM_MS } from '../shared/features/machine.js';
import { FLEETSCOPE_NAMESPACE } from '../shared/features/model.js';
import { DynamoFeatureStore } from '../shared/features/store-dynamo.js';
import { DynamoRegistry } from '../shared/fleet/registry-dynamo.js';
import { prng } from '../shared/kernel/prng.js';
import { DEFAULTS } from '../shared/platform/config.js';
import { SkewedAgent } from './agent.js';
import {
  addElasticPools,
  balloonClusters,
  changeWorkloads,
  ensurePolicy,
  settleWorkloads,
} from './balloons.js';
import { SOAK_CAPABILITIES } from './capabilities.js';
import type { PoisonEvent } from './child.js';
import { randomOp, runCli } from './cli-ops.js';
import { cycleAt, type SoakConfig, soakPeriodMs } from './config.js';
import { FAILING_FEATURE, failingAttempts, registerDeclared, SOAK_NS, stuckShown } from './declared.js';
import { FeatureObjectDeleter } from './deleted-feature.js';
import { type FaultCounts, injectFaults } from './faults.js';
import { FeatureOperator } from './features.js';
import { observePreemptions, observeResizes, startSoakFleet } from './fleet.js';
import {
  ADOPT_AWAY_KILL_AT_WRITE,
  ADOPT_BACK_KILL_AT_WRITE,
  adoptKilledThenFinished,
  controlPlaneOf,
  finishAndRegisterAgain,
  IdentityWatch,
  killDeregistration,
  rebuildKubeSystem,
  registerArgs,
  registrationCycles,
} from './identity.js';
import { sampleBalloons } from './invariants/balloons.js';
import { idCommands } from './invariants/identity.js';
import { Ledger } from './ledger.js';
import { HELD_ON_BACKOFF, OomAfterDownsize } from './oom-faults.js';
import { PausedReconciler } from './paused.js';
import type {
  Adopted,
  BalloonSample,
  CliResult,
  ObjectDelete,
  PodRemoval,
  Preemption,
  Rebuilt,
  Reregistered,
  ResizeRequest,
  Text,
  Touch,
} from './records.js';
import { RuntimeProcess } from './runtimes.js';
import { MOVED_SKEW_MS, RACER_SKEW_MS, type SkewedLog, skewedPasses } from './skew.js';
import { observeTouches } from './touches.js';
import type { Outcome, SoakState } from './types.js';

export interface InvariantRow extends Outcome {
  capability: string;
  name: string;
}

export interface SoakReport {
  config: SoakConfig;
  cycles: number;
  capabilityCycles: Record<string, { attempted: number; clean: number }>;
  kills: number;
  raceCycles: number;
  faults: FaultCounts;
  cli: Record<string, number>;
  resizes: number;
  balloons: {
    clusters: number;
    pods: number;
    inflates: number;
    deflates: number;
    batchAdded: number;
    batchRemoved: number;
    policiesRestored: number;
  };
  flips: string[];
  /**
   * The lifecycle faults of issue 16, each as often as it was actually hit: a run where one is zero did
   * not test what it claims to.
   */
  injected: Record<string, number>;
  seconds: number;
  invariants: InvariantRow[];
}

interface Run {
  cfg: SoakConfig;
  dir: string;
  stateDir: string;
  random: () => number;
  ledger: Ledger;
  deadLetters: DeadLetter[];
  /** Malformed events delivered to a runtime that finished its cycle (each must be a dead letter). */
  poisoned: string[];
  events: string[];
  /** The CLI commands of the run, each with the cycle it ran in. */
  cli: (CliResult & { cycle?: number })[];
  kills: number;
  raceCycles: number;
  /** The operators' CLI pairs started so far (the first one makes ClusterSet members). */
  pairs: number;
  logs: number;
  /** Each runtime's log and how far its clock ran off the clusters' (./skew.ts). */
  runtimeLogs: SkewedLog[];
  /** The main runtime's skew: none until the race ends, then behind (moved to another machine). */
  mainSkewMs: number;
}

/** Everything one soak run holds: its state, its simulated fleet, and what it observes there. */
interface World {
  run: Run;
  cfg: SoakConfig;
  db: DynamoDBDocumentClient;
  /** The feature records, as the soak's observers read them. */
  features: DynamoFeatureStore;
  sim: Awaited<ReturnType<typeof startSoakFleet>>['sim'];
  canaries: string[];
  names: string[];
  withBalloons: string[];
  /** The clean cycle from which each balloon cluster's scripted workload runs (./balloons.ts). */
  settleStarted: Map<string, number>;
  /** The shortest schedule period: what the clock advances each cycle. */
  period: number;
  resizes: ResizeRequest[];
  removals: PodRemoval[];
  deletes: ObjectDelete[];
  preemptions: Preemption[];
  samples: BalloonSample[];
  besideBalloons: Set<string>;
  workloads: { added: number; removed: number };
  operator: FeatureOperator;
  /** A reconciler paused past its claim (./paused.ts), started at the first flip. */
  paused: PausedReconciler;
  pausedAt?: number;
  /** The in-cluster agent with a skewed clock (./agent.ts). */
  agent: SkewedAgent;
  /** Deletes a Feature object mid-wait (./deleted-feature.ts). */
  deleter: FeatureObjectDeleter;
  touches: Touch[];
  ids: IdentityWatch;
  rebuilt?: Rebuilt;
  reregistered?: Reregistered;
  /** The cycle a deregistration was killed in, and what that CLI run said (./identity.ts). */
  deregKilled?: { cycle: number; killed: boolean };
  /** The cluster a second control plane adopted and the soak's took back (./identity.ts). */
  adopted?: Adopted;
  /** OOM kills after downsizes (./oom-faults.ts). */
  oom: OomAfterDownsize;
  close(keep?: boolean): Promise<void>;
}

/** The runtimes of the run: the main one, and the racer while two race. */
interface Runtimes {
  main: RuntimeProcess;
  racer?: RuntimeProcess;
}

export async function runSoak(cfg: SoakConfig, opts: { keep?: boolean; onCycle?: (c: number) => void } = {}) {
  const started = Date.now();
  const w = await openWorld(cfg);
  try {
    const runtimes: Runtimes = { main: await registerFleet(w) };
    const faults = injectFaults(w.sim, cfg);
    const killAt = pickKillCycles(cfg, w.run.random);
    for (let cycle = 1; cycle <= cfg.cycles + cfg.settleCycles; cycle++) {
      if (cycle === cfg.cycles + 1) faults.clear();
      await soakCycle(w, runtimes, cycle, killAt);
      opts.onCycle?.(cycle);
    }
    await runtimes.racer?.stop();
    await runtimes.main.stop();
    return await judge(w, faults.counts, started);
  } finally {
    await w.close(opts.keep);
  }
}

/** The state directory (and its server), the simulated fleet with its balloon pools, and the observers. */
async function openWorld(cfg: SoakConfig): Promise<World> {
  const dir = mkdtempSync(join(tmpdir(), 'fleetscope-soak-'));
  const run: Run = {
    cfg,
    dir,
    stateDir: join(dir, 'state'),
    random: prng(cfg.seed),
    ledger: new Ledger(),
    deadLetters: [],
    poisoned: [],
    events: [],
    cli: [],
    kills: 0,
    raceCycles: 0,
    pairs: 0,
    logs: 0,
    runtimeLogs: [],
    mainSkewMs: 0,
  };
  const shared = await connectState(run.stateDir); // the soak's lease keeps the state's server up
  const client = new DynamoDBClient({
    endpoint: shared.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'soak', secretAccessKey: 'soak' },
  });
  const db = DynamoDBDocumentClient.from(client);
  const { sim, canaries } = await startSoakFleet({
    clusters: cfg.clusters,
    nodes: cfg.nodes,
    now: Date.UTC(2026, 0, 5),
  });
  const names = sim.clusters.map((c) => c.name);
  const withBalloons = balloonClusters(cfg, names);
  addElasticPools(sim, cfg, withBalloons);
  const features = new DynamoFeatureStore(db, DEFAULTS.table);
  const w = {
    run,
    cfg,
    db,
    features,
    sim,
    canaries,
    names,
    withBalloons,
    settleStarted: new Map(),
    period: soakPeriodMs(),
    resizes: [] as ResizeRequest[],
    removals: [] as PodRemoval[],
    deletes: [] as ObjectDelete[],
    preemptions: [] as Preemption[],
    samples: [] as BalloonSample[],
    besideBalloons: new Set<string>(),
    workloads: { added: 0, removed: 0 },
    operator: new FeatureOperator(cfg, db, DEFAULTS.table, names, withBalloons),
    paused: new PausedReconciler(db, DEFAULTS.table, sim),
    agent: new SkewedAgent(sim, features),
    deleter: new FeatureObjectDeleter(sim, features),
    touches: [] as Touch[],
    ids: new IdentityWatch(sim),
  };
  const oom = new OomAfterDownsize(sim, w.resizes, cfg.oomFaults, registrationCycles(cfg, names));
  const unobserve = observeResizes(sim, w.resizes, w.removals, w.deletes);
  const untouch = observeTouches(sim, w.touches);
  const unwatch = observePreemptions(sim, w.preemptions);
  return {
    ...w,
    oom,
    async close(keep) {
      await w.agent.close();
      w.ids.close();
      unwatch();
      untouch();
      unobserve();
      await sim.stop();
      client.destroy();
      shared.release();
      if (!keep) rmSync(dir, { recursive: true, force: true });
    },
  };
}

const fileTarget = (path: string, name: string) => ({
  name,
  ref: { kind: 'file' as const, path, context: name },
});

/** The first runtime registers every simulated cluster; the balloon clusters get their policy. */
async function registerFleet(w: World): Promise<RuntimeProcess> {
  const kubeconfig = join(w.run.dir, 'kubeconfig.yaml');
  await w.sim.writeKubeconfig(kubeconfig);
  const main = await startRuntime(w.run);
  main.send({
    type: 'register',
    now: w.sim.clock.now(),
    targets: w.sim.clusters.map((c) => fileTarget(kubeconfig, c.name)),
  });
  const registered = await main.next((m) => m.type === 'registered');
  if (registered?.type === 'registered' && registered.error)
    throw new Error(`the soak could not register its fleet: ${registered.error}`);
  for (const c of w.withBalloons) await ensurePolicy(w.db, DEFAULTS.table, c);
  await registerDeclared(w.db, DEFAULTS.table, w.sim, w.sim.clock.now());
  return main;
}

/**
 * One soak cycle: the racer joins or leaves, workloads change, the clock advances, the operator flips
 * features, CLI commands race the runtimes, a runtime may be killed (and restarted), balloons sampled.
 */
async function soakCycle(w: World, rt: Runtimes, cycle: number, killAt: Set<number>): Promise<void> {
  const { cfg, run, sim } = w;
  const settling = cycle > cfg.cycles;
  const racing = !settling && cycle > cfg.race[0] * cfg.cycles && cycle <= cfg.race[1] * cfg.cycles;
  if (racing && !rt.racer) rt.racer = await startRuntime(run, RACER_SKEW_MS);
  if (!racing && rt.racer) {
    await rt.racer.stop();
    rt.racer = undefined;
    if (run.mainSkewMs === 0) {
      // The control plane moves to a machine whose clock runs behind, for the rest of the run.
      await rt.main.stop();
      run.mainSkewMs = MOVED_SKEW_MS;
      rt.main = await startRuntime(run, run.mainSkewMs);
    }
  }
  if (racing) run.raceCycles++;
  if (settling) await noteBalloonsOn(w, cycle - cfg.cycles);
  const changed = settling
    ? settleWorkloads(sim, cfg, w.withBalloons, cycle - cfg.cycles, w.settleStarted)
    : changeWorkloads(sim, cfg, w.withBalloons, run.random);
  w.workloads.added += changed.added;
  w.workloads.removed += changed.removed;
  sim.clock.advance(w.period);
  w.oom.beforeCycle(cycle, !settling && !racing);
  w.ids.cycle = cycle;
  if (!settling) await identityOps(w, rt.main, cycle);
  if (!settling) await w.operator.flip(cycle, sim.clock.now());
  await w.deleter.step(w.operator.done, cycle);
  // A pass over each flip in turn, until one froze at a write (./paused.ts); timed from when it froze.
  const flips = w.operator.done;
  const flipped = flips[(w.paused.outcome?.passes ?? 0) % Math.max(1, flips.length)];
  if (flipped && w.paused.canStart) w.paused.start(flipped.cluster, flipped.feature);
  if (w.pausedAt === undefined && w.paused.froze) w.pausedAt = cycle;
  await w.operator.restorePolicies();
  const runners = rt.racer ? [rt.main, rt.racer] : [rt.main];
  // The rebuilt cluster is left out of the operators' commands: its ID is judged unchanged; so is the
  // adopted one while it moves.
  const moving = w.adopted && cycle <= w.adopted.cycle + 1 ? w.adopted.cluster : undefined;
  const opsOn = w.names.filter((n) => n !== w.rebuilt?.cluster && n !== moving);
  const ops = !settling && cfg.cliEvery > 0 && cycle % cfg.cliEvery === 0 ? startCliPair(run, opsOn) : [];
  const victim = killAt.has(cycle) ? runners[Math.floor(run.random() * runners.length)] : undefined;
  const killed = await runCycle(run, runners, cycle, sim.clock.now(), w.names, victim);
  w.oom.afterCycle(cycle, runners.length === 1 && !settling);
  if (killed) {
    run.kills++;
    if (killed === rt.main) rt.main = await startRuntime(run, run.mainSkewMs);
    else rt.racer = await startRuntime(run, RACER_SKEW_MS);
  }
  run.cli.push(...(await Promise.all(ops)).map((r) => ({ ...r, cycle })));
  if (w.adopted?.cycle === cycle) {
    // The soak's control plane ran a pass with the cluster adopted away: what it now says of it.
    const reg = await new DynamoRegistry(w.db, DEFAULTS.table).get(w.adopted.cluster);
    w.adopted.yieldedTo = reg?.ownedElsewhere?.holder;
  }
  // Resumed once its claim has lapsed (and the runtimes' reconcilers took the task over).
  if (w.pausedAt !== undefined && (cycle - w.pausedAt) * w.period > CLAIM_MS) await w.paused.resume();
  await w.agent.step(sim.clock.now());
  w.samples.push(...sampleBalloons(sim, w.withBalloons, cycle, w.besideBalloons));
}

/** The clean cycle at which each balloon cluster's balloons are first On (its scripted workload starts). */
async function noteBalloonsOn(w: World, settleCycle: number): Promise<void> {
  for (const cluster of w.withBalloons) {
    if (w.settleStarted.has(cluster)) continue;
    const r = await w.features.get(cluster, { namespace: FLEETSCOPE_NAMESPACE, name: BALLOONS });
    if (r?.state === 'On') w.settleStarted.set(cluster, settleCycle);
  }
}

/**
 * The identity faults, at their cycles (./identity.ts): the last cluster's kube-system rebuilt and the
 * cluster registered again under another name; the second cluster's deregistration killed mid-way, and
 * the cycle after, finished and the cluster registered again.
 */
async function identityOps(w: World, main: RuntimeProcess, cycle: number): Promise<void> {
  const { cfg, run } = w;
  const kubeconfig = join(run.dir, 'kubeconfig.yaml');
  const rebuilt = w.names.at(-1);
  if (cycle === cycleAt(cfg, cfg.rebuildAt) && rebuilt && w.names.length > 2) {
    const uids = rebuildKubeSystem(w.sim, rebuilt);
    const againName = `${rebuilt}-again`;
    const again = await runCli(registerArgs(againName, kubeconfig, rebuilt), run.stateDir);
    run.cli.push({ ...again, cycle });
    w.rebuilt = { cluster: rebuilt, cycle, ...uids, again, againName };
  }
  await adoptionOps(w, cycle);
  const dereg = w.names[1];
  const at = cycleAt(cfg, cfg.deregisterAt);
  if (!dereg || w.names.length < 3) return;
  if (cycle === at) {
    const r = await killDeregistration(dereg, run.stateDir);
    run.cli.push({ ...r, cycle });
    w.deregKilled = { cycle, killed: r.killed };
  } else if (cycle === at + 1 && w.deregKilled) {
    const { finish, register } = await finishAndRegisterAgain(dereg, run.stateDir, async () => {
      main.send({ type: 'register', now: w.sim.clock.now(), targets: [fileTarget(kubeconfig, dereg)] });
      const r = await main.next((m) => m.type === 'registered');
      return r?.type === 'registered' && !r.error;
    });
    run.cli.push({ ...finish, cycle }, { ...register, cycle });
    w.reregistered = {
      cluster: dereg,
      killedAt: w.deregKilled.cycle,
      cycle,
      killed: w.deregKilled.killed,
      finish,
      register,
    };
  }
}

/**
 * The adoption fault, at its cycle (./identity.ts): a second control plane adopts the first cluster
 * (killed mid-way, then to its end); the cycle after, the soak's own takes it back the same way.
 */
async function adoptionOps(w: World, cycle: number): Promise<void> {
  const { cfg, run } = w;
  const cluster = w.names[0];
  const at = cycleAt(cfg, cfg.adoptAt);
  if (!cluster || w.names.length < 3) return;
  if (cycle === at) {
    const kubeconfig = join(run.dir, 'kubeconfig.yaml');
    const idBefore = w.ids.seen.filter((s) => s.cluster === cluster).at(-1)?.value;
    const away = await adoptKilledThenFinished(
      cluster,
      join(run.dir, 'second-control-plane'),
      ADOPT_AWAY_KILL_AT_WRITE,
      ['--kubeconfig', kubeconfig, '--context', cluster],
    );
    run.cli.push({ ...away.kill, cycle }, { ...away.finish, cycle });
    w.adopted = { cluster, cycle, ...(idBefore ? { idBefore } : {}), away };
  } else if (cycle === at + 1 && w.adopted) {
    const back = await adoptKilledThenFinished(cluster, run.stateDir, ADOPT_BACK_KILL_AT_WRITE);
    run.cli.push({ ...back.kill, cycle }, { ...back.finish, cycle });
    w.adopted.back = back;
  }
}

/** After the clean cycles: every capability's invariants over what the run left and saw, and the report. */
async function judge(w: World, faults: FaultCounts, started: number) {
  const state: SoakState = {
    db: w.db,
    table: DEFAULTS.table,
    idempotencyTable: DEFAULTS.idempotencyTable,
    sim: w.sim,
    resizes: w.resizes,
    removals: w.removals,
    ledger: w.run.ledger,
    deadLetters: w.run.deadLetters,
    poisoned: w.run.poisoned,
    texts: () => texts(w.run),
    canaries: w.canaries,
    balloonSamples: w.samples,
    preemptions: w.preemptions,
    podsOnBalloonNodes: w.besideBalloons.size,
    flips: flipsOfNow(w),
    balloonClusters: w.withBalloons,
    objectDeletes: w.deletes,
    paused: w.paused.outcome,
    agent: w.agent.outcome,
    stuckShown: await stuckShown(w.run.events, w.run.stateDir, SOAK_NS),
    cannotEnd: [FAILING_FEATURE],
    settleMinutes: (w.cfg.settleCycles * w.period) / 60_000,
    touches: w.touches,
    ids: w.ids.seen,
    idCommands: idCommands(w.run.cli),
    ...(w.rebuilt ? { rebuilt: w.rebuilt } : {}),
    ...(w.reregistered ? { reregistered: w.reregistered } : {}),
    ...(w.adopted ? { adopted: w.adopted } : {}),
    controlPlane: controlPlaneOf(w.run.stateDir),
    oomFaults: {
      faults: w.oom.faults,
      heldOnBackoff: heldOnBackoff(w.run),
      forgotten: w.oom.forgotten,
    },
  };
  const invariants = await checkInvariants(state);
  const balloons: SoakReport['balloons'] = {
    clusters: w.withBalloons.length,
    pods: new Set(w.samples.map((x) => `${x.cluster} ${x.pod}`)).size,
    inflates: w.resizes.filter((r) => r.balloon && r.direction === 'grow').length,
    deflates: w.resizes.filter((r) => r.balloon && r.direction === 'shrink').length,
    batchAdded: w.workloads.added,
    batchRemoved: w.workloads.removed,
    policiesRestored: w.operator.policiesRestored,
  };
  const flips = w.operator.done.map(
    (f) => `${f.cluster} ${f.feature} ${f.desired} @${f.cycle}${f.changed ? '' : ' (no change)'}`,
  );
  const failing = await failingAttempts(w.db, DEFAULTS.table, w.names);
  const skewed = await skewedPasses(w.run.runtimeLogs);
  const injected = {
    "passes of a control plane 2 h ahead, run on the cluster's clock": skewed.ahead,
    "passes of a control plane 45 min behind, run on the cluster's clock": skewed.behind,
    [`a reconciler paused past its claim, frozen at a write (${w.paused.outcome?.frozeAt ?? 'none'})`]: w
      .paused.outcome?.froze
      ? 1
      : 0,
    'Feature objects deleted while their transition waited for uses': w.deleter.deleted.length,
    'a rebuilt kube-system (new UID), registered again under another name': w.rebuilt ? 1 : 0,
    'deregistrations killed mid-way (then finished, and the cluster registered again)': w.reregistered?.killed
      ? 1
      : 0,
    'adoptions (cluster adopt --force) killed mid-way, then finished: away to a second control plane and back':
      Number(w.adopted?.away.killed ?? false) + Number(w.adopted?.back?.killed ?? false),
    'reports of an agent with a skewed clock': w.agent.outcome.reports,
    'of them, on echoing the current epoch while it wound down': w.agent.outcome.heldOn,
    'failed attempts of a declared task that cannot succeed': failing.attempts,
    'transitions shown stuck (event and features list)': failing.shownStuck(state.stuckShown),
    'OOM kills of a pod fleetscope had just downsized (within the revert window)': w.oom.faults.length,
    'reverts that followed them (the pod back at its size before the downsize)': w.oom.faults.filter(
      (f) => f.revertedAt !== undefined,
    ).length,
    'cycles in which the back-off hold after a revert blocked a due downsize':
      state.oomFaults?.heldOnBackoff ?? 0,
  };
  return {
    ...report(w.run, faults, w.resizes.length, invariants, started, w.names),
    balloons,
    flips,
    injected,
  };
}

/**
 * Cycles in which a runtime's rollout held a due downsize on back-off (its log says so each time, one
 * line each): counted in the whole file at once, not line by line, since every runtime's log is read.
 */
function heldOnBackoff(run: Run): number {
  let n = 0;
  for (const l of run.runtimeLogs) {
    if (!existsSync(l.file)) continue;
    const text = readFileSync(l.file, 'utf8');
    for (let i = text.indexOf(HELD_ON_BACKOFF); i >= 0; i = text.indexOf(HELD_ON_BACKOFF, i + 1)) n++;
  }
  return n;
}

/** The operator's flips that still stand: those before a cluster's registration again went with it. */
function flipsOfNow(w: World) {
  const again = w.reregistered;
  return w.operator.done.filter((f) => !again || f.cluster !== again.cluster || f.cycle >= again.cycle);
}

async function startRuntime(run: Run, skewMs = 0): Promise<RuntimeProcess> {
  run.logs++;
  const file = join(run.dir, `runtime-${run.logs}.log`);
  run.runtimeLogs.push({ file, skewMs });
  return RuntimeProcess.start(`runtime-${run.logs}`, run.stateDir, file, skewMs);
}

/** Distinct cycles (not the first, which registers the fleet's claims) whose runtime gets killed. */
function pickKillCycles(cfg: SoakConfig, random: () => number): Set<number> {
  const out = new Set<number>();
  const n = Math.min(cfg.kills, cfg.cycles - 1);
  while (out.size < n) out.add(2 + Math.floor(random() * (cfg.cycles - 1)));
  return out;
}

let lastCycleMs = 1000;

/** One cycle on every runner; the victim (if any) is killed at a random point of it. Returns the victim. */
async function runCycle(
  run: Run,
  runners: RuntimeProcess[],
  cycle: number,
  now: number,
  clusters: string[],
  victim?: RuntimeProcess,
): Promise<RuntimeProcess | undefined> {
  const t0 = Date.now();
  for (const capability of CAPABILITIES)
    for (const c of clusters) run.ledger.attempt(capability.id, c, cycle);
  const poison = cycle % POISON_EVERY === POISON_EVERY / 2 ? poisonEvents(cycle, clusters, now) : undefined;
  // One runtime gets the poison, so each malformed event is delivered once.
  runners.forEach((r, i) => {
    r.send({ type: 'cycle', cycle, now, ...(i === 0 && poison ? { poison } : {}) });
  });
  let timer: NodeJS.Timeout | undefined;
  let kill: Promise<void> | undefined;
  if (victim)
    timer = setTimeout(
      () => {
        kill = victim.kill();
      },
      Math.floor(run.random() * lastCycleMs),
    );
  const results = await Promise.all(
    runners.map((r) => r.next((m) => m.type === 'cycle-done' && m.cycle === cycle)),
  );
  clearTimeout(timer);
  // Finished before the timer fired: killed between cycles, still a random point of the run.
  if (victim && !kill) kill = victim.kill();
  await kill;
  for (const res of results) {
    if (res?.type !== 'cycle-done') continue;
    run.ledger.recordEvents(cycle, res.events);
    for (const e of res.events) run.events.push(JSON.stringify(e));
    run.deadLetters.push(...(res.deadLetters as DeadLetter[]));
    run.poisoned.push(...res.poisoned);
  }
  if (!victim) lastCycleMs = Math.max(200, Date.now() - t0);
  return victim;
}

/** Malformed events every this many cycles: a producer's bad event must end as a named dead letter. */
const POISON_EVERY = 10;

function poisonEvents(cycle: number, clusters: string[], now: number): PoisonEvent[] {
  const cluster = clusters[cycle % clusters.length] ?? 'soak-1';
  return [
    {
      detailType: 'ClusterWorkRequested',
      detail: {
        soakPoison: `work-${cycle}`,
        cluster,
        capability: 'cycle',
        cycleId: `poison/${cycle}`,
        requestedAt: 'yesterday',
      },
    },
    {
      detailType: 'NodeResizeRequested',
      detail: {
        soakPoison: `resize-${cycle}`,
        cluster,
        node: '',
        cpu: '',
        memory: '24Gi',
        requestedAt: new Date(now).toISOString(),
      },
    },
  ];
}

function startCliPair(run: Run, clusters: string[]): Promise<CliResult>[] {
  // The first pair makes members (two clusters joining one ClusterSet at once); later ones are random.
  // Counted by pairs, not by the CLI commands so far: the identity faults run commands before it.
  const first = run.pairs++ === 0;
  return [0, 1].map((i) =>
    runCli(
      first
        ? ['clusterset', 'join', '--cluster', clusters[i % clusters.length] as string, '--set', 'blue']
        : randomOp(clusters, run.random),
      run.stateDir,
    ),
  );
}

async function* texts(run: Run): AsyncIterable<Text> {
  for (const e of run.events) yield { source: 'event', text: e };
  for (const c of run.cli)
    yield { source: `cli ${c.args.slice(0, 2).join(' ')}`, text: `${c.args.join(' ')}\n${c.output}` };
  const files = readdirSync(run.dir).filter((f) => f.endsWith('.log'));
  if (existsSync(join(run.stateDir, 'state-server.log'))) files.push(join('state', 'state-server.log'));
  // What the scheduled fleet report wrote (the local runtime's stand-in for its S3 bucket).
  const reports = join(run.stateDir, 'reports');
  if (existsSync(reports))
    for (const f of readdirSync(reports, { recursive: true, withFileTypes: true }))
      if (f.isFile()) files.push(relative(run.dir, join(f.parentPath, f.name)));
  for (const f of files) {
    const lines = createInterface({
      input: createReadStream(join(run.dir, f)),
      crlfDelay: Number.POSITIVE_INFINITY,
    });
    let n = 0;
    for await (const line of lines) yield { source: `${f}:${++n}`, text: line };
  }
}

async function checkInvariants(state: SoakState): Promise<InvariantRow[]> {
  const rows: InvariantRow[] = [];
  for (const cap of SOAK_CAPABILITIES)
    for (const inv of cap.invariants) {
      try {
        rows.push({ capability: cap.id, name: inv.name, ...(await inv.check(state)) });
      } catch (err) {
        rows.push({
          capability: cap.id,
          name: inv.name,
          checked: 0,
          unit: 'checks',
          violations: [`the check failed: ${err instanceof Error ? err.message : String(err)}`],
        });
      }
    }
  return rows;
}

function report(
  run: Run,
  faults: FaultCounts,
  resizes: number,
  invariants: InvariantRow[],
  started: number,
  clusters: string[],
): Omit<SoakReport, 'balloons' | 'flips' | 'injected'> {
  const capabilityCycles: SoakReport['capabilityCycles'] = {};
  for (const cap of CAPABILITIES) {
    // Capabilities run by a schedule of their own, and node scope (whose histories the ledger judges)
    // wherever it runs.
    if (cap.schedules.length === 0 && cap.id !== 'nodescope') continue;
    const sum = (f: (c: string) => number) => clusters.reduce((a, c) => a + f(c), 0);
    capabilityCycles[cap.id] = {
      attempted: sum((c) => run.ledger.attempted(cap.id, c)) / clusters.length,
      clean: cap.id === 'nodescope' ? sum((c) => run.ledger.clean(cap.id, c)) / clusters.length : Number.NaN,
    };
  }
  const cli: Record<string, number> = {};
  for (const c of run.cli) cli[`exit ${c.code}`] = (cli[`exit ${c.code}`] ?? 0) + 1;
  return {
    config: run.cfg,
    cycles: run.cfg.cycles + run.cfg.settleCycles,
    capabilityCycles,
    kills: run.kills,
    raceCycles: run.raceCycles,
    faults,
    cli,
    resizes,
    seconds: Math.round((Date.now() - started) / 1000),
    invariants,
  };
}
