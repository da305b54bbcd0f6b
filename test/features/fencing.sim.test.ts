/**
 * Finding 1 of issue 16: a step must not run twice at once. A reconciler is paused mid-task past its
 * claim (CLAIM_MS) on the manual clock, a second one claims the task and runs it, then the first
 * resumes: the cluster sees each of the task's writes once, and the history's write count is what the
 * cluster saw (the paused attempt's writes included).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinFeatures, FeatureCatalog } from '../../shared/features/catalog.js';
import { setDesired } from '../../shared/features/desired.js';
import { OWNER_LABEL } from '../../shared/features/harmless.js';
import { CLAIM_MS } from '../../shared/features/machine.js';
import type { StepMark } from '../../shared/features/reconciler.js';
import type { FeatureSpec } from '../../shared/features/spec.js';
import type { ClusterClient } from '../../shared/k8s/client.js';
import { type FeatureEnv, MINUTE, startFeatureEnv } from './helpers.js';

const GADGETS = { namespace: 'acme', name: 'gadgets' };
const SELECTOR = 'acme.io/gadget=true';
/** Off removes a field from six ConfigMaps: six patches, one per object. */
const gadgets: FeatureSpec = {
  ...GADGETS,
  description: 'test feature',
  default: 'on',
  components: [],
  usesWaitSeconds: 0,
  since: '0.1.0',
  enable: [],
  disable: [
    {
      task: 'clear-field',
      apiVersion: 'v1',
      resource: 'configmaps',
      kind: 'ConfigMap',
      namespace: 'default',
      selector: SELECTOR,
      field: ['data', 'gadget'],
    },
  ],
  origin: { file: 'test' },
};
const catalog = new FeatureCatalog([...builtinFeatures(), gadgets]);

/** A promise the test resolves by hand. */
function latch() {
  let open!: () => void;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { opened, open };
}

