/**
 * Fidelity replay: every exchange recorded from a real kube-apiserver 1.32.13 (test/fixtures/
 * apiserver-1.32.13, copied from the shared reference) is replayed in order against a fresh simulated cluster configured
 * like the recorded server (1.32.13, no controller-manager or kubelets, no metrics-server), and the
 * answers are compared by the comparison `npm run fidelity` uses (local/fidelity/compare.ts): status
 * codes, content types, Status bodies field by field, and object shapes (key sets, recursively) with the
 * stable values (kinds, names, resources, phases...) compared exactly; the recorded server is the real one.
 *
 * Run-specific values of the recording (resourceVersions, UIDs, continue tokens, generated volume
 * names) are mapped to the simulator's as they appear in responses (local/fidelity/values.ts), and
 * request bodies and query strings are rewritten with them.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareShapes, compareStatus, isObj, type J } from '../../local/fidelity/compare.js';
import { Values } from '../../local/fidelity/values.js';
import { type SimCluster, type Simulator, startSimulator } from '../../local/sim/index.js';
import { type RawResponse, raw } from './helpers.js';

const REF_DIR = new URL('../fixtures/apiserver-1.32.13/', import.meta.url);

interface Exchange {
  request: { method: string; path: string; body: unknown; contentType?: string };
  status: number;
  headers: Record<string, string>;
  body: unknown;
}
interface IndexEntry {
  file: string;
  method: string;
  path: string;
  status: number;
  note: string;
}

const index: IndexEntry[] = JSON.parse(readFileSync(new URL('index.json', REF_DIR), 'utf8'));
const load = (file: string): Exchange => JSON.parse(readFileSync(new URL(file, REF_DIR), 'utf8'));

/**
 * Requests the recording made without saving them. Later exchanges show their effect, so they are
 * replayed first (before the named exchange).
 */
const INTERSTITIAL: Record<
  string,
  { method: string; path: string; body?: unknown; contentType?: string; why: string }[]
> = {
  '08i-clusterproperty-list-v1alpha1.json': [
    {
      method: 'DELETE',
      path: '/apis/about.k8s.io/v1alpha1/clusterproperties/big.example.com',
      why: 'the list (at revision 107, one after the 128001-character create) no longer contains big.example.com',
    },
  ],
  '10a-watch-pods-from-rv.json': [
    {
      method: 'PATCH',
      path: '/api/v1/namespaces/kube-system/pods/resize-burstable',
      body: { metadata: { labels: { rev: 'stale', watched: 'yes' } } },
      contentType: 'application/merge-patch+json',
      why: 'the watch from revision 115 shows a MODIFIED event with labels rev=stale and watched=yes',
    },
  ],
};

/**
 * Messages compared up to their first line: the real server appends a go-cmp dump of its internal Go
 * structs (core.PodSpec) after the first line; the simulator appends a shorter diff of its own.
 */
const FIRST_LINE_ONLY: Record<string, string> = {
  '04h-resize-invalid-ephemeral-storage.json': 'message ends with a go-cmp dump of core.PodSpec',
  '04q-pod-patch-resources-without-resize-subresource.json':
    'message ends with a go-cmp dump of core.PodSpec',
};

/** Exchanges the simulator does not match, with the reason. There are none. */
const NOT_MATCHED: Record<string, string> = {};

/** The recorded server (OpenShift's build) adds an openshift-service-ca.crt projected source; ours does not. */
function withoutOpenShiftSources(b: J): J {
  if (Array.isArray(b)) return b.map(withoutOpenShiftSources);
  if (!isObj(b)) return b;
  return Object.fromEntries(
    Object.entries(b).map(([k, v]) => [
      k,
      k === 'sources' && Array.isArray(v)
        ? v.filter((x: J) => x?.configMap?.name !== 'openshift-service-ca.crt').map(withoutOpenShiftSources)
        : withoutOpenShiftSources(v),
    ]),
  );
}

