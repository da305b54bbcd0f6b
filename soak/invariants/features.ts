/**
 * Feature lifecycle (KEP-3920), checked after the clean cycles at the end of the run:
 *
 * - every transition ends: no feature left TurningOn/TurningOff once faults stopped (the clean cycles
 *   are the bound), each stable in the state its target names, or shown stuck with its reason where an
 *   operator looks (a declaration whose task always fails must end so), and the operator's last flip
 *   is the desired value stored;
 * - no task step done twice: no task appears twice among a transition's done tasks, no task wrote more
 *   than the objects it names (a delete, a deflate), and no delete of an object a task names reached an
 *   apiserver after the object was gone (a delete sent again);
 * - no transition completed while a use of the current epoch reports the old value (a component's own
 *   clock never decides: uses echo the epoch of the clearing they read), at the end and after every
 *   cycle for the agent whose clock is skewed (../agent.ts);
 * - no task's writes seen twice: the reconciler paused past its claim (../paused.ts) wrote nothing
 *   after it resumed;
 * - nothing dangling after Off: for every Off feature, what its off tasks remove is gone (objects,
 *   stored state, uses reporting on), read live from the cluster;
 * - the Feature objects in each cluster agree with the records in DynamoDB (state, desired, version).
 */
import { loadCatalog } from '../../shared/features/catalog.js';
import { DynamoClusterState } from '../../shared/features/cluster-state-dynamo.js';
import { danglingOf } from '../../shared/features/dangling.js';
import {
  type FeatureRecord,
  finalOf,
  inTransition,
  parseRef,
  refKey,
  type TaskSummary,
  targetOf,
  type Use,
} from '../../shared/features/model.js';
import { ObjectsApi } from '../../shared/features/objects.js';
import { type FeatureSpec, tasksOf } from '../../shared/features/spec.js';
import type { FeatureView } from '../../shared/features/store.js';
import { DynamoFeatureStore } from '../../shared/features/store-dynamo.js';
import { type TaskSpec, titleOf } from '../../shared/features/task-kinds.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import type { FlipDone, ObjectDelete, PausedOutcome, StuckShown } from '../records.js';
import type { Invariant, Outcome, SoakState } from '../types.js';

const MINUTE = 60_000;

async function views(state: SoakState): Promise<{ cluster: string; key: string; view: FeatureView }[]> {
  const store = new DynamoFeatureStore(state.db, state.table);
  const out: { cluster: string; key: string; view: FeatureView }[] = [];
  for (const c of state.sim?.clusters ?? [])
    for (const [key, view] of await store.clusterViews(c.name)) out.push({ cluster: c.name, key, view });
  return out;
}

const records = async (state: SoakState) =>
  (await views(state)).map((v) => v.view.record).filter((r): r is FeatureRecord => r !== undefined);

/**
 * Every transition ends: stable in the state its target names, or shown stuck with its reason (a task
 * past its deadline, still tried), which must then be seen where an operator looks (the bus event and
 * `features list`) rather than loop silently. A feature whose task cannot succeed (`cannotEnd`) must end
 * stuck: anything else means its fault was not hit.
 */