describe('a reconciler paused past its claim mid-task', () => {
  let env: FeatureEnv;
  let n = 0;
  beforeAll(async () => {
    env = await startFeatureEnv([{ name: 'seed', nodes: 1, seed: 3 }]);
  });
  afterAll(async () => env?.stop());

  /** A fresh cluster with gadgets On and six ConfigMaps carrying the field; then desired off. */
  async function gadgetsOn(): Promise<string> {
    const cluster = `fence-${n++}`;
    await env.addCluster({ name: cluster, nodes: 1, seed: 40 + n });
    for (let i = 0; i < 6; i++)
      await env.client(cluster).core.createNamespacedConfigMap({
        namespace: 'default',
        body: {
          metadata: { name: `g${i}`, labels: { 'acme.io/gadget': 'true', [OWNER_LABEL]: 'acme.gadgets' } },
          data: { gadget: 'x' },
        },
      });
    await env.reconcile(cluster, GADGETS, { catalog, mirror: false });
    expect((await env.store.get(cluster, GADGETS))!.state).toBe('On');
    await setDesired(env.store, gadgets, cluster, 'off', 'test', {}, env.now());
    return cluster;
  }

  const patches = (cluster: string) => env.sim.cluster(cluster).stats().byMethod.PATCH ?? 0;
  /** The ConfigMaps that still carry the field. */
  const gadgetFields = async (cluster: string) =>
    (
      await env
        .client(cluster)
        .core.listNamespacedConfigMap({ namespace: 'default', labelSelector: SELECTOR })
    ).items
      .filter((c) => c.data?.gadget !== undefined)
      .map((c) => c.metadata!.name);

  /**
   * A client whose third PATCH waits for `gate` before it is sent (a reconciler frozen there: a GC
   * pause, a slow network); `paused` opens when it stops.
   */
  function pausingClient(cluster: string, gate: Promise<void>, paused: () => void): ClusterClient {
    const real = env.client(cluster);
    let seen = 0;
    return new Proxy(real, {
      get(target, prop, receiver) {
        if (prop === 'call')
          return async (operation: string, fn: unknown, opts: unknown) => {
            if (operation.startsWith('patch configmaps') && ++seen === 3) {
              paused();
              await gate;
            }
            return (target.call as (...a: unknown[]) => unknown)(operation, fn, opts);
          };
        const v = Reflect.get(target, prop, receiver);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
  }

  it('a second reconciler takes the task over; the first never writes again; history counts every write once', async () => {
    const cluster = await gadgetsOn();
    const before = patches(cluster);
    const resume = latch();
    const stopped = latch();
    // The heartbeat is the paused process's too: frozen with it.
    const first = env.reconcile(cluster, GADGETS, {
      catalog,
      mirror: false,
      heartbeatMs: 0,
      connect: async () => pausingClient(cluster, resume.opened, stopped.open),
    });
    await stopped.opened;
    expect(patches(cluster) - before).toBe(2); // two of six done when it froze
    env.sim.clock.advance(CLAIM_MS + MINUTE);
    await env.reconcile(cluster, GADGETS, { catalog, mirror: false });
    const off = (await env.store.get(cluster, GADGETS))!;
    expect(off.state).toBe('Off');
    resume.open();
    await first;
    expect(patches(cluster) - before, 'PATCH requests the cluster received').toBe(6);
    expect(await gadgetFields(cluster)).toEqual([]);
    const summary = (await env.store.get(cluster, GADGETS))!.history
      .at(-1)!
      .done.find((d) => d.task === 'clear-field');
    expect(summary?.writes, 'writes in history').toBe(6);
  });

  it('paused after its claim was checked and before its write lands: the write is refused by the object', async () => {
    const cluster = await gadgetsOn();
    const before = patches(cluster);
    const resume = latch();
    const stopped = latch();
    let fenced = 0;
    const onStep = async (m: StepMark) => {
      if (m.step === 'fenced' && ++fenced === 3) {
        stopped.open();
        await resume.opened;
      }
    };
    const lost: string[] = [];
    const count = (m: string) => {
      if (m === 'FeatureClaimsLost') lost.push(m);
    };
    const first = env.reconcile(cluster, GADGETS, {
      catalog,
      mirror: false,
      heartbeatMs: 0,
      onFence: onStep,
      count,
    });
    await stopped.opened;
    env.sim.clock.advance(CLAIM_MS + MINUTE);
    await env.reconcile(cluster, GADGETS, { catalog, mirror: false });
    expect((await env.store.get(cluster, GADGETS))!.state).toBe('Off');
    resume.open();
    await first;
    // Its third PATCH reached the server with the resourceVersion it had read: refused (409), so
    // seven requests made six changes; and it sent nothing after it.
    expect(patches(cluster) - before, 'PATCH requests the cluster received').toBe(7);
    expect(lost, 'the paused reconciler knew it had lost its claim').toEqual(['FeatureClaimsLost']);
    expect(await gadgetFields(cluster)).toEqual([]);
    const off = (await env.store.get(cluster, GADGETS))!;
    expect(off.history.at(-1)!.done.find((d) => d.task === 'clear-field')?.writes).toBe(6);
  });

  it('a reconciler that dies at any write of the task (before the first, ..., before the sixth): the next resumes it, and the cluster and the history see each write once', async () => {
    for (let k = 1; k <= 6; k++) {
      const cluster = await gadgetsOn();
      const before = env.writes(cluster);
      const died = latch();
      let fenced = 0;
      // Dies at its k-th write, its heartbeat with it: it never goes on (the promise is left pending).
      void env.reconcile(cluster, GADGETS, {
        catalog,
        mirror: false,
        heartbeatMs: 0,
        onFence: async (m: StepMark) => {
          if (m.step === 'fenced' && ++fenced === k) {
            died.open();
            await new Promise(() => {});
          }
        },
      });
      await died.opened;
      expect(env.writes(cluster) - before, `died before write ${k}`).toBe(k - 1);
      env.sim.clock.advance(CLAIM_MS + MINUTE);
      await env.reconcile(cluster, GADGETS, { catalog, mirror: false });
      const off = (await env.store.get(cluster, GADGETS))!;
      expect(off.state, `died before write ${k}`).toBe('Off');
      expect(env.writes(cluster) - before, `cluster writes, died before write ${k}`).toBe(6);
      expect(await gadgetFields(cluster)).toEqual([]);
      const done = off.history.at(-1)!.done;
      expect(
        done.filter((d) => d.task === 'clear-field'),
        `died before write ${k}`,
      ).toMatchObject([{ writes: 6 }]);
    }
  });

  it('a slow task keeps its claim by its heartbeat: nobody else performs it meanwhile', async () => {
    const cluster = await gadgetsOn();
    const before = patches(cluster);
    const resume = latch();
    const stopped = latch();
    let claimedUntil = 0;
    const first = env.reconcile(cluster, GADGETS, {
      catalog,
      mirror: false,
      heartbeatMs: 5,
      connect: async () => pausingClient(cluster, resume.opened, stopped.open),
    });
    await stopped.opened;
    for (let i = 0; i < 4; i++) {
      // The clock moves a third of a claim at a time; the heartbeat renews on it.
      const held = (await env.store.get(cluster, GADGETS))!.tasks[0]!.claim!.until;
      env.sim.clock.advance(CLAIM_MS / 2);
      for (let k = 0; k < 200; k++) {
        claimedUntil = (await env.store.get(cluster, GADGETS))!.tasks[0]!.claim!.until;
        if (claimedUntil > held) break;
        await new Promise((r) => setTimeout(r, 5));
      }
      expect(claimedUntil, `renewed after ${i + 1} half-claims`).toBeGreaterThan(held);
      const outcomes = await env.reconcile(cluster, GADGETS, { catalog, mirror: false });
      expect(outcomes[0]!.steps).toBe(0); // the task is held: nothing to do
    }
    resume.open();
    await first;
    expect(patches(cluster) - before).toBe(6);
    const off = (await env.store.get(cluster, GADGETS))!;
    expect(off.state).toBe('Off');
    expect(off.history.at(-1)!.done.find((d) => d.task === 'clear-field')?.writes).toBe(6);
  });
});
