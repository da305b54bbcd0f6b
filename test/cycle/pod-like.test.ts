/**
 * A pod rebuilt from its view for the resize mechanism: observeResize of the rebuilt pod reads the same
 * resize state as the view, for every state (the condition the kubelet would have set).
 */
import { describe, expect, it } from 'vitest';
import { podLikeOf } from '../../shared/cycle/pod-like.js';
import { podView } from '../../shared/cycle/views.js';
import type { PodObject } from '../../shared/cycle/wire.js';
import { observeResize } from '../../shared/resize/index.js';

type Condition = { type: string; status: string; reason?: string; message?: string };

function pod(conditions: Condition[], actualCpu = '100m'): PodObject {
  return {
    metadata: { name: 'p', namespace: 'ns', uid: 'u-1', resourceVersion: '7', generation: 3 },
    spec: {
      nodeName: 'n1',
      containers: [
        { name: 'a', resources: { requests: { cpu: '200m', memory: '64Mi' }, limits: { memory: '128Mi' } } },
      ],
    },
    status: {
      phase: 'Running',
      conditions,
      containerStatuses: [
        {
          name: 'a',
          allocatedResources: { cpu: '200m', memory: '64Mi' },
          resources: { requests: { cpu: actualCpu, memory: '64Mi' }, limits: { memory: '128Mi' } },
        },
      ],
    } as PodObject['status'],
  } as PodObject;
}

describe('podLikeOf', () => {
  const cases: [string, Condition[]][] = [
    ['deferred', [{ type: 'PodResizePending', status: 'True', reason: 'Deferred', message: 'node is full' }]],
    ['infeasible', [{ type: 'PodResizePending', status: 'True', reason: 'Infeasible', message: 'too big' }]],
    [
      'error',
      [{ type: 'PodResizeInProgress', status: 'True', reason: 'Error', message: 'cgroup write failed' }],
    ],
    ['in-progress', [{ type: 'PodResizeInProgress', status: 'True' }]],
  ];
  for (const [state, conditions] of cases)
    it(`reads back as ${state}`, () => {
      const view = podView(pod(conditions))!;
      expect(view.resize.state).toBe(state);
      expect(observeResize(podLikeOf(view))).toEqual(view.resize);
    });

  it('reads back as settled when spec and what runs agree, with the pod identity kept', () => {
    const view = podView(pod([], '200m'))!;
    const like = podLikeOf(view);
    expect(observeResize(like)).toEqual(view.resize);
    expect(like.status?.conditions).toEqual([]);
    expect(like.metadata).toEqual({
      name: 'p',
      namespace: 'ns',
      uid: 'u-1',
      resourceVersion: '7',
      generation: 3,
    });
  });
});
