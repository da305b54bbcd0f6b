/**
 * No import circle, and no domain file that speaks to AWS itself (issue 32). A circle means no file in
 * it can be read, tested or replaced alone; a domain file importing the SDK means the next engineer
 * must know the table's shape to change the domain. Both lists of what was left from before this rule
 * are gone: every circle is broken and every capability's store is behind a port, so any new one fails.
 * The detectors are checked on planted graphs too, so that a check that found nothing is not mistaken
 * for a repository with nothing to find.
 */
import { describe, expect, it } from 'vitest';
import { circles, type Import, importGraph, moduleOf } from '../support/imports.js';

const GRAPH = importGraph(['shared', 'cli', 'infra', 'local', 'functions', 'bench', 'soak']);
const AWS = /^@aws-sdk\/|^@smithy\//;
/** An adapter is named for the AWS service it speaks (`s3.ts`, `secrets-kubeconfig-source.ts`, `*-dynamo.ts`). */
const ADAPTER = /(^|[/-])(dynamo|s3|secrets|sts)[^/]*\.ts$/;

const speaksAws = (i: Import) => (i.pkg && AWS.test(i.to)) || i.to === 'shared/platform/dynamo';
const sdkImporters = (graph: readonly Import[]) =>
  [...new Set(graph.filter(speaksAws).map((i) => i.from))]
    .filter((f) => f.startsWith('shared/') && !f.startsWith('shared/platform/') && !ADAPTER.test(f))
    .sort();
const plant = (from: string, to: string, opts: { pkg?: boolean; typeOnly?: boolean } = {}): Import => ({
  from,
  to,
  pkg: opts.pkg ?? false,
  typeOnly: opts.typeOnly ?? false,
});

describe('import circles', () => {
  const found = circles(GRAPH);

  it('the detector finds a planted circle, type imports included', () => {
    const graph = [
      plant('a/x.ts', 'a/y'),
      plant('a/y.ts', 'a/z', { typeOnly: true }),
      plant('a/z.ts', 'a/x'),
      plant('a/w.ts', 'a/x'),
    ];
    expect(circles(graph)).toEqual([['a/x', 'a/y', 'a/z']]);
    expect(GRAPH.length, 'the graph was read').toBeGreaterThan(500);
  });

  it('no import circle', () => {
    expect(
      found,
      'a new import circle: break it (move the shared type or constant to a module of its own)',
    ).toEqual([]);
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
  it('the detector finds a planted domain importer, and lets adapters and the platform be', () => {
    const graph = [
      plant('shared/cap/logic.ts', '@aws-sdk/lib-dynamodb', { pkg: true, typeOnly: true }),
      plant('shared/cap/model.ts', 'shared/platform/dynamo'),
      plant('shared/cap/store-dynamo.ts', '@aws-sdk/lib-dynamodb', { pkg: true }),
      plant('shared/platform/dynamo.ts', '@aws-sdk/lib-dynamodb', { pkg: true }),
      plant('cli/commands/x.ts', '@aws-sdk/client-sts', { pkg: true }),
    ];
    expect(sdkImporters(graph)).toEqual(['shared/cap/logic.ts', 'shared/cap/model.ts']);
  });

  it('no domain file in shared/ imports the AWS SDK or platform/dynamo: only adapters and the platform', () => {
    expect(GRAPH.some(speaksAws), 'the check sees the SDK at all: the adapters import it').toBe(true);
    expect(
      sdkImporters(GRAPH),
      'put the store behind a port: the domain takes the port, the adapter (*-dynamo.ts) speaks DynamoDB',
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
