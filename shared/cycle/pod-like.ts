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
      conditions: resizeConditions(v.resize),
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

type Condition = { type: string; status: string; reason?: string; message?: string };

/** The condition that says the view's resize state, as the kubelet would set it (none when settled). */
function resizeConditions(r: PodView['resize']): Condition[] {
  const message = r.message ? { message: r.message } : {};
  switch (r.state) {
    case 'deferred':
    case 'infeasible':
      return [
        {
          type: 'PodResizePending',
          status: 'True',
          reason: r.state === 'infeasible' ? 'Infeasible' : 'Deferred',
          ...message,
        },
      ];
    case 'error':
      return [{ type: 'PodResizeInProgress', status: 'True', reason: 'Error', ...message }];
    case 'in-progress':
      return [{ type: 'PodResizeInProgress', status: 'True' }];
    default:
      return [];
  }
}
