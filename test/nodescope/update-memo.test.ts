/**
 * The updater's decisions remembered per pod view (resize-pods.ts memoFor): a pod decided again only
 * when its view, its recommendation, the target or the updater's settings changed, or it crossed the
 * 12-hour age; whatever was remembered, the decision equals upstream's rules applied afresh.
 */
import { describe, expect, it } from 'vitest';
import type { PodView } from '../../shared/cycle/views.js';
import { DEFAULT_UPDATER, decideUpdate } from '../../shared/nodescope/apply.js';
import type { NodeRec } from '../../shared/nodescope/model.js';
import { memoFor } from '../../shared/nodescope/resize-pods.js';
import { type NodeScopeTarget, scopeOf } from '../../shared/nodescope/targets.js';
import { collected } from './collected.js';
import { runningPodView } from './helpers.js';

const HOUR = 3_600_000;
const T0 = Date.UTC(2026, 10, 1);
const MIB = 2 ** 20;

const target: NodeScopeTarget = {
  vpa: { namespace: 'm', name: 'v', uid: 'u' },
  ds: { namespace: 'm', name: 'd', uid: 'u' },
  selector: 'app=d',
  placement: { tolerations: [] },
  scope: scopeOf('node', undefined),
  containers: [{ name: 'a', requests: { cpu: 100 as never, memory: (128 * MIB) as never }, limits: {} }],
  updateMode: 'Recreate',
  apply: 'inplace',
  policies: {},
  via: 'spec',
  digest: 'd1',
};

/** A pod sized once already (not the template's requests), started at `startTime`. */
const pod = (cpu: number, startTime: number): PodView =>
  runningPodView({
    namespace: 'm',
    node: 'n1',
    startTime,
    containers: [{ name: 'a', reqCpu: cpu, reqMem: 100 * MIB, hasActual: false }],
  });

/** Target 150m within [50m, 300m]: a pod at 120m is 25% off (old pods only), one at 400m is outside. */
const rec = (): NodeRec => ({
  source: 'node',
  containers: {
    a: {
      target: { cpu: 150, memory: 100 * MIB },
      lowerBound: { cpu: 50, memory: 50 * MIB },
      upperBound: { cpu: 300, memory: 400 * MIB },
      uncappedTarget: { cpu: 150, memory: 100 * MIB },
    },
  },
});

describe("the updater's remembered decisions", () => {
  it('decides as afresh in every case, and only recomputes what changed', () => {
    const decide = memoFor(target, DEFAULT_UPDATER);
    const p = pod(120, T0);
    const r = rec();
    // Young: within range, not due.
    expect(decide(r, p, T0 + HOUR)).toBeUndefined();
    // Still young an hour later; then 12 hours old: due for the 25% change, as upstream decides.
    expect(decide(r, p, T0 + 2 * HOUR)).toBeUndefined();
    const aged = decide(r, p, T0 + 12 * HOUR);
    expect(aged).toEqual(decideUpdate(target, r, p, T0 + 12 * HOUR));
    expect(aged?.why).toMatch(/differ from the recommendation by 25%/);
    // The same view and recommendation later: the very decision remembered.
    expect(decide(r, p, T0 + 13 * HOUR)).toBe(aged);
    // A new recommendation object (a fold, a refresh): decided again.
    const r2 = rec();
    (r2.containers.a as { target: { cpu: number } }).target.cpu = 121;
    expect(decide(r2, p, T0 + 13 * HOUR)).toBeUndefined();
    expect(decideUpdate(target, r2, p, T0 + 13 * HOUR)).toBeUndefined();
    // A changed pod (a new view from the watch): decided again.
    const outside = pod(400, T0);
    expect(decide(r2, outside, T0 + 13 * HOUR)?.why).toMatch(/outside the recommended range/);
    // Another target digest (template, policies or mode changed) or other settings: decided again.
    const initial = memoFor(
      { ...target, apply: 'initial', updateMode: 'Initial', digest: 'd2' },
      DEFAULT_UPDATER,
    );
    expect(initial(r, p, T0 + 13 * HOUR)).toBeUndefined();
    const strict = memoFor(target, { ...DEFAULT_UPDATER, minChangePriority: 0.5 });
    expect(strict(r, p, T0 + 13 * HOUR)).toBeUndefined();
    expect(decide(r, p, T0 + 14 * HOUR)).toEqual(aged);
  });

  it('keeps no pod view alive: a decision goes with its view', async () => {
    const decide = memoFor(target, DEFAULT_UPDATER);
    const r = rec();
    const remembered = (): WeakRef<PodView> => {
      const p = pod(400, T0);
      expect(decide(r, p, T0 + 13 * HOUR)?.pod).toBe(p); // the decision refers to its own view only
      expect(decide(r, p, T0 + 13 * HOUR)).toBe(decide(r, p, T0 + 13 * HOUR));
      return new WeakRef(p);
    };
    const view = remembered();
    // The recommendation, the target and the settings, all still held, do not keep the view.
    expect(await collected(view)).toBe(true);
    expect(decide(r, pod(400, T0), T0 + 13 * HOUR)?.why).toMatch(/outside the recommended range/);
  });
});