export function judgeTransitions(
  records: FeatureRecord[],
  flips: FlipDone[],
  settledMinutes: number,
  shown: StuckShown = { events: new Set(), listed: new Set() },
  cannotEnd: string[] = [],
): Outcome {
  const violations: string[] = [];
  let transitions = 0;
  let reversed = 0;
  let stuck = 0;
  let longest = 0;
  for (const r of records) {
    const key = `${r.cluster} ${refKey(r)}`;
    for (const t of r.history) {
      transitions++;
      if (t.outcome === 'reversed') reversed++;
      if (t.endedAt !== undefined) longest = Math.max(longest, t.endedAt - t.startedAt);
    }
    const first = r.tasks[0];
    if (inTransition(r.state) && first?.stuck) {
      transitions++;
      stuck++;
      const unseen = [
        ...(shown.events.has(key) ? [] : ['no FeatureTransitionChanged stuck event']),
        ...(shown.listed.has(key) ? [] : ['features list does not show it stuck']),
      ];
      if (unseen.length)
        violations.push(`${key}: stuck (${first.stuck.reason}), but ${unseen.join(' and ')}`);
    } else if (inTransition(r.state)) {
      transitions++;
      violations.push(
        `${key}: still ${r.state} after ${settledMinutes} clean minutes, not shown stuck (${first?.title ?? 'no task'}${first?.waitingFor ? `: ${first.waitingFor}` : ''}${first?.lastError ? `; ${first.lastError}` : ''})`,
      );
    } else if (r.state !== finalOf(targetOf(r)))
      violations.push(`${key}: ${r.state}, but its target is ${targetOf(r)}`);
    if (cannotEnd.includes(refKey(r)) && targetOf(r) === 'on' && !first?.stuck)
      violations.push(`${key}: its task cannot succeed, yet it is ${r.state} and not stuck`);
  }
  const last = new Map<string, FlipDone>();
  for (const f of flips) last.set(`${f.cluster} ${refKey(parseRef(f.feature))}`, f);
  for (const [key, f] of last) {
    const r = records.find((x) => `${x.cluster} ${refKey(x)}` === key);
    const want = f.desired === 'default' ? undefined : f.desired;
    if (!r) violations.push(`${key}: flipped ${f.desired} at cycle ${f.cycle}, but no record`);
    else if (r.desired !== want)
      violations.push(
        `${key}: flipped ${f.desired} at cycle ${f.cycle}, but desired is ${r.desired ?? 'default'}`,
      );
  }
  return {
    checked: records.length,
    unit: `features (${transitions} transitions, ${reversed} reversed, ${stuck} ended stuck, ${flips.length} flips; longest ${Math.round(longest / MINUTE)} min)`,
    violations,
  };
}

/** The most writes a task may make, performed once; undefined: no bound the soak can tell. */
export function writeBound(task: TaskSpec, objects: number): number | undefined {
  switch (task.task) {
    case 'delete-objects':
      return task.name ? 1 : undefined;
    case 'wait-for-no-objects':
      return 0;
    case 'hook':
      // Per balloon: its resize, and the Event recorded on the pod (every cluster write is counted).
      return task.hook === 'deflate' ? 2 * objects : undefined;
    default:
      return undefined;
  }
}

export function judgeStepsOnce(
  records: FeatureRecord[],
  specs: Map<string, FeatureSpec>,
  nodesOf: (cluster: string) => number,
  deletes: ObjectDelete[],
): Outcome {
  const violations: string[] = [];
  let tasks = 0;
  for (const r of records) {
    const spec = specs.get(refKey(r));
    const all = [...r.history, ...(r.transition ? [r.transition] : [])];
    for (const t of all) {
      const seen = new Set<string>();
      for (const d of t.done as TaskSummary[]) {
        tasks++;
        if (seen.has(d.title))
          violations.push(
            `${r.cluster} ${refKey(r)}: "${d.title}" done twice in the transition of ${new Date(t.startedAt).toISOString()}`,
          );
        seen.add(d.title);
        const task = spec ? taskByTitle(spec, t.to, d.title) : undefined;
        const bound = task ? writeBound(task, nodesOf(r.cluster)) : undefined;
        if (bound !== undefined && d.writes > bound)
          violations.push(
            `${r.cluster} ${refKey(r)}: "${d.title}" made ${d.writes} writes, at most ${bound} once`,
          );
      }
    }
  }
  const accepted = deletes.filter((d) => d.status >= 200 && d.status < 300).length;
  for (const d of deletes)
    if (d.status === 404)
      violations.push(`${d.cluster} ${d.resource} ${d.name}: deleted again after it was gone (HTTP 404)`);
  return {
    checked: tasks,
    unit: `tasks done (${deletes.length} deletes of named objects, ${accepted} accepted)`,
    violations,
  };
}

