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
