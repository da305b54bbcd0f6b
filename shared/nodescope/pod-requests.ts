/**
 * What each node's pod of a DaemonSet requests now, as the scheduler counts it (spec, allocated and
 * actual resources: a pod resized in place counts at its new size). Recorded by the cycle beside the
 * resize records, only when it changed, so every view reads "requests today" from the pods, not from
 * the DaemonSet's template.
 */
import { createHash } from 'node:crypto';
import { effectiveContainerRequests, type PodView } from '../cycle/views.js';
import { KeptBudget, type KeptEntry, keptBudgetBytes, processKept } from './kept-budget.js';
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
  if (stored && same && Object.isFrozen(stored)) {
    const found: FoundEqual = { pods: pods.size };
    foundEqual.set(stored, found);
    for (const [node, pod] of pods) foundWith.set(pod, { found, node });
  }
  return same;
}

/**
 * The pods last found to request what a stored (frozen, shared between cycles: KeptRequests) value
 * says: the very same views again (a kept list's pods unchanged since) request the same, so a steady
 * cycle does not compare every pod again. Kept on the views, weakly, and on the stored value, as a
 * token that holds neither: a view the kept lists let go of is not kept alive by a value still kept.
 */
interface FoundEqual {
  /** How many pods were found equal (every one is marked with this token). */
  pods: number;
}
const foundEqual = new WeakMap<PodRequests, FoundEqual>();
const foundWith = new WeakMap<PodView, { found: FoundEqual; node: string }>();

/** The same (node, view) pairs as those last found equal: as many, each marked with that very token. */
function sameViews(found: FoundEqual | undefined, pods: ReadonlyMap<string, PodView>): boolean {
  if (!found || found.pods !== pods.size) return false;
  for (const [node, pod] of pods) {
    const mark = foundWith.get(pod);
    if (mark?.found !== found || mark.node !== node) return false;
  }
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

/**
 * The apply items' requests unpacked (store-dynamo.ts), by their packed bytes: a steady cycle reads every
 * DaemonSet's apply item and finds the same bytes, so it parses them once per process, not every cycle;
 * what the process writes is kept too, as the next cycle reads it back. Checked on content (equal
 * bytes, equal requests), so nothing stale can come out. Frozen: shared between cycles. Under the heap
 * budget shared with the bases (kept-budget.ts), each counted at twice its JSON's length plus the
 * packed bytes kept to check against (JSON.parse of 1,000 and 5,000 nodes' requests measured 1.4-1.5
 * times the JSON's length, Node 24): 5,000 nodes' requests are about 1.2 MB.
 */
export class KeptRequests {
  private readonly entries = new Map<string, RequestsEntry>();
  /** Unpacked requests found, and not found (counted for tests). */
  readonly stats = { hits: 0, misses: 0 };

  /** @param budget shared with the process's other copies by default; a test gives its own. */
  constructor(readonly budget: KeptBudget = new KeptBudget(keptBudgetBytes())) {}

  get(z: Uint8Array): PodRequests | undefined {
    const e = this.entries.get(digestOf(z));
    if (!e?.z.equals(z)) {
      this.stats.misses++;
      return undefined;
    }
    this.stats.hits++;
    this.budget.touch(e);
    return e.requests;
  }

  /** Keeps what `z` unpacks to (`json` bytes of JSON), frozen; returns it. */
  keep(z: Uint8Array, requests: PodRequests, json: number): PodRequests {
    const copy = Buffer.from(z);
    const key = digestOf(copy);
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.budget.release(old);
    }
    const entry: RequestsEntry = {
      z: copy,
      requests: deepFreeze(requests),
      bytes: 2 * json + copy.length,
      evicted: () => {
        if (this.entries.get(key) === entry) this.entries.delete(key);
      },
    };
    if (this.budget.admit(entry)) this.entries.set(key, entry);
    return entry.requests;
  }
}

interface RequestsEntry extends KeptEntry {
  z: Buffer;
  requests: PodRequests;
}

const digestOf = (z: Uint8Array) => createHash('sha1').update(z).digest('base64');

function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object') {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

/** The process's unpacked requests, under the process's budget. */
export const processRequests = new KeptRequests(processKept);