describe('replay of the recorded kube-apiserver 1.32.13 exchanges', () => {
  let sim: Simulator;
  let cluster: SimCluster;
  /** Recorded run-specific values (resourceVersion, uid, continue, generated names) -> the simulator's. */
  const values = new Values();

  beforeAll(async () => {
    sim = await startSimulator({
      clusters: [
        {
          name: 'recorded',
          nodes: 0,
          kubernetesVersion: '1.32.13',
          controllers: false,
          metricsApi: 'absent',
        },
      ],
    });
    cluster = sim.cluster('recorded');
  });
  afterAll(async () => {
    await sim?.stop();
  });

  it('has the recordings beside the repository', () => {
    expect(index.length).toBeGreaterThan(60);
  });

  for (const entry of index) {
    it(`${entry.file}: ${entry.method} ${entry.path} -> ${entry.status} (${entry.note})`, async () => {
      const ex = load(entry.file);
      for (const step of INTERSTITIAL[entry.file] ?? []) {
        const r = await raw(cluster, step.method, step.path, {
          body: step.body,
          contentType: step.contentType,
        });
        expect(r.status, `unrecorded step ${step.method} ${step.path} (${step.why})`).toBeLessThan(300);
      }
      let body =
        ex.request.body === null || ex.request.body === undefined
          ? undefined
          : values.rewriteBody(withoutOpenShiftSources(ex.request.body));
      // A resourceVersion the responses never showed (bumped by the recorded server's own controllers):
      // the recorded request succeeded, so it was the object's current one.
      if (
        isObj(body) &&
        typeof body.metadata?.resourceVersion === 'string' &&
        body.metadata.resourceVersion.startsWith('unknown:')
      ) {
        const current = await raw(cluster, 'GET', ex.request.path);
        body = {
          ...body,
          metadata: { ...body.metadata, resourceVersion: current.json?.metadata?.resourceVersion },
        };
      }
      if (isObj(body) && typeof body.metadata?.uid === 'string' && body.metadata.uid.startsWith('unknown:'))
        delete body.metadata.uid;
      const path = values.rewritePath(ex.request.path);
      const res: RawResponse = await raw(cluster, ex.request.method, path, {
        body,
        contentType: ex.request.contentType,
        timeoutMs: 10_000,
      });
      const problems: string[] = [];
      if (res.status !== ex.status)
        problems.push(`status ${res.status}, recorded ${ex.status}: ${res.text.slice(0, 300)}`);
      const recType = String(ex.headers['content-type']).split(';')[0];
      const gotType = String(res.headers['content-type']).split(';')[0];
      if (recType !== gotType) problems.push(`content-type ${gotType}, recorded ${recType}`);
      if (ex.headers.warning !== undefined && res.headers.warning === undefined)
        problems.push('missing Warning header');
      if (Array.isArray(ex.body)) {
        // A watch: newline-delimited events.
        const events = res.text
          .split('\n')
          .filter((l) => l.trim())
          .map((l) => JSON.parse(l));
        if (events.length !== ex.body.length)
          problems.push(`${events.length} watch events, recorded ${ex.body.length}`);
        ex.body.forEach((e: J, i: number) => {
          if (events[i]?.type !== e.type)
            problems.push(`event ${i}: type ${events[i]?.type}, recorded ${e.type}`);
          compareShapes(events[i]?.object, e.object, `event[${i}].object`, problems);
        });
      } else if (typeof ex.body === 'string') {
        if (res.text !== ex.body)
          problems.push(`body ${JSON.stringify(res.text)}, recorded ${JSON.stringify(ex.body)}`);
      } else if (isObj(ex.body) && ex.body.kind === 'Status') {
        compareStatus(res.json, ex.body, problems, { wholeMessages: !FIRST_LINE_ONLY[entry.file] });
      } else {
        compareShapes(res.json, ex.body, 'body', problems);
        values.learn(ex.body, res.json);
      }
      if (NOT_MATCHED[entry.file]) {
        expect(
          problems.length,
          `listed as not matched (${NOT_MATCHED[entry.file]}) but now matches`,
        ).toBeGreaterThan(0);
        return;
      }
      expect(problems, problems.join('\n')).toEqual([]);
    });
  }
});
