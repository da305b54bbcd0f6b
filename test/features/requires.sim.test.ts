/**
 * `requires` over the simulator and the local DynamoDB (issue 16, finding 8): acme/app requires
 * acme/base. Turning app on turns base on first (its desired value set by requires/acme/app) and app's
 * own tasks wait until base is On; turning base off waits, base still `on` to its components, until app
 * is Off, and only then removes what base put in the cluster.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDeclarations } from '../../shared/features/declaration.js';
import { setDesiredInOrder } from '../../shared/features/desired.js';
import { valueFor } from '../../shared/features/machine.js';
import type { FeatureRef } from '../../shared/features/model.js';
import { type FeatureEnv, MINUTE, startFeatureEnv } from './helpers.js';

const APP = { namespace: 'acme', name: 'app' };
const BASE = { namespace: 'acme', name: 'base' };
const C = 'req';

/** A feature that puts one ConfigMap in acme while on. */
const declared = (name: string, requires: string[]) => ({
  namespace: 'acme',
  name,
  requires,
  usesWaitSeconds: 0,
  enable: [
    {
      task: 'apply-manifests',
      manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'acme' } }],
    },
  ],
  disable: [{ task: 'delete-objects', apiVersion: 'v1', kind: 'ConfigMap', namespace: 'acme', name }],
});

describe('requires', () => {
  let env: FeatureEnv;
  beforeAll(async () => {
    env = await startFeatureEnv([{ name: C, nodes: 1, seed: 3 }]);
    await env.client(C).core.createNamespace({ body: { metadata: { name: 'acme' } } });
    // app first in the catalog: a pass reaches it before base, so its wait is what orders them.
    const specs = parseDeclarations(
      JSON.stringify({ features: [declared('app', ['acme/base']), declared('base', [])] }),
      'acme.yaml',
    );
    for (const s of specs) await env.store.putDeclaration({ ...s, registeredAt: env.now() });
  }, 60_000);
  afterAll(async () => env?.stop());

  const record = async (f: FeatureRef) => (await env.store.get(C, f))!;
  const configMaps = async () =>
    env.sim
      .cluster(C)
      .store.list('configmaps', 'acme')
      .map((c) => c.metadata.name)
      .filter((n) => n !== 'kube-root-ca.crt')
      .sort();
  /** One reconciler pass over every feature of the cluster, then a minute. */
  async function pass() {
    await env.reconcile(C);
    env.sim.clock.advance(MINUTE);
  }
  async function setOperator(f: FeatureRef, desired: 'on' | 'off') {
    const catalog = await env.catalog();
    return setDesiredInOrder(env.store, catalog, catalog.need(f), C, desired, 'operator', {}, env.now());
  }

  it('turns the requirement on first, and turns it off only after what requires it is off', async () => {
    const changes = await setOperator(APP, 'on');
    expect(
      changes.map((c) => `${c.spec.name}:${c.change.record.desired}:${c.change.record.desiredBy}`),
    ).toEqual(['base:on:requires/acme/app', 'app:on:operator']);

    await env.reconcile(C, APP); // app alone: it waits for base, and writes nothing
    let app = await record(APP);
    expect(app.state).toBe('TurningOn');
    expect(app.tasks[0]!.waitingFor).toMatch(
      /^acme\/base \((Off|TurningOn)\) to be On \(it requires them\)$/,
    );
    expect(await configMaps()).toEqual([]);
    for (let i = 0; i < 10 && (await record(APP)).state !== 'On'; i++) await pass();
    app = await record(APP);
    const base = await record(BASE);
    expect([app.state, base.state]).toEqual(['On', 'On']);
    expect(await configMaps()).toEqual(['app', 'base']);
    // app's first task ended only once base had completed.
    const baseOn = base.history.at(-1)!;
    const appWait = app.history.at(-1)!.done[0]!;
    expect(appWait.title).toBe('wait for acme/base to be On');
    expect(appWait.doneAt).toBeGreaterThanOrEqual(baseOn.endedAt!);

    // base off while app is on: it waits, still on for its components, and removes nothing.
    await setOperator(BASE, 'off');
    for (let i = 0; i < 3; i++) await pass();
    let b = await record(BASE);
    expect(b.state).toBe('TurningOff');
    expect(b.tasks[0]!.waitingFor).toBe(
      'acme/app (On) to be Off (they require this feature: turn them off first)',
    );
    expect(valueFor(b, 'off')).toBe('on');
    expect(await configMaps()).toEqual(['app', 'base']);

    // app off: app goes first, then base.
    await setOperator(APP, 'off');
    for (let i = 0; i < 10 && (await record(BASE)).state !== 'Off'; i++) await pass();
    b = await record(BASE);
    app = await record(APP);
    expect([app.state, b.state]).toEqual(['Off', 'Off']);
    expect(await configMaps()).toEqual([]);
    expect(b.history.at(-1)!.done[0]!.doneAt).toBeGreaterThanOrEqual(app.history.at(-1)!.endedAt!);
  });
});
