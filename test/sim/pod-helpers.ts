/**
 * Workload pods over real HTTP for simulator tests: build a pod manifest, create, read, resize and
 * delete it, create a PriorityClass, and summarise what a test asserts on (phase, node, conditions).
 */
import { expect } from 'vitest';
import type { SimCluster } from '../../local/sim/index.js';
import { raw } from './helpers.js';

// biome-ignore lint/suspicious/noExplicitAny: pods are JSON of arbitrary shape
type Json = any;

export interface WorkloadOptions {
  /** Bind to this node directly (skips the scheduler), as a static assignment would. */
  node?: string;
  cpu?: string;
  memory?: string;
  /** Limits; with limits equal to requests the pod is Guaranteed. */
  limits?: { cpu?: string; memory?: string };
  priorityClassName?: string;
  nodeSelector?: Record<string, string>;
  tolerations?: Json[];
  affinity?: Json;
  labels?: Record<string, string>;
}

/** An ordinary one-container pod (pause image) requesting `cpu`/`memory`. */
export function workloadPod(name: string, o: WorkloadOptions = {}): Json {
  const requests: Record<string, string> = {};
  if (o.cpu) requests.cpu = o.cpu;
  if (o.memory) requests.memory = o.memory;
  const resources: Json = { requests };
  if (o.limits) resources.limits = o.limits;
  const spec: Json = {
    containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10', resources }],
  };
  if (o.node) spec.nodeName = o.node;
  if (o.priorityClassName) spec.priorityClassName = o.priorityClassName;
  if (o.nodeSelector) spec.nodeSelector = o.nodeSelector;
  if (o.tolerations) spec.tolerations = o.tolerations;
  if (o.affinity) spec.affinity = o.affinity;
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: o.labels ?? { app: name } }, spec };
}

const podPath = (ns: string, name?: string) =>
  `/api/v1/namespaces/${ns}/pods${name === undefined ? '' : `/${name}`}`;

/** Creates a pod (201 expected) and returns it as stored after the controllers ran. */
export async function createPod(c: SimCluster, pod: Json, ns = 'default'): Promise<Json> {
  const r = await raw(c, 'POST', podPath(ns), { body: pod });
  expect(r.status, r.text).toBe(201);
  return getPod(c, pod.metadata.name, ns);
}

export async function getPod(c: SimCluster, name: string, ns = 'default'): Promise<Json> {
  const r = await raw(c, 'GET', podPath(ns, name));
  expect(r.status, r.text).toBe(200);
  return r.json;
}

/** Whether the pod exists (404 otherwise). */
export async function podExists(c: SimCluster, name: string, ns = 'default'): Promise<boolean> {
  return (await raw(c, 'GET', podPath(ns, name))).status === 200;
}

export async function deletePod(c: SimCluster, name: string, ns = 'default'): Promise<void> {
  const r = await raw(c, 'DELETE', podPath(ns, name));
  expect(r.status, r.text).toBe(200);
}

export async function listPods(c: SimCluster, ns: string, labelSelector?: string): Promise<Json[]> {
  const q = labelSelector ? `?labelSelector=${encodeURIComponent(labelSelector)}` : '';
  const r = await raw(c, 'GET', `${podPath(ns)}${q}`);
  expect(r.status, r.text).toBe(200);
  return r.json.items;
}

/** pods/resize with a strategic merge patch on container `app` (what kubectl --subresource resize sends). */
export async function resizePod(
  c: SimCluster,
  name: string,
  requests: Record<string, string>,
  limits?: Record<string, string>,
  ns = 'default',
  container = 'app',
): Promise<Json> {
  const resources: Json = { requests };
  if (limits) resources.limits = limits;
  const r = await raw(c, 'PATCH', `${podPath(ns, name)}/resize`, {
    body: { spec: { containers: [{ name: container, resources }] } },
    contentType: 'application/strategic-merge-patch+json',
  });
  expect(r.status, r.text).toBe(200);
  return r.json;
}

export async function createPriorityClass(
  c: SimCluster,
  name: string,
  value: number,
  preemptionPolicy: 'Never' | 'PreemptLowerPriority' = 'PreemptLowerPriority',
): Promise<void> {
  const r = await raw(c, 'POST', '/apis/scheduling.k8s.io/v1/priorityclasses', {
    body: {
      apiVersion: 'scheduling.k8s.io/v1',
      kind: 'PriorityClass',
      metadata: { name },
      value,
      preemptionPolicy,
    },
  });
  expect(r.status, r.text).toBe(201);
}

export interface PodView {
  phase: string;
  node?: string;
  /** type -> "status reason: message" (reason and message left out when empty). */
  conditions: Record<string, string>;
  cpu?: { spec?: string; allocated?: string; actual?: string };
}

/** What scheduler and kubelet tests assert on, in one comparable object. */
export function podView(pod: Json): PodView {
  const conditions: Record<string, string> = {};
  for (const c of pod.status?.conditions ?? []) {
    let s = String(c.status);
    if (c.reason) s += ` ${c.reason}`;
    if (c.message) s += `: ${c.message}`;
    conditions[c.type] = s;
  }
  const st = pod.status?.containerStatuses?.[0];
  return {
    phase: pod.status?.phase,
    node: pod.spec?.nodeName,
    conditions,
    cpu: {
      spec: pod.spec?.containers?.[0]?.resources?.requests?.cpu,
      allocated: st?.allocatedResources?.cpu,
      actual: st?.resources?.requests?.cpu,
    },
  };
}

/** The pod's PodScheduled / PodResizePending condition as "status reason: message", or undefined. */
export const condition = (pod: Json, type: string): string | undefined => podView(pod).conditions[type];
