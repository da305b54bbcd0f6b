/**
 * Nodes: the API strategy (TaintNodesByCondition on create, /status semantics) and the simulated
 * fleet: EKS-like nodes of varied instance types, with the labels and allocatable a kubelet reports,
 * and a tainted GPU node group that DaemonSets only reach when they tolerate it.
 */
import { formatCpu, formatMemory, parseCpu, parseMemory } from '../../shared/kernel/quantity.js';
import type { Bytes, Millicores } from '../../shared/kernel/units.js';
import { rfc3339 } from './clock.js';
import { mix32, unit, uuidFrom } from './ids.js';
import { clone, isObject, type Json, type JsonObject, orderKeys } from './json.js';
import {
  CONDITION_ORDER,
  canonicalResourceList,
  NODE_INFO_ORDER,
  NODE_STATUS_ORDER,
  orderTop,
} from './objects.js';
import type { SimState, Strategy } from './state.js';

export interface InstanceType {
  name: string;
  cpu: number;
  memoryGi: number;
  maxPods: number;
  gpu?: number;
}

/** The general-purpose node groups, weighted towards the common sizes. */
export const INSTANCE_TYPES: InstanceType[] = [
  { name: 'm6i.large', cpu: 2, memoryGi: 8, maxPods: 29 },
  { name: 'm6i.xlarge', cpu: 4, memoryGi: 16, maxPods: 58 },
  { name: 'm6i.xlarge', cpu: 4, memoryGi: 16, maxPods: 58 },
  { name: 'm6i.2xlarge', cpu: 8, memoryGi: 32, maxPods: 58 },
  { name: 'm6i.2xlarge', cpu: 8, memoryGi: 32, maxPods: 58 },
  { name: 'c6i.4xlarge', cpu: 16, memoryGi: 32, maxPods: 234 },
  { name: 'r6i.2xlarge', cpu: 8, memoryGi: 64, maxPods: 58 },
  { name: 'm6i.8xlarge', cpu: 32, memoryGi: 128, maxPods: 234 },
];
export const GPU_INSTANCE: InstanceType = { name: 'g5.2xlarge', cpu: 8, memoryGi: 32, maxPods: 58, gpu: 1 };
export const GPU_TAINT = { key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' };
const ZONES = ['us-east-1a', 'us-east-1b', 'us-east-1c'];
const NOT_READY_TAINT = { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' };

/** EKS kube-reserved CPU: 6% of the first core, 1% of the second, 0.5% of the next two, 0.25% above. */
function reservedCpuMillis(cores: number): number {
  let m = 60;
  if (cores > 1) m += 10;
  if (cores > 2) m += 5 * Math.min(2, cores - 2);
  if (cores > 4) m += 2.5 * (cores - 4);
  return Math.ceil(m);
}

export interface NodeShape {
  name: string;
  index: number;
  instance: InstanceType;
  zone: string;
  ip: string;
  gpu: boolean;
}

/** The deterministic shape of simulated node `index`. */
export function nodeShape(cluster: SimState, index: number): NodeShape {
  const h = mix32(cluster.seedHash, index);
  // One node in ten is a tainted GPU node; the first node never is, so tiny clusters stay general-purpose.
  const gpu = index > 0 && h % 10 === 0;
  const instance = gpu ? GPU_INSTANCE : (INSTANCE_TYPES[(h >>> 4) % INSTANCE_TYPES.length] as InstanceType);
  // Each cluster gets its own VPC range, so node names differ between clusters of one simulator.
  const a = (cluster.seedHash % 64) * 4 + Math.floor(index / 62_500);
  const b = 1 + Math.floor((index % 62_500) / 250);
  const c = 10 + (index % 250);
  const ip = `10.${a}.${b}.${c}`;
  return {
    name: `ip-10-${a}-${b}-${c}.ec2.internal`,
    index,
    instance,
    zone: ZONES[index % 3] as string,
    ip,
    gpu,
  };
}

/**
 * The index a simulated node's name was made from (nodeShape's inverse), so that a tool outside the
 * simulator's process can compute what the simulator computes per node (the bench's seeded history).
 * `a` is the cluster's VPC block (a multiple of 4) plus index / 62,500.
 */
export function nodeIndexOfName(name: string): number | undefined {
  const m = /^ip-10-(\d+)-(\d+)-(\d+)\.ec2\.internal$/.exec(name);
  if (!m) return undefined;
  const [a, b, c] = [Number(m[1]), Number(m[2]), Number(m[3])];
  return (a % 4) * 62_500 + (b - 1) * 250 + (c - 10);
}

const condition = (type: string, status: string, reason: string, message: string, time: string) => ({
  type,
  status,
  lastHeartbeatTime: time,
  lastTransitionTime: time,
  reason,
  message,
});

/** A Node object as a kubelet on an EKS node would register and report it. */
export function buildNode(cluster: SimState, shape: NodeShape, createdAt: number): JsonObject {
  const t = shape.instance;
  const time = rfc3339(createdAt);
  const capMem = Math.floor((t.memoryGi * 2 ** 30 * 0.955) / 1024) * 1024;
  const reservedMem = (255 + 11 * t.maxPods + 100) * 2 ** 20;
  const cpuM = t.cpu * 1000;
  const capacity: JsonObject = {
    cpu: formatCpu(cpuM as Millicores),
    'ephemeral-storage': '104845292Ki',
    'hugepages-1Gi': '0',
    'hugepages-2Mi': '0',
    memory: formatMemory(capMem as Bytes),
    ...(t.gpu ? { 'nvidia.com/gpu': String(t.gpu) } : {}),
    pods: String(t.maxPods),
  };
  const allocatable: JsonObject = {
    ...capacity,
    cpu: formatCpu((cpuM - reservedCpuMillis(t.cpu)) as Millicores),
    'ephemeral-storage': '95551679124',
    memory: formatMemory((capMem - reservedMem) as Bytes),
  };
  const region = 'us-east-1';
  const labels: JsonObject = {
    'beta.kubernetes.io/arch': 'amd64',
    'beta.kubernetes.io/instance-type': t.name,
    'beta.kubernetes.io/os': 'linux',
    'eks.amazonaws.com/capacityType': unit(cluster.seedHash, shape.index, 7) < 0.2 ? 'SPOT' : 'ON_DEMAND',
    'eks.amazonaws.com/nodegroup': shape.gpu ? 'gpu' : `general-${t.name.replace('.', '-')}`,
    'failure-domain.beta.kubernetes.io/region': region,
    'failure-domain.beta.kubernetes.io/zone': shape.zone,
    'k8s.io/cloud-provider-aws': cluster.uid('cloud-provider', '').replace(/-/g, '').slice(0, 32),
    'kubernetes.io/arch': 'amd64',
    'kubernetes.io/hostname': shape.name,
    'kubernetes.io/os': 'linux',
    'node.kubernetes.io/instance-type': t.name,
    ...(shape.gpu ? { 'nvidia.com/gpu.present': 'true' } : {}),
    'topology.k8s.aws/zone-id': `use1-az${(shape.index % 3) + 1}`,
    'topology.kubernetes.io/region': region,
    'topology.kubernetes.io/zone': shape.zone,
  };
  const instanceId = `i-0${uuidFrom(cluster.name, cluster.seed, 'instance', shape.index).replace(/-/g, '').slice(0, 16)}`;
  const spec: JsonObject = { providerID: `aws:///${shape.zone}/${instanceId}` };
  if (shape.gpu) spec.taints = [GPU_TAINT];
  return {
    kind: 'Node',
    apiVersion: 'v1',
    metadata: {
      name: shape.name,
      uid: cluster.uid('nodes', shape.name),
      creationTimestamp: time,
      labels,
      annotations: {
        'alpha.kubernetes.io/provided-node-ip': shape.ip,
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
      },
    },
    spec,
    status: {
      capacity,
      allocatable,
      conditions: [
        condition(
          'MemoryPressure',
          'False',
          'KubeletHasSufficientMemory',
          'kubelet has sufficient memory available',
          time,
        ),
        condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure', time),
        condition(
          'PIDPressure',
          'False',
          'KubeletHasSufficientPID',
          'kubelet has sufficient PID available',
          time,
        ),
        condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status', time),
      ],
      addresses: [
        { type: 'InternalIP', address: shape.ip },
        { type: 'InternalDNS', address: shape.name },
        { type: 'Hostname', address: shape.name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: uuidFrom(cluster.name, 'machine', shape.index).replace(/-/g, ''),
        systemUUID: `ec2${uuidFrom(cluster.name, 'system', shape.index).slice(3)}`,
        bootID: uuidFrom(cluster.name, 'boot', shape.index),
        kernelVersion: '6.1.119-129.201.amzn2023.x86_64',
        osImage: 'Amazon Linux 2023.6.20250107',
        containerRuntimeVersion: 'containerd://1.7.25',
        kubeletVersion: `v${cluster.version.semver}-eks-3b2b1ad`,
        kubeProxyVersion: '',
        operatingSystem: 'linux',
        architecture: 'amd64',
      },
    },
  };
}

function normalizeNode(node: JsonObject): JsonObject {
  const out = orderTop(node);
  const spec = out.spec;
  if (isObject(spec))
    out.spec = orderKeys(spec, [
      'podCIDR',
      'podCIDRs',
      'providerID',
      'unschedulable',
      'taints',
      'configSource',
      'externalID',
    ]);
  const st = out.status;
  if (isObject(st)) {
    const s = orderKeys(st, NODE_STATUS_ORDER);
    if (isObject(s.capacity)) s.capacity = canonicalResourceList(s.capacity, 'Node');
    if (isObject(s.allocatable)) s.allocatable = canonicalResourceList(s.allocatable, 'Node');
    if (Array.isArray(s.conditions))
      s.conditions = s.conditions.map((c: Json) => (isObject(c) ? orderKeys(c, CONDITION_ORDER) : c));
    if (isObject(s.nodeInfo)) s.nodeInfo = orderKeys(s.nodeInfo, NODE_INFO_ORDER);
    out.status = s;
  }
  return out;
}

const EMPTY_NODE_INFO = Object.fromEntries(NODE_INFO_ORDER.map((k) => [k, '']));

export function nodeStrategy(): Strategy {
  return {
    nameRule: 'subdomain',
    prepareCreate(node) {
      const spec: JsonObject = isObject(node.spec) ? { ...node.spec } : {};
      const taints: Json[] = Array.isArray(spec.taints) ? [...spec.taints] : [];
      // TaintNodesByCondition admission: every new node starts not-ready until the node controller says otherwise.
      if (!taints.some((t) => t?.key === NOT_READY_TAINT.key && t?.effect === 'NoSchedule'))
        taints.push(clone(NOT_READY_TAINT));
      spec.taints = taints;
      node.spec = spec;
      const status: JsonObject = isObject(node.status) ? { ...node.status } : {};
      status.daemonEndpoints ??= { kubeletEndpoint: { Port: 0 } };
      status.nodeInfo = { ...EMPTY_NODE_INFO, ...(isObject(status.nodeInfo) ? status.nodeInfo : {}) };
      node.status = status;
    },
    prepareUpdate(node, old) {
      node.status = clone(old.status);
    },
    prepareStatusUpdate(node, old) {
      const status = node.status;
      for (const k of Object.keys(node)) delete node[k];
      Object.assign(node, clone(old));
      node.status = status;
      if (isObject(status))
        node.status.nodeInfo = { ...EMPTY_NODE_INFO, ...(isObject(status.nodeInfo) ? status.nodeInfo : {}) };
    },
    normalize: normalizeNode,
  };
}

/** Allocatable of a node in millicores and bytes (0 when not reported). */
export function nodeAllocatable(node: Json): { cpuM: number; mem: number; pods: number } {
  const a = node?.status?.allocatable ?? {};
  return { cpuM: amountOr0(a.cpu, 'cpu'), mem: amountOr0(a.memory, 'mem'), pods: Number(a.pods ?? 0) || 0 };
}

/** A cpu (millicores) or memory (bytes) quantity; 0 when absent or not a quantity. */
export function amountOr0(v: unknown, kind: 'cpu' | 'mem'): number {
  if (v === undefined || v === null) return 0;
  try {
    return kind === 'cpu' ? parseCpu(v as string) : parseMemory(v as string);
  } catch {
    return 0;
  }
}
