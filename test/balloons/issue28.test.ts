/**
 * Issue 28's rules that need no cluster: which waiting pods are demand, what a balloon pod must be.
 */
import { describe, expect, it } from 'vitest';
import { balloonPodProblems } from '../../shared/balloons/integrity.js';
import { validatePolicy } from '../../shared/balloons/policy.js';
import { demandable } from '../../shared/balloons/read.js';
import { parseResizeRequest } from '../../shared/balloons/requests.js';
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

describe('7. input that was silently wrong is refused, naming the field', () => {
  const base = { name: 'p', selector: 'pool=a', max: { cpu: '4', memory: '8Gi' } };
  it('a unit-less memory below 1Mi is bytes: refused with a hint', () => {
    expect(() => parseResizeRequest({ node: 'n1', cpu: '1', memory: '4' })).toThrow(
      /memory: "4" is 4 bytes .*4Gi or 4Mi/,
    );
    expect(() => validatePolicy({ ...base, max: { cpu: '4', memory: 8 } })).toThrow(
      /max.memory: "8" is 8 bytes/,
    );
    // with a unit, or large enough to be meant, it stands; zero stays zero
    expect(parseResizeRequest({ node: 'n1', cpu: '1', memory: '4Gi' }).size.memory).toBe(4 * 2 ** 30);
    expect(parseResizeRequest({ node: 'n1', cpu: '1', memory: String(2 ** 30) }).size.memory).toBe(2 ** 30);
    expect(validatePolicy({ ...base, headroomMin: { cpu: '0', memory: '0' } }).headroomMin.memory).toBe(0);
  });
  it('an unknown field of a policy is refused, not ignored', () => {
    expect(() => validatePolicy({ ...base, headroomPercnt: 50 } as never)).toThrow(
      /^headroomPercnt: unknown field/,
    );
    expect(() => validatePolicy({ ...base, max: { cpu: '4', memory: '8Gi', memroy: '1Gi' } })).toThrow(
      /max.memroy: unknown field/,
    );
  });
  it('a number that is not decimal is refused', () => {
    expect(() => validatePolicy({ ...base, headroomPercent: '0x10' })).toThrow(
      /headroomPercent: must be a number/,
    );
    expect(() => validatePolicy({ ...base, shrinkCooldownMinutes: '1e2' })).toThrow(/shrinkCooldownMinutes/);
    expect(validatePolicy({ ...base, headroomPercent: '16' }).headroomPercent).toBe(16);
  });
  it('a size that can never grow a node is refused', () => {
    expect(() =>
      validatePolicy({ ...base, min: { cpu: '0', memory: '0' }, max: { cpu: '0', memory: '0' } }),
    ).toThrow(/max.cpu: must be greater than zero/);
    expect(() => parseResizeRequest({ node: 'n1', cpu: '0', memory: '0' })).toThrow(
      /cpu: must be greater than zero \(node n1/,
    );
    expect(() => parseResizeRequest({ node: 'n1', cpu: '1', memory: '0' })).toThrow(
      /memory: must be greater/,
    );
  });
});
