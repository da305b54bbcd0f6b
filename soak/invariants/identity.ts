/**
 * One ID per cluster for the whole run (KEP-2149: unique and immutable for the duration of the
 * membership; issue 34, defects 5 and 11), from every value each cluster's id.k8s.io took in the
 * simulated apiservers (../identity.ts):
 *
 * - it changes only by an operator's `claims set id.k8s.io` that succeeded on that cluster (to the value
 *   set, or back to its first ID with --default), never more often than those commands, and is never
 *   deleted while the cluster is registered;
 * - a cluster whose kube-system was rebuilt (a new UID) keeps its ID: the new UID is never its ID, and
 *   registering it again under another name is refused, naming the decision to make;
 * - a cluster deregistered (killed mid-way, then to its end) and registered again starts a new
 *   membership: its ID is judged afresh from then on, and it inherits nothing of the old registration
 *   (no feature's desired value that no flip made since);
 * - a cluster adopted by a second control plane and taken back (each `cluster adopt --force` killed
 *   mid-way, then run to its end): both runs to the end succeed, the soak's control plane learns at its
 *   pass in between that the other owns the cluster, and at the end the cluster's owner Lease is the
 *   soak's, its registration names no other owner, and the ID it stores is the one the cluster carried
 *   before (the ID itself never changed: the check above).
 */

import { DynamoClaimStore } from '../../shared/claims/store-dynamo.js';
import { type FeatureRecord, parseRef, refKey } from '../../shared/features/model.js';
import { DynamoFeatureStore } from '../../shared/features/store-dynamo.js';
import { OWNER_LEASE } from '../../shared/fleet/ownership.js';
import { DynamoRegistry } from '../../shared/fleet/registry-dynamo.js';
import type { Adopted, FlipDone, IdCommand, IdSeen, Rebuilt, Reregistered } from '../records.js';
import type { Invariant, Outcome } from '../types.js';

/** The id.k8s.io commands among the soak's CLI commands. */
export function idCommands(cli: { args: string[]; code: number; cycle?: number }[]): IdCommand[] {
  const flag = (args: string[], f: string) => {
    const i = args.indexOf(f);
    return i >= 0 ? args[i + 1] : undefined;
  };
  return cli
    .filter((c) => c.args[0] === 'claims' && c.args[1] === 'set' && flag(c.args, '--name') === 'id.k8s.io')
    .map((c) => ({
      cluster: flag(c.args, '--cluster') ?? '',
      cycle: c.cycle ?? 0,
      ...(c.args.includes('--default') ? {} : { value: flag(c.args, '--value') }),
      ok: c.code === 0,
    }));
}

export function judgeOneId(
  seen: IdSeen[],
  commands: IdCommand[],
  rebuilt?: Rebuilt,
  again?: Reregistered,
): Outcome {
  const violations: string[] = [];
  const clusters = [...new Set(seen.map((s) => s.cluster))];
  let changes = 0;
  for (const cluster of clusters) {
    const mine = seen.filter((s) => s.cluster === cluster);
    // A registration again starts a new membership; what the deregistration removed is not judged.
    const windows =
      again?.cluster === cluster
        ? [mine.filter((s) => s.cycle < again.killedAt), mine.filter((s) => s.cycle >= again.cycle)]
        : [mine];
    for (const [i, w] of windows.entries()) {
      const from = i === 0 ? 0 : (again?.cycle ?? 0);
      const to = i === 0 && again?.cluster === cluster ? again.killedAt : Number.POSITIVE_INFINITY;
      const ops = commands.filter((c) => c.cluster === cluster && c.ok && c.cycle >= from && c.cycle < to);
      const first = w.find((s) => s.value !== undefined)?.value;
      const allowed = new Set([first, ...ops.map((o) => o.value ?? first)]);
      let n = 0;
      for (const s of w.slice(w.findIndex((x) => x.value !== undefined) + 1)) {
        n++;
        if (s.value === undefined)
          violations.push(`${cluster}: id.k8s.io deleted at cycle ${s.cycle} while registered`);
        else if (!allowed.has(s.value))
          violations.push(
            `${cluster}: id.k8s.io became ${s.value} at cycle ${s.cycle}, was ${first}; no operator set it`,
          );
      }
      changes += n;
      if (n > ops.length)
        violations.push(
          `${cluster}: id.k8s.io changed ${n} time(s) but an operator set it ${ops.length} time(s): it flipped`,
        );
    }
  }
  if (rebuilt) {
    const k = rebuilt.cluster;
    if (seen.some((s) => s.cluster === k && s.value === rebuilt.newUid))
      violations.push(`${k}: re-identified with its rebuilt kube-system's UID ${rebuilt.newUid}`);
    if (rebuilt.again.code === 0)
      violations.push(`${k}: registered again as ${rebuilt.againName} after kube-system was rebuilt`);
    else if (!/one cluster keeps one identity/.test(rebuilt.again.output))
      violations.push(
        `${k}: registering it again was refused, but not as needing a decision: ${rebuilt.again.output.slice(0, 200)}`,
      );
  }
  if (again && (again.finish.code !== 0 || again.register.code !== 0))
    violations.push(
      `${again.cluster}: deregistered and registered again after a killed deregistration: exit ${again.finish.code}, ${again.register.code}: ${(again.finish.output + again.register.output).slice(0, 300)}`,
    );
  return {
    checked: clusters.length,
    unit: `clusters (${changes} changes of id.k8s.io, ${commands.filter((c) => c.ok).length} by an operator${rebuilt ? `, 1 rebuilt kube-system` : ''}${again ? ', 1 registered again' : ''})`,
    violations,
  };
}