/**
 * No transition completed while a use of the current epoch reports the value it moved away from: a
 * stable feature's uses that echo its record's usesEpoch (the last clearing, made by the completed
 * transition's wait for uses) must not report the old value, whatever their times say. From fleetscope's
 * workers (DynamoDB) and in-cluster components (the Feature status) alike.
 */
export function judgeEpochUses(features: { cluster: string; record: FeatureRecord; uses: Use[] }[]): Outcome {
  const violations: string[] = [];
  let checked = 0;
  for (const { cluster, record: r, uses } of features) {
    if (inTransition(r.state) || r.usesEpoch === undefined || r.history.at(-1)?.outcome !== 'completed')
      continue;
    checked++;
    const old = r.state === 'Off' ? 'on' : 'off';
    for (const u of uses)
      if (u.epoch === r.usesEpoch && u.value === old)
        violations.push(
          `${cluster} ${refKey(r)}: ${r.state}, but ${u.component} reports ${old} echoing the current epoch ${r.usesEpoch} (at ${new Date(u.at).toISOString()})`,
        );
  }
  return { checked, unit: 'stable features with a uses epoch', violations };
}

function taskByTitle(spec: FeatureSpec, to: 'On' | 'Off', title: string): TaskSpec | undefined {
  return tasksOf(spec, to).find((t) => titleOf(t) === title);
}

export const featureTransitionsEnd: Invariant = {
  name: 'every feature transition ends',
  check: async (state) =>
    judgeTransitions(
      await records(state),
      state.flips,
      state.settleMinutes,
      state.stuckShown,
      state.cannotEnd,
    ),
};

export const featureStepsOnce: Invariant = {
  name: 'no feature task step done twice',
  check: async (state) => {
    const catalog = await loadCatalog(new DynamoFeatureStore(state.db, state.table));
    const specs = new Map(catalog.specs.map((s) => [refKey(s), s]));
    const nodes = (cluster: string) => state.sim?.cluster(cluster).store.list('nodes').length ?? 0;
    return judgeStepsOnce(await records(state), specs, nodes, state.objectDeletes);
  },
};

/**
 * No task's writes seen twice, for the reconciler the soak paused past its claim: it froze (the fault
 * was hit: a run where it never froze proves nothing and fails), and once resumed no write of it passed
 * its fence (each would have reached the cluster or the table a second time).
 */
export function judgePaused(p: PausedOutcome | undefined): Outcome {
  if (!p) return { checked: 0, unit: 'paused reconcilers (no flip started one)', violations: [] };
  const key = `${p.cluster} ${p.feature}`;
  const violations: string[] = [];
  if (!p.froze || !p.frozeAt || p.frozeAt.startsWith('wait-'))
    violations.push(
      `${key}: the paused reconciler never froze at a write step in ${p.passes} pass(es) (only waits: the fault was not hit)`,
    );
  if (p.fencedAfter > 0)
    violations.push(
      `${key}: ${p.fencedAfter} write(s) of the reconciler paused past its claim passed their fence after it resumed`,
    );
  const fences = Object.entries(p.fences ?? {})
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  return {
    checked: 1,
    unit: `paused reconcilers (froze at ${p.frozeAt ?? 'no write'}: "${p.task ?? '?'}" after ${p.passes} pass(es); fences met by task kind: ${fences || 'none'}; ${p.claimsLost} claim(s) lost${p.error ? `, ended: ${p.error}` : ''})`,
    violations,
  };
}

export const featureWritesOnce: Invariant = {
  name: "no task's writes seen twice",
  check: async (state) => judgePaused(state.paused),
};

/** The uses in-cluster components reported in a Feature object's status (fleetscope's own are in DynamoDB). */
export function inClusterUses(object: Json): Use[] {
  return Object.entries((object?.status?.uses ?? {}) as Record<string, Json>)
    .filter(([, u]) => u.source !== 'fleetscope')
    .map(([component, u]) => ({
      component,
      value: u.value,
      at: Date.parse(u.time) || 0,
      epoch: u.epoch,
      source: 'cluster' as const,
    }));
}

