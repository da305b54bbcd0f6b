/**
 * A lowered memory limit never goes below the container's usage (with headroom): that container's
 * memory stays as it runs, its CPU still changes; the kubelet's own figure from an earlier refusal of the
 * same pod counts as usage too.
 */
import { describe, expect, it } from 'vitest';
import type { PodView } from '../../shared/cycle/views.js';
import { keepMemoryAboveUsage, memoryUsageByNode, usageFloor } from '../../shared/nodescope/memory-guard.js';
import type { ResizeRecord } from '../../shared/resize/index.js';

const MI = 2 ** 20;
const pod = {
  name: 'agent-x',
  uid: 'u1',
  containers: [
    { name: 'a', reqMem: 512 * MI, limMem: 512 * MI, hasActual: true },
    { name: 'b', reqMem: 64 * MI, limMem: 256 * MI, hasActual: true },
    { name: 'c', reqMem: 64 * MI, hasActual: true },
  ],
} as unknown as PodView;

describe('keepMemoryAboveUsage', () => {
  it('holds memory where the lowered limit is below usage plus headroom, keeps CPU', () => {
    const desired = {
      a: { requests: { cpu: 200, memory: 128 * MI }, limits: { memory: 128 * MI } },
      b: { requests: { memory: 32 * MI }, limits: { memory: 128 * MI } },
      c: { requests: { cpu: 50, memory: 32 * MI } },
    };
    const r = keepMemoryAboveUsage(desired, pod, { a: 200 * MI, b: 120 * MI, c: 500 * MI });
    expect(r.held).toEqual(['a', 'b']);
    expect(r.desired).toEqual({ a: { requests: { cpu: 200 } }, c: desired.c });
  });

  it('lets a limit go down to usage plus headroom, and any limit go up', () => {
    const desired = { a: { requests: { memory: 200 * MI }, limits: { memory: 221 * MI } } };
    expect(keepMemoryAboveUsage(desired, pod, { a: 200 * MI }).held).toEqual([]);
    expect(keepMemoryAboveUsage(desired, pod, { a: 202 * MI }).held).toEqual(['a']);
    const up = { b: { limits: { memory: 300 * MI } } };
    expect(keepMemoryAboveUsage(up, pod, { b: 400 * MI }).held).toEqual([]);
  });

  it('judges a lowering against the limit the container runs with, not a spec left mid-resize', () => {
    // An earlier request set the spec to 128Mi; the kubelet refused it (usage 200Mi) and still runs
    // 512Mi. A limit of 160Mi is above the spec but below the running limit and the usage: the kubelet
    // would refuse it just the same.
    const midResize = {
      name: 'agent-x',
      uid: 'u1',
      containers: [{ name: 'a', reqMem: 64 * MI, limMem: 128 * MI, actLimMem: 512 * MI, hasActual: true }],
    } as unknown as PodView;
    const desired = { a: { requests: { cpu: 100, memory: 80 * MI }, limits: { memory: 160 * MI } } };
    const r = keepMemoryAboveUsage(desired, midResize, { a: 200 * MI });
    expect(r.held).toEqual(['a']);
    expect(r.desired).toEqual({ a: { requests: { cpu: 100 } } });
    // Back up to where it runs, or above usage: not a refused lowering.
    const back = { a: { limits: { memory: 512 * MI } } };
    expect(keepMemoryAboveUsage(back, midResize, { a: 200 * MI }).held).toEqual([]);
  });

  it("takes the kubelet's usage from an earlier refusal of the same pod", () => {
    const record: ResizeRecord = {
      podUid: 'u1',
      desired: 'x',
      state: 'rejected',
      since: 0,
      attempts: 1,
      message:
        'cannot decrease memory limits: [attempting to set pod memory limit (1) below current usage (9), attempting to set container "a" memory limit (134217728) below current usage (419430400)]',
    };
    expect(usageFloor({ a: 100 * MI, b: 1 }, record, 'u1')).toEqual({ a: 400 * MI, b: 1 });
    expect(usageFloor({ a: 100 * MI }, record, 'another pod')).toEqual({ a: 100 * MI });
  });

  it("reads each node's usage by container name from the cycle's samples", () => {
    const m = memoryUsageByNode({
      at: 0,
      gen: 0,
      containers: ['a', 'b'],
      samples: [{ node: 'n1', t: 0, cpu: [1, 2], memory: [10, undefined] }],
      ooms: [],
    });
    expect(m.get('n1')).toEqual({ a: 10 });
  });
});
