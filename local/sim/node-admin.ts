/**
 * Nodes changed at run time, as a cloud provider or a kubelet would change them: a node joins or
 * leaves, or its capacity changes in place (CPU/memory hotplug, KEP-3953, or a VM resized under a
 * running kubelet). Every change is a store write, so watches and resourceVersions see it as they
 * would a kubelet's status update, and the controllers react: pending pods get a scheduling pass and
 * the kubelet retries Deferred resizes. A kubelet does not evict pods because allocatable shrank below
 * what is allocated; neither does the simulator (such a node is simply overcommitted until pods go).
 */
import { formatCpu, formatMemory, parseCpu, parseMemory } from '../../shared/kernel/quantity.js';
import type { Bytes, Millicores } from '../../shared/kernel/units.js';
import { rfc3339 } from './clock.js';
import type { ClusterState } from './cluster.js';
import { ApiError, badRequest, notFound } from './errors.js';
import { fnv1a } from './ids.js';
import { isObject, type Json, type JsonObject } from './json.js';
import type { SimNodeCapacity, SimNodeSpec } from './types.js';

const NODES = { group: '', resource: 'nodes' };

function cpuOf(v: unknown, field: string): number {
  try {
    return parseCpu(v as string);
  } catch {
    throw badRequest(`${field}: ${JSON.stringify(v)} is not a cpu quantity`);
  }
}

function memOf(v: unknown, field: string): number {
  try {
    return parseMemory(v as string);
  } catch {
    throw badRequest(`${field}: ${JSON.stringify(v)} is not a memory quantity`);
  }
}

function podsOf(v: unknown): string {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw badRequest(`pods: ${JSON.stringify(v)} is not a pod count`);
  return String(n);
}

const condition = (type: string, status: string, reason: string, message: string, t: string) => ({
  type,
  status,
  lastHeartbeatTime: t,
  lastTransitionTime: t,
  reason,
  message,
});

function conditions(ready: boolean, t: string): JsonObject[] {
  return [
    condition(
      'MemoryPressure',
      'False',
      'KubeletHasSufficientMemory',
      'kubelet has sufficient memory available',
      t,
    ),
    condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure', t),
    condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available', t),
    ready
      ? condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status', t)
      : condition('Ready', 'False', 'KubeletNotReady', 'container runtime network not ready', t),
  ];
}

/** A Node as a kubelet registers it: capacity, allocatable (capacity less `reserved`), conditions. */
export function nodeObject(cluster: ClusterState, spec: SimNodeSpec): JsonObject {
  if (!spec?.name || !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(spec.name))
    throw badRequest(`name: ${JSON.stringify(spec?.name)} is not a node name`);
  const cpu = cpuOf(spec.cpu, 'cpu');
  const mem = memOf(spec.memory, 'memory');
  const pods = podsOf(spec.pods ?? 110);
  const resCpu = spec.reserved?.cpu === undefined ? 0 : cpuOf(spec.reserved.cpu, 'reserved.cpu');
  const resMem = spec.reserved?.memory === undefined ? 0 : memOf(spec.reserved.memory, 'reserved.memory');
  const t = rfc3339(cluster.clock.now());
  const h = fnv1a(spec.name, cluster.seedHash);
  const ip = `10.250.${(h >>> 8) & 255}.${1 + (h % 254)}`;
  const nodeSpec: JsonObject = {};
  if (spec.unschedulable) nodeSpec.unschedulable = true;
  if (spec.taints?.length) nodeSpec.taints = spec.taints.map((x) => ({ ...x }));
  return {
    kind: 'Node',
    apiVersion: 'v1',
    metadata: {
      name: spec.name,
      labels: { 'kubernetes.io/hostname': spec.name, 'kubernetes.io/os': 'linux', ...(spec.labels ?? {}) },
    },
    spec: nodeSpec,
    status: {
      capacity: { cpu: formatCpu(cpu as Millicores), memory: formatMemory(mem as Bytes), pods },
      allocatable: {
        cpu: formatCpu(Math.max(0, cpu - resCpu) as Millicores),
        memory: formatMemory(Math.max(0, mem - resMem) as Bytes),
        pods,
      },
      conditions: conditions(spec.ready !== false, t),
      addresses: [
        { type: 'InternalIP', address: ip },
        { type: 'Hostname', address: spec.name },
      ],
      nodeInfo: {
        kubeletVersion: `v${cluster.version.semver}`,
        operatingSystem: 'linux',
        architecture: 'amd64',
      },
    },
  };
}

