/**
 * Update modes as upstream VPA has them (1.7/1.8), over the simulator: one DaemonSet per mode, each with
 * the same load, through the same cycles. fleetscope never evicts in any mode (every pod keeps its uid);
 * Off publishes the recommendation in the VPA's status as upstream's recommender does and writes
 * nothing to pods; the switch fleetscope.io/writes: none writes nothing at all; Initial sizes each pod once, when it still has the template's requests; Recreate,
 * Auto, InPlaceOrRecreate and InPlace (1.7: in place only) resize running pods in place.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECOMMENDATION_ANNOTATION } from '../../shared/nodescope/collect.js';
import type { CycleResult } from '../../shared/nodescope/cycle.js';
import { WRITES_ANNOTATION } from '../../shared/nodescope/targets.js';
import { agentDaemonSet, cycle, type Env, MINUTE, startEnv, VPA_RESOURCE, vpaObject } from './helpers.js';

type Q = Record<string, string>;
interface VpaStatus {
  conditions?: { type: string; status: string; reason: string }[];
  recommendation?: { containerRecommendations?: ({ containerName: string } & Record<string, Q>)[] };
}

const MODES = ['Off', 'Initial', 'Recreate', 'Auto', 'InPlaceOrRecreate', 'InPlace'] as const;
const dsName = (mode: string) => `agent-${mode.toLowerCase()}`;
/** A VPA in mode InPlace with the switch that stops every write. */
const SILENT = 'agent-silent';

describe('update modes', () => {
  let env: Env;
  const results: CycleResult[] = [];
  const podsOf = (mode: string) =>
    env.sim
      .cluster('modes')
      .store.list('pods', 'monitoring')
      .filter((p) => p.metadata.ownerReferences?.[0]?.name === dsName(mode));
  const uids = (mode: string) =>
    podsOf(mode)
      .map((p) => p.metadata.uid)
      .sort();
  const before = new Map<string, string[]>();
  /** Resize requests per mode, and per pod. */
  const requested = (mode: string) =>
    results.flatMap((r) =>
      r.resizeReports
        .filter(
          (x) =>
            x.owner.name === dsName(mode) && x.report.kind === 'resized' && x.report.outcome === 'Requested',
        )
        .map((x) => x.report.podUid),
    );

  beforeAll(async () => {
    env = await startEnv([
      {
        name: 'modes',
        nodes: 3,
        seed: 9,
        vpaCrd: true,
        // Usage far from the template's requests, on every node, so every mode that may resize does.
        daemonSets: [...MODES, 'Silent'].map((mode) =>
          agentDaemonSet({
            name: dsName(mode),
            load: { cpu: 400, memory: '300Mi', perNode: 'heterogeneous', perNodeRange: [1, 3], noise: 0.05 },
          }),
        ),
      },
    ]);
    for (const mode of MODES) {
      before.set(mode, uids(mode));
      env.sim.cluster('modes').store.put(
        VPA_RESOURCE,
        vpaObject({
          name: dsName(mode),
          mode,
          target: { apiVersion: 'apps/v1', kind: 'DaemonSet', name: dsName(mode) },
        }),
      );
    }
    before.set('Silent', uids('Silent'));
    const silent = vpaObject({
      name: SILENT,
      mode: 'InPlace',
      target: { apiVersion: 'apps/v1', kind: 'DaemonSet', name: SILENT },
    }) as { metadata: { annotations: Record<string, string> } };
    silent.metadata.annotations[WRITES_ANNOTATION] = 'none';
    env.sim.cluster('modes').store.put(VPA_RESOURCE, silent);
    for (let i = 0; i < 12; i++) results.push(await cycle(env, 'modes', 15 * MINUTE));
  }, 180_000);
  afterAll(async () => {
    await env?.stop();
  });

  it('every mode is served, with its mode as written', () => {
    const last = results.at(-1);
    expect(last?.rejected).toEqual([]);
    expect(Object.fromEntries(last?.daemonSets.map((d) => [d.name, d.updateMode]) ?? [])).toEqual({
      ...Object.fromEntries(MODES.map((m) => [dsName(m), m])),
      [SILENT]: 'InPlace',
    });
  });

  it('never evicts, in any mode: every pod is the one it was', () => {
    for (const mode of [...MODES, 'Silent']) {
      expect(before.get(mode)?.length).toBeGreaterThan(0);
      expect(uids(mode)).toEqual(before.get(mode));
    }
  });

  it('Off publishes the recommendation in the VPA status as upstream does, and writes nothing to pods', () => {
    expect(requested('Off')).toEqual([]);
    const pods = podsOf('Off');
    expect(pods.filter((p) => p.metadata.annotations?.[RECOMMENDATION_ANNOTATION])).toEqual([]);
    // No resize either: every pod keeps the template's requests.
    const collector = (p: (typeof pods)[number]) =>
      p.spec?.containers?.find((c: { name: string }) => c.name === 'collector');
    expect(pods.every((p) => collector(p)?.resources?.requests?.cpu === '100m')).toBe(true);
    const status = env.sim.cluster('modes').store.get(VPA_RESOURCE, dsName('Off'), 'monitoring')?.status as
      | VpaStatus
      | undefined;
    expect(status?.conditions?.find((c) => c.type === 'RecommendationProvided')).toMatchObject({
      status: 'True',
      reason: 'NodeScope',
    });
    // The DaemonSet-wide recommendation, upstream's shape, full bounds, one entry per container.
    const recs = status?.recommendation?.containerRecommendations ?? [];
    expect(recs.map((r) => r.containerName)).toEqual(['collector', 'shipper']);
    for (const r of recs)
      for (const field of ['target', 'lowerBound', 'upperBound', 'uncappedTarget'] as const)
        expect(Object.keys(r[field] ?? {}).sort()).toEqual(['cpu', 'memory']);
  });

  it('fleetscope.io/writes: none writes nothing at all, status included, in any mode', () => {
    expect(requested('Silent')).toEqual([]);
    expect(podsOf('Silent').filter((p) => p.metadata.annotations?.[RECOMMENDATION_ANNOTATION])).toEqual([]);
    expect(env.sim.cluster('modes').store.get(VPA_RESOURCE, SILENT, 'monitoring')?.status).toBeUndefined();
    // Still recommended for (the views and the CLI read the store).
    expect(results.at(-1)?.daemonSets.find((d) => d.name === SILENT)?.recs.size).toBeGreaterThan(0);
  });

  it('Initial sizes each pod once, as it was created; the others resize running pods in place', () => {
    const initial = requested('Initial');
    expect(initial.length).toBeGreaterThan(0);
    expect(new Set(initial).size).toBe(initial.length);
    for (const mode of ['Recreate', 'Auto', 'InPlaceOrRecreate', 'InPlace']) {
      expect(requested(mode).length).toBeGreaterThan(0);
      expect(podsOf(mode).every((p) => p.metadata.annotations?.[RECOMMENDATION_ANNOTATION])).toBe(true);
    }
  });
});
