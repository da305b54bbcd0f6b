/**
 * What a pod occupies on its node, as the scheduler and the kubelet count it: component-helpers
 * resource.PodRequests with UseStatusResources (KEP-1287), the one formula shared by the balloon cycle
 * and the simulator's scheduler.
 *   - regular containers and restartable init containers (sidecars, KEP-753) add up;
 *   - a non-restartable init container runs alone beside the sidecars started before it: the pod needs
 *     the larger of that and the sum above;
 *   - pod-level requests (spec.resources, KEP-2837, 1.34+) replace the containers' sum where set;
 *   - pod overhead (a RuntimeClass's) is added on top;
 *   - mid-resize, a container (and the pod level) counts the larger of its spec, what the kubelet
 *     allocated and what runs; the spec is left out while the resize is Infeasible.
 * Amounts are integers (millicores, bytes); the caller gives the quantity parser.
 */

export interface Occupancy {
  cpu: number;
  memory: number;
}

type List = { readonly [resource: string]: string | number | undefined } | null | undefined;
/** A resource list's cpu and memory as integers (0 where absent or malformed). */
export type ParseList = (list: List) => Occupancy;

interface ContainerLike {
  name?: string;
  restartPolicy?: string | null;
  resources?: { requests?: List } | null;
}
interface StatusLike {
  name?: string;
  resources?: { requests?: List } | null;
  allocatedResources?: List;
}
export interface PodResourcesLike {
  spec?: {
    containers?: readonly ContainerLike[] | null;
    initContainers?: readonly ContainerLike[] | null;
    overhead?: List;
    resources?: { requests?: List } | null;
  } | null;
  status?: {
    containerStatuses?: readonly StatusLike[] | null;
    initContainerStatuses?: readonly StatusLike[] | null;
    resources?: { requests?: List } | null;
    allocatedResources?: List;
  } | null;
}

const ZERO: Occupancy = { cpu: 0, memory: 0 };
const add = (a: Occupancy, b: Occupancy): Occupancy => ({ cpu: a.cpu + b.cpu, memory: a.memory + b.memory });
const max = (a: Occupancy, b: Occupancy): Occupancy => ({
  cpu: Math.max(a.cpu, b.cpu),
  memory: Math.max(a.memory, b.memory),
});

/** determineContainerReqs: spec (unless Infeasible), allocated and actual, once the node reports actual. */
function withStatus(spec: List, status: StatusLike | undefined, parse: ParseList, infeasible: boolean) {
  const declared = parse(spec);
  if (!status?.resources) return declared;
  const known = max(parse(status.resources.requests), parse(status.allocatedResources));
  return infeasible ? known : max(declared, known);
}

export function podOccupancy(pod: PodResourcesLike, parse: ParseList, infeasible: boolean): Occupancy {
  const statuses = new Map<string, StatusLike>();
  for (const s of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])])
    if (s?.name) statuses.set(s.name, s);
  const of = (c: ContainerLike) =>
    withStatus(c.resources?.requests, c.name ? statuses.get(c.name) : undefined, parse, infeasible);
  let sum = ZERO;
  for (const c of pod.spec?.containers ?? []) sum = add(sum, of(c));
  let sidecars = ZERO;
  let initPeak = ZERO;
  for (const c of pod.spec?.initContainers ?? []) {
    if (c.restartPolicy === 'Always') {
      const r = of(c);
      sum = add(sum, r);
      sidecars = add(sidecars, r);
      initPeak = max(initPeak, sidecars);
    } else initPeak = max(initPeak, add(parse(c.resources?.requests), sidecars));
  }
  let total = max(sum, initPeak);
  const podLevel = pod.spec?.resources?.requests;
  if (podLevel) {
    const status = pod.status?.resources
      ? { resources: pod.status.resources, allocatedResources: pod.status.allocatedResources }
      : undefined;
    const level = withStatus(podLevel, status, parse, infeasible);
    total = {
      cpu: podLevel.cpu !== undefined ? level.cpu : total.cpu,
      memory: podLevel.memory !== undefined ? level.memory : total.memory,
    };
  }
  return add(total, parse(pod.spec?.overhead));
}
