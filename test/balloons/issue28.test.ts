/**
 * Issue 28's rules that need no cluster: which waiting pods are demand, what a balloon pod must be.
 */
import { describe, expect, it } from 'vitest';
import { balloonPodProblems } from '../../shared/balloons/integrity.js';
import { demandable } from '../../shared/balloons/read.js';
import { podView } from '../../shared/cycle/views.js';
import type { PodObject } from '../../shared/cycle/wire.js';

const unschedulable = {
  phase: 'Pending',
  conditions: [
    {
      type: 'PodScheduled',
      status: 'False',
      reason: 'Unschedulable',
      message: '0/3 nodes are available: 3 Insufficient cpu.',
    },
  ],
};
const waiting = (spec: object, status: object = unschedulable): PodObject => ({
  metadata: { name: 'p', namespace: 'default', uid: 'u' },
  spec: { containers: [{ name: 'app', resources: { requests: { cpu: '1' } } }], ...spec },
  status,
});

describe('waiting pods as demand', () => {
  it('counts only a pod the default scheduler reported Unschedulable for resources, without gates', () => {
    expect(demandable(podView(waiting({}))!)).toBe(true);
    expect(demandable(podView(waiting({ schedulingGates: [{ name: 'x' }] }))!)).toBe(false);
    expect(demandable(podView(waiting({ schedulerName: 'volcano' }))!)).toBe(false);
    expect(demandable(podView(waiting({}, { phase: 'Pending' }))!)).toBe(false);
    const volume = {
      phase: 'Pending',
      conditions: [
        {
          type: 'PodScheduled',
          status: 'False',
          reason: 'Unschedulable',
          message: 'unbound PersistentVolumeClaims',
        },
      ],
    };
    expect(demandable(podView(waiting({}, volume))!)).toBe(false);
  });
});

describe('what a balloon pod must be', () => {
  const balloon = (spec: object): PodObject => ({
    metadata: { name: 'b', namespace: 'kube-system', uid: 'b' },
    spec: {
      nodeName: 'n1',
      priority: 1_000_000_000,
      preemptionPolicy: 'Never',
      containers: [{ name: 'balloon', resources: { requests: { cpu: '1m', memory: '1Mi' } } }],
      ...spec,
    },
  });
  it('is sound as fleetscope makes it', () => {
    expect(balloonPodProblems(podView(balloon({}))!)).toEqual([]);
  });
  it('names each field that differs', () => {
    expect(balloonPodProblems(podView(balloon({ priority: 0 }))!).join()).toMatch(/^priority 0/);
    expect(
      balloonPodProblems(podView(balloon({ preemptionPolicy: 'PreemptLowerPriority' }))!).join(),
    ).toMatch(/preemptionPolicy PreemptLowerPriority/);
    const limited = balloon({
      containers: [{ name: 'balloon', resources: { requests: { cpu: '1m' }, limits: { cpu: '3' } } }],
    });
    expect(balloonPodProblems(podView(limited)!).join()).toMatch(/limits on container balloon/);
    const init = balloon({ initContainers: [{ name: 'i', resources: { requests: { cpu: '2' } } }] });
    expect(balloonPodProblems(podView(init)!).join()).toMatch(/init containers/);
  });
});
