/**
 * sameRequests decides, every cycle and for every DaemonSet, whether the apply item is written again. It
 * compares without building strings; the reference here is the string comparison it replaced, and the
 * two must agree on every input, equal or not.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PodView } from '../../shared/cycle/views.js';
import {
  type PodRequests,
  podRequestsOf,
  samePodRequests,
  sameRequests,
} from '../../shared/nodescope/pod-requests.js';
import { collected } from './collected.js';
import { runningPodView } from './helpers.js';

/** The comparison as first written: every (node, container, cpu, memory) as text, sorted and joined. */
function reference(a: PodRequests | undefined, b: PodRequests): boolean {
  const flat = (r: PodRequests) =>
    Object.entries(r)
      .flatMap(([n, cs]) => Object.entries(cs).map(([c, x]) => `${n}/${c}=${x.cpu ?? ''},${x.memory ?? ''}`))
      .sort()
      .join(';');
  return flat(a ?? {}) === flat(b);
}

const amount = fc.option(fc.constantFrom(0, 1, 10, 250, 1_048_576), { nil: undefined });
const containers = fc.dictionary(
  fc.constantFrom('app', 'sidecar', 'proxy'),
  fc.record({ cpu: amount, memory: amount }, { requiredKeys: [] }),
  { maxKeys: 3 },
);
const requests = fc.dictionary(fc.constantFrom('n1', 'n2', 'n3', 'n4'), containers, { maxKeys: 4 });

describe('sameRequests', () => {
  it('agrees with the string comparison, on equal and unequal requests', () => {
    const seen = { same: 0, different: 0 };
    fc.assert(
      fc.property(requests, fc.oneof(requests, fc.constant(undefined)), fc.boolean(), (b, other, copy) => {
        // Half the time the stored side is a copy of b with its keys in another order.
        const a = copy ? Object.fromEntries(Object.entries(b).reverse()) : other;
        const want = reference(a, b);
        seen[want ? 'same' : 'different']++;
        expect(sameRequests(a, b)).toBe(want);
      }),
      { numRuns: 2000 },
    );
    expect(seen.same).toBeGreaterThan(100);
    expect(seen.different).toBeGreaterThan(100);
  });

  it('samePodRequests is sameRequests against the map built from the pods', () => {
    const seen = { same: 0, different: 0, changedAfterSame: 0 };
    const view = (cs: [string, number | undefined, number | undefined][]): PodView =>
      runningPodView({
        containers: cs.map(([name, reqCpu, reqMem]) => ({ name, reqCpu, reqMem, hasActual: false })),
      });
    const containers = fc.uniqueArray(fc.tuple(fc.constantFrom('app', 'sidecar', 'proxy'), amount, amount), {
      selector: (c) => c[0],
      maxLength: 3,
    });
    const pods = fc
      .dictionary(fc.constantFrom('n1', 'n2', 'n3', 'n4'), containers, { maxKeys: 4 })
      .map((d) => new Map(Object.entries(d).map(([n, cs]) => [n, view(cs)])));
    fc.assert(
      fc.property(pods, fc.oneof(requests, fc.constant(undefined)), fc.boolean(), (ps, other, copy) => {
        const stored = copy ? podRequestsOf(ps) : other;
        const want = sameRequests(stored, podRequestsOf(ps));
        seen[want ? 'same' : 'different']++;
        expect(samePodRequests(stored, ps)).toBe(want);
        // As the store hands it out (frozen, the same object each cycle): asked again, remembered.
        const shared = stored && freeze(structuredClone(stored));
        expect(samePodRequests(shared, ps)).toBe(want);
        expect(samePodRequests(shared, ps)).toBe(want);
        // A pod changed since (a new view): compared again, never taken for the remembered one.
        const [node, pod] = [...ps][0] ?? [];
        if (!node || !pod || pod.containers.length === 0) return;
        const changed = new Map(ps).set(node, {
          ...pod,
          containers: pod.containers.map((c) => ({ ...c, reqCpu: (c.reqCpu ?? 0) + 1 })),
        });
        if (want) seen.changedAfterSame++;
        expect(samePodRequests(shared, changed)).toBe(sameRequests(shared, podRequestsOf(changed)));
      }),
      { numRuns: 2000 },
    );
    expect(seen.same).toBeGreaterThan(100);
    expect(seen.different).toBeGreaterThan(100);
    expect(seen.changedAfterSame).toBeGreaterThan(50);
  });
});

describe('the pods found to request what is stored', () => {
  /** A pod view that counts how often its containers are read (what comparing it costs). */
  const counted = (reads: { n: number }, cpu: number): PodView => {
    const containers = [{ name: 'app', reqCpu: cpu, reqMem: 64, hasActual: false }];
    const v = runningPodView({ containers });
    return Object.defineProperty(v, 'containers', {
      get() {
        reads.n++;
        return containers;
      },
    });
  };

  const swapped = (pods: ReadonlyMap<string, PodView>) =>
    new Map([
      ['n1', pods.get('n2') as PodView],
      ['n2', pods.get('n1') as PodView],
    ]);

  it('are remembered without keeping a view alive once nothing else holds it', async () => {
    const stored: PodRequests = freeze({
      n1: { app: { cpu: 10, memory: 64 } },
      n2: { app: { cpu: 20, memory: 64 } },
    });
    const reads = { n: 0 };
    let pods: Map<string, PodView> | undefined = new Map([
      ['n1', counted(reads, 10)],
      ['n2', counted(reads, 20)],
    ]);
    const gone = new WeakRef(pods.get('n1') as PodView);
    expect(samePodRequests(stored, pods)).toBe(true);
    const compared = reads.n;
    expect(compared).toBeGreaterThan(0);
    // The same views again (a steady cycle): remembered, not compared again.
    expect(samePodRequests(stored, new Map(pods))).toBe(true);
    expect(reads.n).toBe(compared);
    // Half of them again, or a view in another node's place: compared again.
    expect(samePodRequests(stored, new Map([...pods].slice(0, 1)))).toBe(false);
    expect(samePodRequests(stored, swapped(pods))).toBe(false);
    expect(samePodRequests(stored, pods)).toBe(true);
    // The pods change (new views that request more): the stored value stays kept, the old views go.
    const changed = new Map([
      ['n1', counted(reads, 11)],
      ['n2', counted(reads, 20)],
    ]);
    expect(samePodRequests(stored, changed)).toBe(false);
    pods = undefined;
    expect(await collected(gone)).toBe(true);
    expect(samePodRequests(stored, changed)).toBe(false);
  });
});

/** Frozen through and through, as store.ts hands out the requests it unpacked. */
function freeze<T>(v: T): T {
  if (v && typeof v === 'object') {
    for (const x of Object.values(v)) freeze(x);
    Object.freeze(v);
  }
  return v;
}
