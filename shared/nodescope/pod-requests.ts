/**
 * What each node's pod of a DaemonSet requests now, as the scheduler counts it (spec, allocated and
 * actual resources: a pod resized in place counts at its new size). Recorded by the cycle beside the
 * resize records, only when it changed, so every view reads "requests today" from the pods, not from
 * the DaemonSet's template.
 */
import { effectiveContainerRequests, type PodView } from '../cycle/views.js';
import type { Amounts } from './model.js';

/** Per node, per container: millicores and bytes. */
export type PodRequests = Record<string, Record<string, Amounts>>;

/**
 * The stored map's key order, for a stable item: by code unit (for node names, DNS labels in lowercase,
 * the order localeCompare gave, at a fraction of the cost; readers look nodes up by name).
 */
const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export function podRequestsOf(pods: ReadonlyMap<string, PodView>): PodRequests {
  const out: PodRequests = {};
  for (const node of [...pods.keys()].sort(byName)) {
    const perContainer: Record<string, Amounts> = {};
    for (const c of effectiveContainerRequests(pods.get(node) as PodView))
      perContainer[c.name] = { cpu: c.cpu, memory: c.memory };
    out[node] = perContainer;
  }
  return out;
}

/** One amount as the comparison reads it: absent and undefined alike, numbers as their text. */
const text = (v: number | undefined) => String(v ?? '');

/**
 * Equal node by node and container by container (a stored map's key order is not kept). A node without
 * containers counts as absent. Called for every DaemonSet every cycle: no strings are built for equal
 * numbers.
 */
export function sameRequests(a: PodRequests | undefined, b: PodRequests): boolean {
  const left = a ?? {};
  let pairs = 0;
  for (const node of Object.keys(b)) {
    const bs = b[node] as Record<string, Amounts>;
    const as = Object.hasOwn(left, node) ? left[node] : undefined;
    for (const c of Object.keys(bs)) {
      const x = as && Object.hasOwn(as, c) ? as[c] : undefined;
      const y = bs[c] as Amounts;
      if (!x) return false;
      if (x.cpu !== y.cpu && text(x.cpu) !== text(y.cpu)) return false;
      if (x.memory !== y.memory && text(x.memory) !== text(y.memory)) return false;
      pairs++;
    }
  }
  for (const node of Object.keys(left)) pairs -= Object.keys(left[node] as object).length;
  return pairs === 0;
}

/**
 * sameRequests(stored, podRequestsOf(pods)), without building the map: a cycle compares every
 * DaemonSet's pods with what is stored, and builds the map only to write it, when they differ.
 */
export function samePodRequests(
  stored: PodRequests | undefined,
  pods: ReadonlyMap<string, PodView>,
): boolean {
  if (stored && sameViews(foundEqual.get(stored), pods)) return true;
  const same = comparePodRequests(stored, pods);
  if (stored && same && Object.isFrozen(stored)) foundEqual.set(stored, new Map(pods));
  return same;
}

/**
 * The pods last found to request what a stored (frozen, shared between cycles: store.ts) value says:
 * the very same views again (a kept list's pods unchanged since) request the same, so a steady cycle
 * does not compare every pod again.
 */
const foundEqual = new WeakMap<PodRequests, ReadonlyMap<string, PodView>>();

function sameViews(a: ReadonlyMap<string, PodView> | undefined, b: ReadonlyMap<string, PodView>): boolean {
  if (!a || a.size !== b.size) return false;
  for (const [node, pod] of b) if (a.get(node) !== pod) return false;
  return true;
}

function comparePodRequests(stored: PodRequests | undefined, pods: ReadonlyMap<string, PodView>): boolean {
  const left = stored ?? {};
  let pairs = 0;
  for (const [node, pod] of pods) {
    const as = Object.hasOwn(left, node) ? left[node] : undefined;
    for (const y of effectiveContainerRequests(pod)) {
      const x = as && Object.hasOwn(as, y.name) ? as[y.name] : undefined;
      if (!x) return false;
      if (x.cpu !== y.cpu && text(x.cpu) !== text(y.cpu)) return false;
      if (x.memory !== y.memory && text(x.memory) !== text(y.memory)) return false;
      pairs++;
    }
  }
  for (const node of Object.keys(left)) pairs -= Object.keys(left[node] as object).length;
  return pairs === 0;
}
