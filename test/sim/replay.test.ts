/**
 * Fidelity replay: every exchange recorded from a real kube-apiserver 1.32.13 (test/fixtures/
 * apiserver-1.32.13, copied from the shared reference) is replayed in order against a fresh simulated cluster configured
 * like the recorded server (1.32.13, no controller-manager or kubelets, no metrics-server), and the
 * answers are compared: status codes, content types, Status bodies field by field, and object shapes
 * (key sets, recursively) with the stable values (kinds, names, resources, phases...) compared exactly.
 *
 * Run-specific values of the recording (resourceVersions, UIDs, continue tokens, generated volume
 * names) are mapped to the simulator's as they appear in responses, and request bodies and query
 * strings are rewritten with them.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

/** Keys whose values are compared exactly (the rest of an object is compared by shape). */
const VALUE_KEYS = new Set([
  'kind',
  'apiVersion',
  'name',
  'namespace',
  'phase',
  'qosClass',
  'resize',
  'image',
  'preemptionPolicy',
  'value',
  'groupVersion',
  'singularName',
  'namespaced',
  'gitVersion',
  'scope',
  'served',
  'storage',
  'type',
  'code',
  'reason',
  'remainingItemCount',
]);
const DEEP_VALUE_KEYS = new Set([
  'resources',
  'resizePolicy',
  'taints',
  'capacity',
  'allocatable',
  'labels',
  'verbs',
  'finalizers',
  'storedVersions',
]);
const isGenerated = (v: unknown) => typeof v === 'string' && v.startsWith('kube-api-access-');

// biome-ignore lint/suspicious/noExplicitAny: recorded JSON of arbitrary shape
type J = any;
const isObj = (v: unknown): v is Record<string, J> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function compare(rec: J, got: J, path: string, problems: string[]): void {
  if (isObj(rec)) {
    if (!isObj(got)) {
      problems.push(`${path}: expected an object, got ${JSON.stringify(got)?.slice(0, 80)}`);
      return;
    }
    const rk = Object.keys(rec);
    const gk = Object.keys(got);
    for (const k of rk) if (!(k in got)) problems.push(`${path}.${k}: missing`);
    for (const k of gk) if (!(k in rec)) problems.push(`${path}.${k}: unexpected`);
    for (const k of rk) {
      if (!(k in got) || k === 'managedFields') continue;
      const p = `${path}.${k}`;
      if (DEEP_VALUE_KEYS.has(k)) {
        if (JSON.stringify(normalizeGenerated(rec[k])) !== JSON.stringify(normalizeGenerated(got[k])))
          problems.push(`${p}: expected ${JSON.stringify(rec[k])}, got ${JSON.stringify(got[k])}`);
        continue;
      }
      if (VALUE_KEYS.has(k) && !isObj(rec[k]) && !Array.isArray(rec[k]) && !isGenerated(rec[k])) {
        if (rec[k] !== got[k])
          problems.push(`${p}: expected ${JSON.stringify(rec[k])}, got ${JSON.stringify(got[k])}`);
        continue;
      }
      compare(rec[k], got[k], p, problems);
    }
    return;
  }
  if (Array.isArray(rec)) {
    if (!Array.isArray(got)) {
      problems.push(`${path}: expected an array`);
      return;
    }
    if (rec.length === got.length) {
      rec.forEach((r: J, i: number) => {
        compare(r, got[i], `${path}[${i}]`, problems);
      });
      return;
    }
    // Different lengths (the recorded server's OpenShift admission adds a projected source): compare shapes.
    const union = (xs: J[]) =>
      Object.fromEntries(xs.filter(isObj).flatMap((x) => Object.keys(x).map((k) => [k, true])));
    const ru = Object.keys(union(rec)).sort();
    const gu = Object.keys(union(got)).sort();
    if (JSON.stringify(ru) !== JSON.stringify(gu))
      problems.push(`${path}: element keys ${gu.join(',')} instead of ${ru.join(',')}`);
  }
}

function normalizeGenerated(v: J): J {
  if (Array.isArray(v)) return v.map(normalizeGenerated);
  if (isObj(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, normalizeGenerated(x)]));
  return isGenerated(v) ? 'kube-api-access-*' : v;
}

