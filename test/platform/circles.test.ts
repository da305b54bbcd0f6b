/**
 * No new import circle, and no new domain file that speaks to AWS itself (issue 32). A circle means no
 * file in it can be read, tested or replaced alone; a domain file importing the SDK means the next
 * engineer must know the table's shape to change the domain. The circles and files still on the lists
 * below are the ones left from before this rule: the lists only shrink (a list entry that no longer
 * holds fails too, so the list is trimmed as they go).
 */
import { describe, expect, it } from 'vitest';
import { circles, type Import, importGraph, moduleOf } from '../support/imports.js';

/** The circles still to be broken, each named by the folder it lives in and its modules. */
const KNOWN_CIRCLES: readonly (readonly string[])[] = [];

/** Domain files that still import the AWS SDK or platform/dynamo, until their store moves behind a port. */
const KNOWN_SDK_IMPORTERS: readonly string[] = [];

const GRAPH = importGraph(['shared', 'cli', 'infra', 'local', 'functions', 'bench', 'soak']);
const AWS = /^@aws-sdk\/|^@smithy\//;
/** An adapter is named for the AWS service it speaks (`s3.ts`, `secrets-kubeconfig-source.ts`, `*-dynamo.ts`). */
const ADAPTER = /(^|[/-])(dynamo|s3|secrets|sts)[^/]*\.ts$/;

const speaksAws = (i: Import) => (i.pkg && AWS.test(i.to)) || i.to === 'shared/platform/dynamo';
const sdkImporters = (graph: readonly Import[]) =>
  [...new Set(graph.filter(speaksAws).map((i) => i.from))]
    .filter((f) => f.startsWith('shared/') && !f.startsWith('shared/platform/') && !ADAPTER.test(f))
    .sort();
const within = (circle: readonly string[], known: readonly string[]) =>
  circle.every((m) => known.includes(m));

describe('import circles', () => {
  const found = circles(GRAPH);

  it('the detector finds a planted circle, type imports included', () => {
    const plant = (from: string, to: string, typeOnly = false): Import => ({
      from,
      to,
      pkg: false,
      typeOnly,
    });
    const graph = [
      plant('a/x.ts', 'a/y'),
      plant('a/y.ts', 'a/z', true),
      plant('a/z.ts', 'a/x'),
      plant('a/w.ts', 'a/x'),
    ];
    expect(circles(graph)).toEqual([['a/x', 'a/y', 'a/z']]);
    expect(GRAPH.length, 'the graph was read').toBeGreaterThan(500);
  });

  it('no circle but the ones still listed to be broken', () => {
    const fresh = found.filter((c) => !KNOWN_CIRCLES.some((k) => within(c, k)));
    expect(
      fresh,
      'a new import circle: break it (move the shared type or constant to a module of its own)',
    ).toEqual([]);
  });

  it('every listed circle still exists (trim the list once one is broken)', () => {
    const gone = KNOWN_CIRCLES.filter((k) => !found.some((c) => within(c, k)));
    expect(gone.map((k) => k[0])).toEqual([]);
  });
});

describe('the simulator: its parts stand below the cluster and the request handler', () => {
  /** Every module reachable from `from` over the graph's own imports. */
  const reach = (from: string): Set<string> => {
    const seen = new Set<string>();
    const next = [from];
    while (next.length) {
      const m = next.pop() as string;
      for (const i of GRAPH)
        if (!i.pkg && moduleOf(i.from) === m && !seen.has(i.to)) {
          seen.add(i.to);
          next.push(i.to);
        }
    }
    return seen;
  };
  const PARTS = ['kubelet', 'scheduler', 'daemonsets', 'events', 'metrics', 'crd', 'pods', 'nodes', 'rest'];

  it.each(PARTS)('local/sim/%s reaches neither local/sim/cluster nor local/sim/handler', (part) => {
    const reached = reach(`local/sim/${part}`);
    expect(reached.size).toBeGreaterThan(0);
    expect(['local/sim/cluster', 'local/sim/handler'].filter((m) => reached.has(m))).toEqual([]);
  });
});

describe('AWS stays in adapters', () => {
  it('no domain file in shared/ imports the AWS SDK or platform/dynamo but those still listed', () => {
    const found = sdkImporters(GRAPH);
    expect(GRAPH.some(speaksAws), 'the check sees the SDK at all: the adapters import it').toBe(true);
    expect(found.filter((f) => !KNOWN_SDK_IMPORTERS.includes(f))).toEqual([]);
    expect(
      KNOWN_SDK_IMPORTERS.filter((f) => !found.includes(f)),
      'trim the list',
    ).toEqual([]);
  });

  it('cluster access (shared/k8s) imports no AWS SDK: tokens come from a source it is handed', () => {
    expect(GRAPH.filter((i) => i.from.startsWith('shared/k8s/') && i.pkg && AWS.test(i.to))).toEqual([]);
  });

  it('no module imports both the Kubernetes client and an AWS SDK', () => {
    const files = new Map<string, Set<string>>();
    for (const i of GRAPH.filter((g) => g.pkg)) {
      const kind = AWS.test(i.to) ? 'aws' : i.to.startsWith('@kubernetes/') ? 'k8s' : undefined;
      if (kind) files.set(i.from, (files.get(i.from) ?? new Set()).add(kind));
    }
    expect([...files].filter(([, k]) => k.size === 2).map(([f]) => f)).toEqual([]);
  });
});