/** A cluster registered again inherits no feature's desired value: only flips made since may set one. */
export function judgeInherited(records: FeatureRecord[], flips: FlipDone[], again?: Reregistered): Outcome {
  if (!again) return { checked: 0, unit: 'clusters registered again', violations: [] };
  const violations: string[] = [];
  const mine = records.filter((r) => r.cluster === again.cluster);
  for (const r of mine) {
    if (r.desired === undefined) continue;
    const since = flips.some(
      (f) =>
        f.cluster === again.cluster && f.cycle >= again.cycle && refKey(parseRef(f.feature)) === refKey(r),
    );
    if (!since)
      violations.push(
        `${again.cluster} ${refKey(r)}: desired ${r.desired} after it was registered again at cycle ${again.cycle}, set by no flip since`,
      );
  }
  return { checked: mine.length, unit: `features of ${again.cluster}, registered again`, violations };
}

export const oneIdPerCluster: Invariant = {
  name: 'one ID per cluster for the whole run',
  check: async (state) => judgeOneId(state.ids, state.idCommands, state.rebuilt, state.reregistered),
};

export const nothingInherited: Invariant = {
  name: 'a cluster registered again inherits nothing',
  check: async (state) => {
    const again = state.reregistered;
    if (!again) return judgeInherited([], state.flips);
    const views = await new DynamoFeatureStore(state.db, state.table).clusterViews(again.cluster);
    const records = [...views.values()].map((v) => v.record).filter((r): r is FeatureRecord => !!r);
    return judgeInherited(records, state.flips, again);
  },
};

/** What the soak's control plane and the cluster say of an adopted cluster at the end of the run. */
export interface AdoptedEnd {
  leaseHolder?: string;
  ownedElsewhere?: string;
  storedId?: string;
  carriedId?: string;
}

/** The adoption away and back (killed, then finished, each): see the header. */
export function judgeAdopted(a: Adopted | undefined, controlPlane: string, end: AdoptedEnd): Outcome {
  if (!a) return { checked: 0, unit: 'clusters adopted', violations: [] };
  const k = a.cluster;
  const violations: string[] = [];
  const said = (r: { code: number; output: string }) => `exit ${r.code}: ${r.output.trim().slice(0, 200)}`;
  if (a.away.finish.code !== 0)
    violations.push(
      `${k}: adopting it from a second control plane after the kill failed, ${said(a.away.finish)}`,
    );
  if (a.yieldedTo !== a.away.by)
    violations.push(
      `${k}: after a pass with the cluster adopted by ${a.away.by}, the soak's registration names ${a.yieldedTo ?? 'no other owner'}`,
    );
  if (!a.back) violations.push(`${k}: never taken back`);
  else if (a.back.finish.code !== 0)
    violations.push(`${k}: taking it back after the kill failed, ${said(a.back.finish)}`);
  if (end.leaseHolder !== controlPlane)
    violations.push(
      `${k}: its owner Lease is held by ${end.leaseHolder ?? 'nobody'} at the end, not ${controlPlane}`,
    );
  if (end.ownedElsewhere)
    violations.push(
      `${k}: the soak's registration still names ${end.ownedElsewhere} as its owner at the end`,
    );
  if (!end.storedId || end.storedId !== end.carriedId || (a.idBefore && end.carriedId !== a.idBefore))
    violations.push(
      `${k}: the soak's control plane stores ID ${end.storedId ?? 'none'}, the cluster carries ${end.carriedId ?? 'none'}, it carried ${a.idBefore ?? 'none'} before the adoption`,
    );
  const kills = [a.away.killed ? 'away' : '', a.back?.killed ? 'back' : ''].filter(Boolean);
  return {
    checked: 1,
    unit: `clusters adopted away and back (killed mid-way: ${kills.join(', ') || 'neither, the kills missed'})`,
    violations,
  };
}

export const adoptionRoundTrip: Invariant = {
  name: 'a cluster adopted away and back keeps its identity',
  check: async (state) => {
    const a = state.adopted;
    const store = a && state.sim?.cluster(a.cluster).store;
    if (!a || !store) return judgeAdopted(undefined, state.controlPlane, {});
    const lease = store.get('leases.coordination.k8s.io', OWNER_LEASE.name, OWNER_LEASE.namespace);
    const carried = store.get('clusterproperties.about.k8s.io', 'id.k8s.io');
    const reg = await new DynamoRegistry(state.db, state.table).get(a.cluster);
    const stored = await new DynamoClaimStore(state.db, state.table).getIdentity(a.cluster);
    return judgeAdopted(a, state.controlPlane, {
      leaseHolder: lease?.spec?.holderIdentity,
      ownedElsewhere: reg?.ownedElsewhere?.holder,
      storedId: stored?.clusterId,
      carriedId: carried?.spec?.value,
    });
  },
};