function write(cluster: ClusterState, node: JsonObject): Json {
  const def = cluster.lookup('nodes');
  const normalize = cluster.strategy(def).normalize;
  const stored = cluster.internalWrite('nodes', node.metadata.name, normalize ? normalize(node) : node);
  cluster.settle();
  return stored;
}

export function addNode(cluster: ClusterState, spec: SimNodeSpec): Json {
  const node = nodeObject(cluster, spec);
  if (cluster.store.get('nodes', node.metadata.name))
    throw new ApiError(409, 'AlreadyExists', `nodes "${node.metadata.name}" already exists`, {
      name: node.metadata.name,
      kind: 'nodes',
    });
  return write(cluster, node);
}

/** Deletes the node and its heartbeat Lease; pod garbage collection then deletes the pods bound to it. */
export function removeNode(cluster: ClusterState, name: string): boolean {
  if (!cluster.store.get('nodes', name)) return false;
  cluster.internalDelete('nodes', name);
  if (cluster.store.get('leases.coordination.k8s.io', `kube-node-lease/${name}`))
    cluster.internalDelete('leases.coordination.k8s.io', `kube-node-lease/${name}`);
  cluster.settle();
  return true;
}

/**
 * New capacity for cpu, memory and/or pods. Allocatable follows with the node's reservation
 * (capacity minus allocatable) unchanged, as a kubelet recomputes it after a resize; never below 0.
 */
export function setNodeCapacity(cluster: ClusterState, name: string, change: SimNodeCapacity): Json {
  const node = cluster.store.get('nodes', name);
  if (!node) throw notFound(NODES, name);
  if (!isObject(change)) throw badRequest('expected {"cpu"?, "memory"?, "pods"?}');
  const capacity: JsonObject = { ...(node.status?.capacity ?? {}) };
  const allocatable: JsonObject = { ...(node.status?.allocatable ?? {}) };
  if (change.cpu !== undefined) {
    const reserved =
      cpuOf(capacity.cpu ?? 0, 'capacity.cpu') - cpuOf(allocatable.cpu ?? 0, 'allocatable.cpu');
    const cpu = cpuOf(change.cpu, 'cpu');
    capacity.cpu = formatCpu(cpu as Millicores);
    allocatable.cpu = formatCpu(Math.max(0, cpu - reserved) as Millicores);
  }
  if (change.memory !== undefined) {
    const reserved =
      memOf(capacity.memory ?? 0, 'capacity.memory') - memOf(allocatable.memory ?? 0, 'allocatable.memory');
    const mem = memOf(change.memory, 'memory');
    capacity.memory = formatMemory(mem as Bytes);
    allocatable.memory = formatMemory(Math.max(0, mem - reserved) as Bytes);
  }
  if (change.pods !== undefined) capacity.pods = allocatable.pods = podsOf(change.pods);
  return write(cluster, { ...node, status: { ...node.status, capacity, allocatable } });
}

/** The /_sim/nodes control endpoints; undefined when the path is not one of them. */
export function nodeControl(
  cluster: ClusterState,
  method: string,
  path: string,
  body: Json,
): { status: number; json: Json } | undefined {
  if (path === '/_sim/nodes' && method === 'POST') return { status: 201, json: addNode(cluster, body) };
  const m = /^\/_sim\/nodes\/([^/]+)(\/capacity)?$/.exec(path);
  if (!m) return undefined;
  const name = decodeURIComponent(m[1] as string);
  if (m[2] && method === 'POST') return { status: 200, json: setNodeCapacity(cluster, name, body) };
  if (!m[2] && method === 'DELETE') {
    if (!removeNode(cluster, name)) throw notFound(NODES, name);
    return { status: 200, json: {} };
  }
  return undefined;
}