export const featureEpochUses: Invariant = {
  name: 'no transition completed while a use of the current epoch reports on',
  check: async (state) => {
    const features: { cluster: string; record: FeatureRecord; uses: Use[] }[] = [];
    for (const { cluster, view } of await views(state)) {
      if (!view.record) continue;
      const object = state.sim
        ?.cluster(cluster)
        .store.get('features.fleetscope.io', view.record.name, view.record.namespace) as Json;
      features.push({ cluster, record: view.record, uses: [...view.uses, ...inClusterUses(object)] });
    }
    const end = judgeEpochUses(features);
    // And after every cycle, where the agent with a skewed clock reports (../agent.ts).
    const a = state.agent;
    return {
      checked: end.checked + (a?.checked ?? 0),
      unit: `stable features with a uses epoch (${end.checked} at the end, ${a?.checked ?? 0} after cycles where an agent with a skewed clock reported: ${a?.reports ?? 0} reports, ${a?.heldOn ?? 0} of on while it wound down, after reading on ${a?.read.on ?? 0}x and off ${a?.read.off ?? 0}x)`,
      violations: [...end.violations, ...(a?.violations ?? [])],
    };
  },
};

export const featureOffClean: Invariant = {
  name: 'nothing dangling after Off',
  check: async (state) => {
    const sim = state.sim;
    const catalog = await loadCatalog(new DynamoFeatureStore(state.db, state.table));
    const violations: string[] = [];
    let off = 0;
    for (const { cluster, view } of await views(state)) {
      const r = view.record;
      if (r?.state !== 'Off' || !sim) continue;
      off++;
      const spec = catalog.need(r);
      const client = ClusterClient.fromKubeconfig(sim.kubeconfig(), { cluster, context: cluster });
      const api = new ObjectsApi(client);
      const left = await danglingOf(
        spec,
        r,
        view.uses,
        {
          cluster,
          state: new DynamoClusterState(state.db, state.table),
          client: async () => client,
          objects: async () => api,
        },
        { live: true },
      );
      for (const l of left) violations.push(`${cluster} ${refKey(r)} Off: ${l}`);
    }
    return { checked: off, unit: 'Off features (read live)', violations };
  },
};

// biome-ignore lint/suspicious/noExplicitAny: Feature objects as the simulator stores them
type Json = any;

export function judgeMirror(pairs: { cluster: string; record: FeatureRecord; object?: Json }[]): Outcome {
  const violations: string[] = [];
  for (const { cluster, record: r, object: o } of pairs) {
    const key = `${cluster} ${refKey(r)}`;
    if (!o) {
      violations.push(`${key}: no Feature object in the cluster`);
      continue;
    }
    const diffs: string[] = [];
    if (o.status?.state !== r.state) diffs.push(`state ${o.status?.state} != ${r.state}`);
    if (o.status?.observedVersion !== r.version)
      diffs.push(`observedVersion ${o.status?.observedVersion} != ${r.version}`);
    if ((o.spec?.desired ?? undefined) !== r.desired)
      diffs.push(`desired ${o.spec?.desired ?? 'default'} != ${r.desired ?? 'default'}`);
    if (o.spec?.default !== r.default) diffs.push(`default ${o.spec?.default} != ${r.default}`);
    if ((o.status?.tasks?.length ?? 0) !== r.tasks.length)
      diffs.push(`${o.status?.tasks?.length ?? 0} tasks != ${r.tasks.length}`);
    if (diffs.length) violations.push(`${key}: the Feature object disagrees: ${diffs.join('; ')}`);
  }
  return { checked: pairs.length, unit: 'Feature objects', violations };
}

export const featureMirrorAgrees: Invariant = {
  name: 'Feature objects = DynamoDB records',
  check: async (state) => {
    const pairs: { cluster: string; record: FeatureRecord; object?: Json }[] = [];
    for (const { cluster, view } of await views(state)) {
      if (!view.record) continue;
      const object = state.sim
        ?.cluster(cluster)
        .store.get('features.fleetscope.io', view.record.name, view.record.namespace);
      pairs.push({ cluster, record: view.record, object });
    }
    return judgeMirror(pairs);
  },
};