function compareStatus(file: string, rec: J, got: J, problems: string[]): void {
  if (!isObj(got)) {
    problems.push(`body: expected a Status, got ${JSON.stringify(got)?.slice(0, 200)}`);
    return;
  }
  const firstLine = (s: unknown) => String(s).split('\n')[0];
  const msg = FIRST_LINE_ONLY[file] ? firstLine : (s: unknown) => s;
  for (const k of ['kind', 'apiVersion', 'status', 'reason', 'code'])
    if (rec[k] !== got[k])
      problems.push(`${k}: expected ${JSON.stringify(rec[k])}, got ${JSON.stringify(got[k])}`);
  if (JSON.stringify(rec.metadata) !== JSON.stringify(got.metadata))
    problems.push(`metadata: ${JSON.stringify(got.metadata)}`);
  if (msg(rec.message) !== msg(got.message))
    problems.push(
      `message:\n  expected ${JSON.stringify(msg(rec.message))}\n  got      ${JSON.stringify(msg(got.message))}`,
    );
  const details = (d: J) =>
    d === undefined
      ? undefined
      : { ...d, causes: d.causes?.map((c: J) => ({ ...c, message: msg(c.message) })) };
  if (JSON.stringify(details(rec.details)) !== JSON.stringify(details(got.details)))
    problems.push(
      `details:\n  expected ${JSON.stringify(details(rec.details))}\n  got      ${JSON.stringify(details(got.details))}`,
    );
}

describe('replay of the recorded kube-apiserver 1.32.13 exchanges', () => {
  let sim: Simulator;
  let cluster: SimCluster;
  /** Recorded run-specific values (resourceVersion, uid, continue, generated names) -> the simulator's. */
  const values = new Map<string, string>();

  const learn = (rec: J, got: J) => {
    if (isObj(rec) && isObj(got)) {
      for (const k of Object.keys(rec)) {
        const r = rec[k];
        const g = got[k];
        if (
          typeof r === 'string' &&
          typeof g === 'string' &&
          r &&
          g &&
          (['resourceVersion', 'uid', 'continue'].includes(k) || isGenerated(r))
        )
          values.set(`${k === 'continue' ? 'continue' : isGenerated(r) ? 'gen' : k}:${r}`, g);
        else learn(r, g);
      }
    } else if (Array.isArray(rec) && Array.isArray(got) && rec.length === got.length) {
      rec.forEach((r: J, i: number) => {
        learn(r, got[i]);
      });
    }
  };

  const rewriteBody = (b: J): J => {
    if (Array.isArray(b)) return b.map(rewriteBody);
    if (!isObj(b)) return isGenerated(b) ? (values.get(`gen:${b}`) ?? b) : b;
    const out: J = {};
    for (const [k, v] of Object.entries(b)) {
      if (k === 'managedFields') continue;
      if ((k === 'resourceVersion' || k === 'uid') && typeof v === 'string')
        out[k] = values.get(`${k}:${v}`) ?? `unknown:${v}`;
      // The recorded server (OpenShift-vendored) adds an openshift-service-ca.crt projected source; ours does not.
      else if (k === 'sources' && Array.isArray(v))
        out[k] = v.filter((s: J) => s?.configMap?.name !== 'openshift-service-ca.crt').map(rewriteBody);
      else out[k] = rewriteBody(v);
    }
    return out;
  };

  const rewritePath = (p: string): string => {
    const u = new URL(p, 'https://x');
    for (const key of ['resourceVersion', 'continue']) {
      const v = u.searchParams.get(key);
      if (v && v !== '0') u.searchParams.set(key, values.get(`${key}:${v}`) ?? v);
    }
    return u.pathname + u.search;
  };

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
        ex.request.body === null || ex.request.body === undefined ? undefined : rewriteBody(ex.request.body);
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
      const path = rewritePath(ex.request.path);
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
          compare(e.object, events[i]?.object, `event[${i}].object`, problems);
        });
      } else if (typeof ex.body === 'string') {
        if (res.text !== ex.body)
          problems.push(`body ${JSON.stringify(res.text)}, recorded ${JSON.stringify(ex.body)}`);
      } else if (isObj(ex.body) && ex.body.kind === 'Status') {
        compareStatus(entry.file, ex.body, res.json, problems);
      } else {
        compare(ex.body, res.json, 'body', problems);
        learn(ex.body, res.json);
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
