/**
 * Finding 2 of issue 16: a component's own clock must not end the wait for uses. Each clearing of the
 * uses issues an epoch (in the record and in the Feature object's status); a use counts only if it
 * echoes the current epoch. An in-cluster agent whose clock is an hour behind keeps reporting `on`: the
 * transition waits for it, however old its times look.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinFeatures, FeatureCatalog } from '../../shared/features/catalog.js';
import { FEATURE_CRD } from '../../shared/features/crd.js';
import { setDesired } from '../../shared/features/desired.js';
import type { FeatureSpec } from '../../shared/features/spec.js';
import { drive, type FeatureEnv, MINUTE, startFeatureEnv } from './helpers.js';

const SKEW = { namespace: 'acme', name: 'skew' };
const spec: FeatureSpec = {
  ...SKEW,
  description: 'a feature with an in-cluster agent',
  default: 'on',
  components: ['skew-agent'],
  usesWaitSeconds: 60,
  since: '0.1.0',
  enable: [],
  disable: [],
  origin: { file: 'test' },
};
const catalog = new FeatureCatalog([...builtinFeatures(), spec]);
const HOUR = 60 * MINUTE;

interface FeatureStatus {
  value?: 'on' | 'off';
  usesEpoch?: number;
}

describe('the wait for uses, by epoch', () => {
  let env: FeatureEnv;
  const cluster = 'skewed';
  const object = {
    group: FEATURE_CRD.group,
    version: FEATURE_CRD.version,
    plural: FEATURE_CRD.plural,
    ...SKEW,
  };
  beforeAll(async () => {
    env = await startFeatureEnv([{ name: cluster, nodes: 1, seed: 5 }]);
    await env.client(cluster).core.createNamespace({ body: { metadata: { name: 'acme' } } });
  });
  afterAll(async () => env?.stop());

  const status = async () =>
    ((await env.client(cluster).custom.getNamespacedCustomObject(object)) as { status?: FeatureStatus })
      .status ?? {};

  /** The agent reports `value` (default: what it reads), its clock `skewMs` off, echoing `epoch`. */
  async function agentReports(opts: { value?: 'on' | 'off'; skewMs: number; epoch?: number }) {
    const s = await status();
    const use = {
      value: opts.value ?? s.value ?? 'off',
      time: new Date(env.now() + opts.skewMs).toISOString(),
      ...(('epoch' in opts ? opts.epoch : s.usesEpoch) !== undefined
        ? { epoch: 'epoch' in opts ? opts.epoch : s.usesEpoch }
        : {}),
    };
    const c = env.client(cluster);
    await c.patch('agent reports', 'merge', (o) =>
      c.custom.patchNamespacedCustomObjectStatus(
        { ...object, body: { status: { uses: { 'skew-agent': use } } } },
        o,
      ),
    );
  }

  const reconcile = () => env.reconcile(cluster, SKEW, { catalog });
  const record = async () => (await env.store.get(cluster, SKEW))!;

  it('an agent an hour behind that still reports on holds the transition until it reports off', async () => {
    await drive(env, cluster, SKEW, { ports: { catalog }, between: () => agentReports({ skewMs: -HOUR }) });
    expect((await record()).state).toBe('On');
    await setDesired(env.store, spec, cluster, 'off', 'test', {}, env.now());
    await reconcile(); // TurningOff: the uses cleared, a new epoch issued
    const first = await record();
    expect(first.state).toBe('TurningOff');
    const epoch = (await status()).usesEpoch;

    // A broken agent: it keeps reporting on, echoing the epoch, with times an hour old.
    await agentReports({ value: 'on', skewMs: -HOUR });
    env.sim.clock.advance(61_000);
    await reconcile();
    const held = await record();
    expect(held.state, 'the agent still reports on').toBe('TurningOff');
    expect(held.tasks[0]!.waitingFor).toMatch(/still reporting "on": skew-agent/);
    expect(epoch, 'the epoch is published in the Feature object').toBeGreaterThan(0);
    expect(first.usesEpoch).toBe(epoch);
    const next = (await status()).usesEpoch!;
    expect(next, 'a new clearing, a new epoch').toBeGreaterThan(epoch!);

    // A report echoing an earlier epoch was read before the last clearing: it does not count.
    await agentReports({ value: 'on', skewMs: -HOUR, epoch: epoch! });
    await agentReports({ value: 'on', skewMs: -HOUR }); // ... but the current one does
    env.sim.clock.advance(61_000);
    await reconcile();
    expect((await record()).state).toBe('TurningOff');

    // It stops: it reports what it reads (off) with the current epoch; the wait ends.
    await agentReports({ skewMs: -HOUR });
    env.sim.clock.advance(61_000);
    await reconcile();
    expect((await record()).state).toBe('Off');
  });

  it('a use echoing an earlier epoch does not hold the wait, whatever its time says', async () => {
    await setDesired(env.store, spec, cluster, 'on', 'test', {}, env.now());
    await drive(env, cluster, SKEW, { ports: { catalog } });
    await setDesired(env.store, spec, cluster, 'off', 'test', {}, env.now());
    await reconcile();
    const epoch = (await status()).usesEpoch!;
    // Read before the clearing, written after it, its clock an hour ahead.
    await agentReports({ value: 'on', skewMs: HOUR, epoch: epoch - 1 });
    env.sim.clock.advance(61_000);
    await reconcile();
    expect((await record()).state).toBe('Off');
  });
});
