/**
 * A pod's view rebuilt as the resize mechanism reads a pod (shared/resize): its containers' cpu/memory,
 * what the kubelet allocated and what runs, and its resize state as the condition that says it
 * (observeResize of the result equals the view's reading), so a resize can be planned and followed from
 * the cycle's one list without reading the pod again.
 */
import { formatCpu, formatMemory } from '../kernel/quantity.js';
import type { Bytes, Millicores } from '../kernel/units.js';
import type { PodLike } from '../resize/index.js';
import type { PodView } from './views.js';

const list = (cpu: number | undefined, memory: number | undefined) => ({
  ...(cpu !== undefined ? { cpu: formatCpu(cpu as Millicores) } : {}),
  ...(memory !== undefined ? { memory: formatMemory(memory as Bytes) } : {}),
});

/** The pod as the resize mechanism reads it, rebuilt from its view (spec, allocation, actual, state). */
export function podLikeOf(v: PodView): PodLike {
  const r = v.resize;
  const conditions =
    r.state === 'deferred' || r.state === 'infeasible'
      ? [
          {
            type: 'PodResizePending',
            status: 'True',
            reason: r.state === 'infeasible' ? 'Infeasible' : 'Deferred',
            ...(r.message ? { message: r.message } : {}),
          },
        ]
      : r.state === 'error'
        ? [
            {
              type: 'PodResizeInProgress',
              status: 'True',
              reason: 'Error',
              ...(r.message ? { message: r.message } : {}),
            },
          ]
        : r.state === 'in-progress'
          ? [{ type: 'PodResizeInProgress', status: 'True' }]
          : [];
  return {
    metadata: {
      name: v.name,
      namespace: v.namespace,
      uid: v.uid,
      ...(v.resourceVersion ? { resourceVersion: v.resourceVersion } : {}),
      ...(v.generation !== undefined ? { generation: v.generation } : {}),
    },
    spec: {
      nodeName: v.node,
      containers: v.containers.map((c) => ({
        name: c.name,
        resources: { requests: list(c.reqCpu, c.reqMem), limits: list(c.limCpu, c.limMem) },
      })),
    },
    status: {
      phase: v.phase,
      conditions,
      containerStatuses: v.containers.map((c) => ({
        name: c.name,
        ...(c.hasActual
          ? { resources: { requests: list(c.actCpu, c.actMem), limits: list(c.actLimCpu, c.actLimMem) } }
          : {}),
        ...(c.allocCpu !== undefined || c.allocMem !== undefined
          ? { allocatedResources: list(c.allocCpu, c.allocMem) }
          : {}),
      })),
    },
  };
}
