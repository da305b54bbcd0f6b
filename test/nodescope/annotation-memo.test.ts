/**
 * Whether a pod's recommendation annotation is stale, remembered per pod view (publish.ts staleFor):
 * parsed again only when the view, the recommendation object or the tolerance changed; whatever was
 * remembered, the answer equals annotationStale's afresh.
 */
import { describe, expect, it } from 'vitest';
import type { PodView } from '../../shared/cycle/views.js';
import { annotationStale, annotationValue } from '../../shared/nodescope/incluster.js';
import type { NodeRec } from '../../shared/nodescope/model.js';
import { staleFor, stalenessStats } from '../../shared/nodescope/publish.js';
import { runningPodView } from './helpers.js';

const MIB = 2 ** 20;
const T0 = Date.UTC(2026, 10, 1);

const rec = (cpu: number): NodeRec => ({
  source: 'node',
  containers: {
    a: {
      target: { cpu, memory: 100 * MIB },
      lowerBound: { cpu: cpu / 2, memory: 50 * MIB },
      upperBound: { cpu: cpu * 2, memory: 400 * MIB },
      uncappedTarget: { cpu, memory: 100 * MIB },
    },
  },
});

const view = (annotation: string | undefined): PodView =>
  runningPodView({
    node: 'n1',
    containers: [{ name: 'a', reqCpu: 100, reqMem: 100 * MIB, hasActual: false }],
    ...(annotation !== undefined ? { annotation } : {}),
  });

describe("the annotations' remembered staleness", () => {
  it('answers as afresh, and parses again only what changed', () => {
    const r150 = rec(150);
    const pod = view(annotationValue(r150, T0));
    const cases: [string, PodView, NodeRec, number, boolean][] = [
      ['first look', pod, r150, 0.1, true],
      ['same view, same recommendation', pod, r150, 0.1, false],
      ['a moved recommendation (a fold)', pod, rec(200), 0.1, true],
      ['the same values in a new object', pod, rec(150), 0.1, true],
      ['a wider tolerance', pod, r150, 0.5, true],
      ['a new view (the pod changed)', view(annotationValue(rec(200), T0)), r150, 0.1, true],
      ['no annotation', view(undefined), r150, 0.1, true],
    ];
    for (const [what, p, r, tolerance, computes] of cases) {
      const before = stalenessStats.computed;
      expect(staleFor(p, r, tolerance), what).toBe(annotationStale(p.annotation, r, tolerance));
      expect(stalenessStats.computed - before, what).toBe(computes ? 1 : 0);
    }
  });
});

/**
 * A target moved by one of the recommender's histogram buckets is its resolution, not a move: an
 * annotation is stale when a target moved by more than the tolerance *and* by more than one bucket.
 * The targets below are bucket boundaries as upstream makes them (boundary k of the CPU histogram is
 * 10m × (1.05^k − 1) / 0.05 cores, times the 1.15 margin), so each pair is a known number of buckets apart.
 */
describe('annotation staleness at the histogram resolution', () => {
  const cpuTarget = (k: number) => Math.round(10 * ((1.05 ** k - 1) / 0.05) * 1.15);
  const memTarget = (k: number) => Math.round(1e7 * ((1.05 ** k - 1) / 0.05) * 1.15);
  const withTargets = (cpu: number, memory: number): NodeRec => ({
    source: 'node',
    containers: {
      a: {
        target: { cpu, memory },
        lowerBound: { cpu, memory },
        upperBound: { cpu, memory },
        uncappedTarget: { cpu, memory },
      },
    },
  });
  const stale = (from: [number, number], to: [number, number]) =>
    annotationStale(annotationValue(withTargets(...from), T0), withTargets(...to), 0.1);

  it('keeps an annotation whose target moved by one bucket, however large that is in percent', () => {
    expect(cpuTarget(1)).toBe(12);
    expect(cpuTarget(2)).toBe(24);
    const mem = memTarget(20);
    for (const k of [1, 2, 5, 12, 20]) {
      // One bucket is 48% at 12m and 15% at 126m: over the 10% tolerance, still not a move.
      expect(stale([cpuTarget(k + 1), mem], [cpuTarget(k), mem]), `cpu bucket ${k}`).toBe(false);
      expect(stale([cpuTarget(k), mem], [cpuTarget(k + 1), mem]), `cpu bucket ${k} up`).toBe(false);
    }
    expect(stale([cpuTarget(30), memTarget(9)], [cpuTarget(30), memTarget(10)])).toBe(false);
  });

  it('rewrites it when a target moved by two buckets or more, and by more than the tolerance', () => {
    const mem = memTarget(20);
    for (const k of [1, 2, 5, 12, 20, 60])
      expect(stale([cpuTarget(k + 2), mem], [cpuTarget(k), mem]), `cpu bucket ${k}`).toBe(true);
    expect(stale([cpuTarget(30), memTarget(8)], [cpuTarget(30), memTarget(10)])).toBe(true);
    // Near two buckets (1.8) but under the tolerance (9.2%): not a move either.
    expect(stale([10_000, mem], [10_920, mem])).toBe(false);
  });
});
