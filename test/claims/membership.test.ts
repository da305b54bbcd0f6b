/**
 * The source of truth over real HTTP (dynalite through the local runtime): ID rules, join/leave/move,
 * uniqueness under 20 concurrent joins, and crashes injected between the single-item writes, each
 * repaired by the reconciler.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.js';
import {
  type ClaimsPorts,
  deleteCustomClaim,
  ensureIdentity,
  joinClusterSet,
  leaveClusterSet,
  type MembershipStep,
  moveClusterSet,
  setClaim,
  setClusterId,
  setCustomClaim,
  UniquenessError,
} from '../../shared/claims/membership.js';
import { clusterIdentityContext, forgetIdentityKeys } from '../../shared/claims/observability.js';
import { actionsOf, reconcileClaims } from '../../shared/claims/reconcile.js';
import { ClaimRuleError, MAX_CLAIM_VALUE_BYTES } from '../../shared/claims/rules.js';
import type { ClaimStore } from '../../shared/claims/store.js';
import { DynamoClaimStore } from '../../shared/claims/store-dynamo.js';
import type { Registry } from '../../shared/fleet/registry.js';
import { DynamoRegistry } from '../../shared/fleet/registry-dynamo.js';
import type { OutgoingEvent } from '../../shared/platform/publisher.js';

class Crash extends Error {}

let runtime: LocalRuntime;
let store: ClaimStore;
let registry: Registry;
let events: OutgoingEvent[];
let seq = 0;

function ports(crashAt?: MembershipStep): ClaimsPorts {
  return {
    store,
    registry,
    publisher: { publish: async (e) => void events.push(...e) },
    step: (s) => {
      if (s === crashAt) throw new Crash(`crash injected at ${s}`);
    },
  };
}

/** A registered cluster with an identity (kube-system UID style), unique per test. */
async function cluster(prefix = 'c'): Promise<{ name: string; uid: string }> {
  const n = ++seq;
  const name = `${prefix}-${n}`;
  const uid = `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
  await registry.add({
    name,
    kubeconfig: { kind: 'file', path: '/nonexistent', context: 'x' },
    labels: {},
    registeredAt: new Date().toISOString(),
  });
  await ensureIdentity(ports(), { cluster: name, kubeSystemUid: uid });
  events = [];
  return { name, uid };
}

/** Everything a cluster's claims are made of, for "nothing was written" comparisons. */
async function snapshot(name: string) {
  const identity = await store.getIdentity(name);
  return {
    identity,
    custom: await store.getCustom(name),
    guards: (await store.listGuards()).filter((g) => g.cluster === name),
  };
}

beforeAll(async () => {
  runtime = await startLocalRuntime();
  store = new DynamoClaimStore(runtime.db, runtime.table);
  registry = new DynamoRegistry(runtime.db, runtime.table);
});
afterAll(async () => runtime?.stop());
beforeEach(() => {
  events = [];
});

describe('id.k8s.io', () => {
  it('defaults to the kube-system UID and may be set to an RFC 1123 label outside a ClusterSet', async () => {
    const c = await cluster();
    expect((await store.getIdentity(c.name))?.clusterId).toBe(c.uid);
    await setClusterId(ports(), c.name, 'prod-eu-1');
    const i = await store.getIdentity(c.name);
    expect(i).toMatchObject({ clusterId: 'prod-eu-1', idSource: 'operator', kubeSystemUid: c.uid });
    const changed = events.find((e) => e.detailType === 'ClusterClaimsChanged')!;
    expect(changed.detail).toMatchObject({
      origin: 'registry',
      reason: 'set',
      changes: [
        { claim: 'id.k8s.io', old: { value: c.uid }, new: { value: 'prod-eu-1' } },
        { claim: 'cluster.clusterset.k8s.io', old: { value: c.uid }, new: { value: 'prod-eu-1' } },
      ],
    });
    await setClusterId(ports(), c.name, undefined); // back to the default
    expect((await store.getIdentity(c.name))?.clusterId).toBe(c.uid);
  });

  it('a change during membership is refused with the reason, and nothing is written', async () => {
    const c = await cluster();
    await joinClusterSet(ports(), c.name, 'refuse-set');
    const before = await snapshot(c.name);
    events = [];
    await expect(setClusterId(ports(), c.name, 'renamed')).rejects.toThrow(
      /member of ClusterSet "refuse-set": id.k8s.io must not change during a membership/,
    );
    await expect(setClaim(ports(), c.name, 'id.k8s.io', 'renamed')).rejects.toThrow(ClaimRuleError);
    expect(await snapshot(c.name)).toEqual(before);
    expect(events).toEqual([]);
    // Renaming is leave, change, rejoin.
    await leaveClusterSet(ports(), c.name);
    await setClusterId(ports(), c.name, 'renamed');
    await joinClusterSet(ports(), c.name, 'refuse-set');
    expect(await store.getIdentity(c.name)).toMatchObject({ clusterId: 'renamed', clusterSet: 'refuse-set' });
    expect((await store.getGuard('refuse-set', 'renamed'))?.cluster).toBe(c.name);
    expect(await store.getGuard('refuse-set', c.uid)).toBeUndefined();
  });

  it('refuses an invalid operator value and cannot be deleted', async () => {
    const c = await cluster();
    const before = await snapshot(c.name);
    await expect(setClusterId(ports(), c.name, 'Not_A_Label')).rejects.toThrow(/not an RFC 1123 label/);
    await expect(deleteCustomClaim(ports(), c.name, 'id.k8s.io')).rejects.toThrow(/exists for as long as/);
    expect(await snapshot(c.name)).toEqual(before);
  });
});

describe('ClusterSet membership', () => {
  it('join sets clusterset.k8s.io and takes the guard; leave removes both', async () => {
    const c = await cluster();
    const r = await joinClusterSet(ports(), c.name, 'blue');
    expect(r).toMatchObject({ changed: true, clusterSet: 'blue', clusterId: c.uid });
    expect(await store.getIdentity(c.name)).toMatchObject({ clusterSet: 'blue' });
    expect((await store.getIdentity(c.name))?.pending).toBeUndefined();
    expect((await store.getGuard('blue', c.uid))?.cluster).toBe(c.name);
    expect(events.map((e) => e.detailType)).toEqual(['ClusterSetMembershipChanged', 'ClusterClaimsChanged']);
    expect(events[0]!.detail).toMatchObject({ change: 'join', to: 'blue', reason: 'operator' });
    expect(events[1]!.detail).toMatchObject({
      reason: 'join',
      changes: [{ claim: 'clusterset.k8s.io', old: null, new: { value: 'blue' } }],
    });
    expect((await joinClusterSet(ports(), c.name, 'blue')).changed).toBe(false); // idempotent
    await expect(joinClusterSet(ports(), c.name, 'green')).rejects.toThrow(/clusterset move/);

    events = [];
    await leaveClusterSet(ports(), c.name);
    const left = await store.getIdentity(c.name);
    expect(left?.clusterSet).toBeUndefined();
    expect(left?.clusterId).toBe(c.uid); // the ID outlives the membership
    expect(await store.getGuard('blue', c.uid)).toBeUndefined();
    expect(events[1]!.detail).toMatchObject({
      changes: [{ claim: 'clusterset.k8s.io', old: { value: 'blue' }, new: null }],
    });
  });

  it('move switches sets in one write and releases the old guard', async () => {
    const c = await cluster();
    await joinClusterSet(ports(), c.name, 'm-from');
    events = [];
    await moveClusterSet(ports(), c.name, 'm-to');
    expect(await store.getIdentity(c.name)).toMatchObject({ clusterSet: 'm-to' });
    expect(await store.getGuard('m-from', c.uid)).toBeUndefined();
    expect((await store.getGuard('m-to', c.uid))?.cluster).toBe(c.name);
    expect(events[0]!.detail).toMatchObject({ change: 'move', from: 'm-from', to: 'm-to' });
    expect(events[1]!.detail).toMatchObject({
      changes: [{ claim: 'clusterset.k8s.io', old: { value: 'm-from' }, new: { value: 'm-to' } }],
    });
  });

  it('a move refused by uniqueness keeps the old membership', async () => {
    const a = await cluster();
    const b = await cluster();
    await setClusterId(ports(), a.name, 'same-id');
    await setClusterId(ports(), b.name, 'same-id');
    await joinClusterSet(ports(), a.name, 'mv-target');
    await joinClusterSet(ports(), b.name, 'mv-source');
    await expect(moveClusterSet(ports(), b.name, 'mv-target')).rejects.toThrow(
      new RegExp(`ID "same-id" is already held in ClusterSet "mv-target" by cluster "${a.name}"`),
    );
    const i = await store.getIdentity(b.name);
    expect(i?.clusterSet).toBe('mv-source');
    expect(i?.pending).toBeUndefined();
    expect((await store.getGuard('mv-source', 'same-id'))?.cluster).toBe(b.name);
  });

  it('20 concurrent joins with the same ID into one ClusterSet: exactly one wins, the others get a clear refusal', async () => {
    const clusters = [];
    for (let i = 0; i < 20; i++) clusters.push(await cluster('race'));
    for (const c of clusters) await setClusterId(ports(), c.name, 'contested');
    const results = await Promise.allSettled(
      clusters.map((c) => joinClusterSet(ports(), c.name, 'race-set')),
    );
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(19);
    for (const l of lost) {
      expect(l.reason).toBeInstanceOf(UniquenessError);
      expect(l.reason.message).toMatch(
        /ID "contested" is already held in ClusterSet "race-set" by cluster "race-\d+"/,
      );
    }
    const winner = clusters[results.findIndex((r) => r.status === 'fulfilled')]!;
    expect((await store.getGuard('race-set', 'contested'))?.cluster).toBe(winner.name);
    const members = [];
    for (const c of clusters) {
      const i = await store.getIdentity(c.name);
      expect(i?.pending).toBeUndefined(); // losers cleaned up after themselves
      if (i?.clusterSet === 'race-set') members.push(c.name);
    }
    expect(members).toEqual([winner.name]);
    expect(actionsOf(await reconcileClaims({ ...ports(), graceMs: 0 }), 'conflict')).toEqual([]);
  });
});

describe('crashes between the writes, repaired by the reconciler', () => {
  it('join crashed after taking the guard: the reconciler finishes the join', async () => {
    const c = await cluster();
    await expect(joinClusterSet(ports('join:after-guard'), c.name, 'crash-join')).rejects.toThrow(Crash);
    expect(await store.getIdentity(c.name)).toMatchObject({ pending: { op: 'join', set: 'crash-join' } });
    expect((await store.getIdentity(c.name))?.clusterSet).toBeUndefined();
    expect((await store.getGuard('crash-join', c.uid))?.cluster).toBe(c.name); // guard without membership

    // Within the grace period the reconciler leaves a change that may still be running alone.
    expect(actionsOf(await reconcileClaims({ ...ports() }), 'completed')).toEqual([]);
    const report = await reconcileClaims({ ...ports(), graceMs: 0 });
    expect(actionsOf(report, 'completed').map((a) => a.cluster)).toEqual([c.name]);
    const i = await store.getIdentity(c.name);
    expect(i).toMatchObject({ clusterSet: 'crash-join' });
    expect(i?.pending).toBeUndefined();
    expect((await store.getGuard('crash-join', c.uid))?.cluster).toBe(c.name);
    expect(events.find((e) => e.detailType === 'ClusterSetMembershipChanged')?.detail).toMatchObject({
      change: 'join',
      to: 'crash-join',
      reason: 'reconcile',
    });
    // A second pass finds nothing to do.
    expect(
      (await reconcileClaims({ ...ports(), graceMs: 0 })).actions.filter((a) => a.cluster === c.name),
    ).toEqual([]);
  });

  it('join crashed before taking the guard: the reconciler drops the pending join', async () => {
    const c = await cluster();
    await expect(joinClusterSet(ports('join:after-pending'), c.name, 'crash-early')).rejects.toThrow(Crash);
    expect(await store.getGuard('crash-early', c.uid)).toBeUndefined();
    const report = await reconcileClaims({ ...ports(), graceMs: 0 });
    expect(actionsOf(report, 'abandoned').map((a) => a.cluster)).toContain(c.name);
    const i = await store.getIdentity(c.name);
    expect(i?.pending).toBeUndefined();
    expect(i?.clusterSet).toBeUndefined();
    // The cluster may join again afterwards.
    await joinClusterSet(ports(), c.name, 'crash-early');
    expect((await store.getIdentity(c.name))?.clusterSet).toBe('crash-early');
  });

  it('a rerun of the interrupted join resumes it (no reconciler needed)', async () => {
    const c = await cluster();
    await expect(joinClusterSet(ports('join:after-guard'), c.name, 'resume')).rejects.toThrow(Crash);
    expect((await joinClusterSet(ports(), c.name, 'resume')).changed).toBe(true);
    expect(await store.getIdentity(c.name)).toMatchObject({ clusterSet: 'resume' });
  });

  it('leave crashed before releasing the guard: the reconciler releases it, and the ID is free again', async () => {
    const a = await cluster();
    const b = await cluster();
    await setClusterId(ports(), a.name, 'leaver');
    await setClusterId(ports(), b.name, 'leaver');
    await joinClusterSet(ports(), a.name, 'crash-leave');
    await expect(leaveClusterSet(ports('leave:after-membership'), a.name)).rejects.toThrow(Crash);
    expect((await store.getIdentity(a.name))?.clusterSet).toBeUndefined(); // no longer a member...
    expect((await store.getGuard('crash-leave', 'leaver'))?.cluster).toBe(a.name); // ...but the guard stayed
    await expect(joinClusterSet(ports(), b.name, 'crash-leave')).rejects.toThrow(UniquenessError);
    const report = await reconcileClaims({ ...ports(), graceMs: 0 });
    expect(actionsOf(report, 'released-guard').map((x) => x.cluster)).toContain(a.name);
    await joinClusterSet(ports(), b.name, 'crash-leave');
    expect((await store.getGuard('crash-leave', 'leaver'))?.cluster).toBe(b.name);
  });

  it('a membership that lost its guard gets it back', async () => {
    const c = await cluster();
    await joinClusterSet(ports(), c.name, 'lost-guard');
    await store.releaseGuard('lost-guard', c.uid, { cluster: c.name });
    const report = await reconcileClaims({ ...ports(), graceMs: 0 });
    expect(actionsOf(report, 'restored-guard').map((x) => x.cluster)).toContain(c.name);
    expect((await store.getGuard('lost-guard', c.uid))?.cluster).toBe(c.name);
  });

  it.each(['move:after-pending', 'move:after-guard', 'move:after-switch'] as const)(
    'move crashed at %s: never two sets, never no set, repaired to exactly one',
    async (crashAt) => {
      const c = await cluster();
      await joinClusterSet(ports(), c.name, `from-${crashAt.split(':')[1]}`);
      const from = `from-${crashAt.split(':')[1]}`;
      const to = `to-${crashAt.split(':')[1]}`;
      await expect(moveClusterSet(ports(crashAt), c.name, to)).rejects.toThrow(Crash);
      // Right after the crash: the identity names exactly one ClusterSet.
      const mid = await store.getIdentity(c.name);
      expect([from, to]).toContain(mid?.clusterSet);
      expect(mid?.clusterSet).toBe(crashAt === 'move:after-switch' ? to : from);

      await reconcileClaims({ ...ports(), graceMs: 0 });
      const after = await store.getIdentity(c.name);
      expect(after?.pending).toBeUndefined();
      const guards = (await store.listGuards()).filter((g) => g.cluster === c.name).map((g) => g.clusterSet);
      expect(guards).toEqual([after!.clusterSet]); // exactly the membership's guard, no leftovers
      // Once the guard in the target was taken, the move is finished; before that it is dropped.
      expect(after?.clusterSet).toBe(crashAt === 'move:after-pending' ? from : to);
    },
  );
});

describe('custom claims', () => {
  it('set and delete, with old and new values in the event', async () => {
    const c = await cluster();
    await setCustomClaim(ports(), c.name, 'zone.example.com', 'eu-1a');
    await setCustomClaim(ports(), c.name, 'zone.example.com', 'eu-1b');
    expect(await store.getCustom(c.name)).toEqual({ 'zone.example.com': 'eu-1b' });
    expect(events.at(-1)!.detail).toMatchObject({
      changes: [{ claim: 'zone.example.com', old: { value: 'eu-1a' }, new: { value: 'eu-1b' } }],
    });
    await deleteCustomClaim(ports(), c.name, 'zone.example.com');
    expect(await store.getCustom(c.name)).toEqual({});
    expect(events.at(-1)!.detail).toMatchObject({
      reason: 'delete',
      changes: [{ old: { value: 'eu-1b' }, new: null }],
    });
  });

  it('reserved names, invalid names and a 128 KiB + 1 byte value are refused, and nothing is written', async () => {
    const c = await cluster();
    await setCustomClaim(ports(), c.name, 'keep.example.com', 'v');
    const before = await snapshot(c.name);
    events = [];
    const refusals: [string, string, RegExp][] = [
      ['fingerprint.k8s.io', 'x', /reserved domain \*\.k8s\.io/],
      ['sigs.k8s.io', 'x', /reserved domain sigs\.k8s\.io/],
      ['team.kubernetes.io', 'x', /reserved domain \*\.kubernetes\.io/],
      ['clusterset.k8s.io', 'x', /clusterset join\|leave\|move/],
      ['Upper.Example.COM', 'x', /not an RFC 1123 subdomain/],
      ['bad_name.example.com', 'x', /not an RFC 1123 subdomain/],
      [
        'big.example.com',
        'a'.repeat(MAX_CLAIM_VALUE_BYTES + 1),
        /131073 bytes; a claim value holds at most 131072 bytes/,
      ],
    ];
    for (const [name, value, rule] of refusals) {
      await expect(setClaim(ports(), c.name, name, value), name).rejects.toThrow(rule);
    }
    expect(await snapshot(c.name)).toEqual(before);
    expect(events).toEqual([]);
    // Exactly 128 KiB is fine; over 1024 characters it warns about OCM.
    const r = await setCustomClaim(ports(), c.name, 'max.example.com', 'a'.repeat(MAX_CLAIM_VALUE_BYTES));
    expect(r.warnings[0]).toMatch(/OCM ClusterClaim holds at most 1024/);
    expect((await store.getCustom(c.name))['max.example.com']).toHaveLength(MAX_CLAIM_VALUE_BYTES);
  });

  it('claims of an unregistered cluster are refused', async () => {
    await expect(setCustomClaim(ports(), 'nobody', 'a.example.com', 'x')).rejects.toThrow(/not registered/);
    await expect(joinClusterSet(ports(), 'nobody', 'blue')).rejects.toThrow(/not registered/);
  });
});

describe('diagnostics', () => {
  it('tags log lines and metrics of an invocation about a cluster with its ID and ClusterSet', async () => {
    const c = await cluster();
    await joinClusterSet(ports(), c.name, 'diag');
    forgetIdentityKeys();
    const logger = new Logger({ serviceName: 'test' });
    const metrics = new Metrics({ namespace: 'test', serviceName: 'test' });
    const append = vi.spyOn(logger, 'appendKeys');
    const meta = vi.spyOn(metrics, 'addMetadata');
    const mw = clusterIdentityContext(
      logger,
      metrics,
      () => store,
      (e: { detail: { cluster: string } }) => e.detail.cluster,
    );
    await mw.before!({ event: { detail: { cluster: c.name } } } as never);
    expect(append).toHaveBeenCalledWith({ clusterId: c.uid, clusterSet: 'diag' });
    expect(meta).toHaveBeenCalledWith('clusterId', c.uid);
    expect(meta).toHaveBeenCalledWith('clusterSet', 'diag');
    // A cluster fleetscope has no identity for still gets clusterSet "none"; a failing lookup never throws.
    await mw.before!({ event: { detail: { cluster: 'unknown-cluster' } } } as never);
    expect(append).toHaveBeenLastCalledWith({ clusterSet: 'none' });
    const broken = clusterIdentityContext(
      logger,
      metrics,
      () => {
        throw new Error('no table');
      },
      () => 'x',
    );
    await expect(broken.before!({ event: {} } as never)).resolves.toBeUndefined();
  });
});
