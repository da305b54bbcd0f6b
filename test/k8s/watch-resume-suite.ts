/**
 * Taking a list up from an earlier read, as one suite run over the simulator (watch-resume.sim.test.ts)
 * and over the real kube-apiserver 1.33 and 1.36 (watch-resume.real.test.ts), which is the judge: a
 * watch from the kept resourceVersion brings every change since (adds, modifies, deletes) and the kept
 * views equal a fresh list; bookmarks arrive once the server's revision for the resource has moved past
 * where the watch began, 2 s before its timeout; once the history is out of the watch cache's reach
 * (more than ~100 events and 75 s later) the watch answers an ERROR event with a 410 Expired Status, and
 * the read falls back to a full list that has every change.
 */
import https from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { KeptList, KeptListSpec } from '../../shared/cycle/kept-lists.js';
import { followKeptList, readKeptList } from '../../shared/cycle/resume.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import { RawReader } from '../../shared/k8s/raw-reader.js';

const NS = 'watch-resume';
const path = (name = '') => `/api/v1/namespaces/${NS}/configmaps${name ? `/${name}` : ''}`;

interface ConfigMap {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
  data?: Record<string, string>;
}

/** The configmaps labelled `set=<set>`, as a kept list. */
const specOf = (set: string): KeptListSpec<ConfigMap, string> => ({
  operation: 'list configmaps',
  path: path(),
  query: { labelSelector: `set=${set}` },
  pageSize: 4,
  keyOf: (c) => c.metadata?.name,
  view: (c) => c.data?.v ?? '',
});
const spec = specOf('kept');
/** The 410 case's own objects: its history ages while the other cases run (their changes are not its). */
const aging = specOf('aging');
const AGING = { set: 'aging' };

export interface ResumeTarget {
  kubeconfig: string;
  cluster: string;
  /** Lets `ms` pass on the server's clock (the simulator's manual one; a real server's wall time). */
  pass(ms: number): Promise<void>;
  /** The server's clock now, in ms (what `pass` moves). */
  now(): number;
  /** The server's minor version (a bookmark's shape differs). */
  minor: number;
}

async function admin(kubeconfig: string) {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfig);
  const opts: https.RequestOptions & { headers?: Record<string, string> } = { headers: {} };
  await kc.applyToHTTPSOptions(opts);
  const base = new URL(kc.getCurrentCluster()?.server ?? '');
  return (method: string, p: string, body?: unknown) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const b = body === undefined ? undefined : JSON.stringify(body);
      const req = https.request(
        new URL(p, base),
        {
          method,
          ca: opts.ca,
          cert: opts.cert,
          key: opts.key,
          headers: {
            ...(opts.headers as Record<string, string>),
            accept: 'application/json',
            ...(b ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(b) } : {}),
          },
        },
        (res) => {
          let text = '';
          res.on('data', (d) => {
            text += d;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      req.end(b);
    });
}

/**
 * `expiry: false` leaves out the 410 case, which on a real server waits out the watch cache's 75 s: one
 * version's wait is enough to judge it.
 */
export function watchResumeSuite(target: () => ResumeTarget, opts: { expiry?: boolean } = {}): void {
  let send: Awaited<ReturnType<typeof admin>>;
  let client: ClusterClient;
  const put = async (name: string, v: string, labels = { set: 'kept' }) => {
    const got = await send('GET', path(name));
    const body = { metadata: { name, labels }, data: { v } };
    const r = got.status === 404 ? await send('POST', path(), body) : await send('PUT', path(name), body);
    if (r.status >= 300) throw new Error(`write ${name}: ${r.status} ${r.text}`);
  };
  const del = async (name: string) => {
    const r = await send('DELETE', path(name));
    if (r.status >= 300) throw new Error(`delete ${name}: ${r.status} ${r.text}`);
  };
  /** What a fresh full list holds now: name -> value. */
  const fresh = async (of = spec) => {
    const r = await readKeptList(new RawReader(client), of, undefined, async () => undefined);
    return r.list;
  };
  const expiry = opts.expiry ?? true;
  /** The 410 case's reads and changes, made before the other cases so its 75 s wait overlaps them. */
  let aged: { kept: KeptList<string>; followed: KeptList<string>; at: number } | undefined;
  const asObject = (l: KeptList<string>) => Object.fromEntries(l.items);

  beforeAll(async () => {
    const t = target();
    send = await admin(t.kubeconfig);
    client = ClusterClient.fromKubeconfig(t.kubeconfig, { cluster: t.cluster });
    await send('POST', '/api/v1/namespaces', { metadata: { name: NS } });
    for (let i = 0; i < 6; i++) await put(`cm-${i}`, `v${i}`);
    if (!expiry) return;
    for (let i = 0; i < 6; i++) await put(`ag-${i}`, `v${i}`, AGING);
    const kept = await fresh(aging);
    const followed = await fresh(aging);
    await put('ag-late', 'late', AGING);
    await put('ag-3', 'changed late', AGING);
    await del('ag-4');
    aged = { kept, followed, at: target().now() };
  }, 120_000);
  afterAll(async () => {
    await client?.close();
  });

  it('a resumed watch brings every change since the kept read: adds, modifies, deletes', async () => {
    const cold = await fresh();
    expect(cold.items.size).toBe(6);
    await put('cm-new-a', 'a');
    await put('cm-new-b', 'b');
    await put('cm-1', 'changed');
    await del('cm-2');
    // A change outside the selection moves the revision on without being the kept list's business.
    await put('other', 'x', { set: 'other' });
    const reader = new RawReader(client);
    const revision = async () =>
      JSON.parse((await send('GET', `${path()}?limit=1`)).text).metadata.resourceVersion;
    const r = await readKeptList(reader, spec, cold, revision);
    expect(r.read).toMatchObject({ how: 'resumed', changes: 4 });
    expect(asObject(r.list)).toEqual(asObject(await fresh()));
    expect(r.list.items.has('cm-2')).toBe(false);
    expect(r.list.items.get('cm-1')).toBe('changed');
    // Read: one watch, which carried the four changes and nothing of the list's other objects.
    expect(reader.stats.byOperation).toEqual({ 'list configmaps (changes)': 1 });
    const again = await readKeptList(reader, spec, r.list, revision);
    expect(again.read).toMatchObject({ how: 'resumed', changes: 0 });
  });

  it('an object whose labels take it out of the selection is DELETED (as it was, at the change), one taken in is ADDED', async () => {
    await put('cm-leaves', 'l');
    await put('cm-enters', 'e', { set: 'other' });
    const kept = await fresh();
    expect(kept.items.has('cm-leaves')).toBe(true);
    await put('cm-leaves', 'l2', { set: 'other' });
    await put('cm-enters', 'e2');
    const at = async (name: string) =>
      JSON.parse((await send('GET', path(name))).text).metadata.resourceVersion as string;
    const [left, entered] = [await at('cm-leaves'), await at('cm-enters')];
    const w = await send(
      'GET',
      `${path()}?watch=1&labelSelector=set%3Dkept&resourceVersion=${kept.rv}&timeoutSeconds=1`,
    );
    const lines = w.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.type, l.object.metadata.name, l.object.metadata.resourceVersion])).toEqual([
      ['DELETED', 'cm-leaves', left],
      ['ADDED', 'cm-enters', entered],
    ]);
    // The object as it was before the change (still selected), at the change's revision.
    expect(lines[0].object.metadata.labels).toEqual({ set: 'kept' });
    expect(lines[0].object.data).toEqual({ v: 'l' });
    const r = await readKeptList(new RawReader(client), spec, kept, async () => entered);
    expect(r.read).toMatchObject({ how: 'resumed', changes: 2, end: 'reached' });
    expect(asObject(r.list)).toEqual(asObject(await fresh()));
    expect(r.list.items.has('cm-leaves')).toBe(false);
    expect(r.list.items.get('cm-enters')).toBe('e2');
  });

  it('bookmarks arrive once the revision moved past where the watch began, 2 s before its timeout', async () => {
    const start = await fresh();
    const reader = new RawReader(client);
    const events: string[] = [];
    setTimeout(() => void put('cm-0', 'during the watch'), 300);
    const w = await reader.watch<ConfigMap>(
      'watch configmaps',
      path(),
      { labelSelector: 'set=kept' },
      (type, o) => events.push(`${type} ${o.metadata?.name}`),
      { from: start.rv, timeoutSeconds: 4 },
    );
    expect(events).toEqual(['MODIFIED cm-0']);
    expect(w.bookmarks).toBeGreaterThanOrEqual(1);
    expect(w.end).toBe('closed');
    const now = JSON.parse((await send('GET', path('cm-0'))).text).metadata.resourceVersion;
    expect(w.rv).toBe(now);
  });

  it('a bookmark carries the kind and the revision only (1.33: with an empty creationTimestamp)', async () => {
    const from = (await fresh()).rv;
    setTimeout(() => void put('cm-5', 'for a bookmark'), 300);
    const w = await send(
      'GET',
      `${path()}?watch=1&resourceVersion=${from}&allowWatchBookmarks=true&timeoutSeconds=4`,
    );
    const lines = w.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const changed = JSON.parse((await send('GET', path('cm-5'))).text).metadata.resourceVersion;
    // The change, then one bookmark (1.36 was seen to send a second within the same second, its timer
    // being jittered): each carries the kind and the revision only.
    const [first, ...bookmarks] = lines;
    expect(first.type).toBe('MODIFIED');
    expect(bookmarks.length).toBeGreaterThanOrEqual(1);
    for (const b of bookmarks)
      expect(b).toEqual({
        type: 'BOOKMARK',
        object: {
          kind: 'ConfigMap',
          apiVersion: 'v1',
          metadata: { resourceVersion: changed, ...(target().minor < 35 ? { creationTimestamp: null } : {}) },
        },
      });
  });

  it('a follow moves a list none of whose objects changed on only with a bookmark, sent once a change reached the cache during the watch; from there nothing is lost', async () => {
    const kept = await fresh();
    const before = kept.rv;
    for (let i = 0; i < 3; i++) await put('filler-f', `f${i}`, { set: 'filler' });
    // The watch cache has them before the follow starts: under load it lags etcd, and changes that reach
    // it during the follow's watch bring a bookmark (a real server did so in a loaded CI run).
    const fillers = await send(
      'GET',
      `${path()}?watch=1&resourceVersion=${before}&labelSelector=${encodeURIComponent('set=filler')}&timeoutSeconds=1`,
    );
    expect(fillers.text.trim().split('\n')).toHaveLength(3);
    const reader = new RawReader(client);
    // Changes since, but none while the follow watches: no bookmark (the cache's revision has not passed
    // the last event it handed this watch, filtered out or not), and the list stays where it was.
    const still = await followKeptList(reader, kept, undefined);
    expect(still.read).toMatchObject({ how: 'resumed', changes: 0, bookmarks: 0, end: 'closed', rv: before });
    // A change of another object while it watches: the bookmark carries the cache's revision, that change's.
    setTimeout(() => void put('filler-f', 'during', { set: 'filler' }), 300);
    const moved = await followKeptList(reader, kept, undefined);
    const during = JSON.parse((await send('GET', path('filler-f'))).text).metadata.resourceVersion;
    expect(moved.read).toMatchObject({
      how: 'resumed',
      changes: 0,
      bookmarks: 1,
      end: 'bookmark',
      rv: during,
    });
    // Every change of the selection after the bookmark's revision comes to the next follow.
    await put('cm-0', 'after the move');
    await del('cm-new-a');
    const next = await followKeptList(reader, kept, undefined);
    expect(next.read).toMatchObject({ how: 'resumed', changes: 2 });
    expect(asObject(kept)).toEqual(asObject(await fresh()));
  });

  // Not registered (rather than skipped) where the caller judges it on another version.
  const expiryIt = expiry ? it : () => undefined;
  expiryIt(
    'history beyond the watch cache is 410 Expired, and the read lists in full with no change lost; a list a follow moved on just before is still in reach',
    async () => {
      if (!aged) throw new Error('the 410 case was not set up (beforeAll)');
      const { kept, followed } = aged;
      const from = kept.rv;
      // Out of the watch cache's reach: older than 75 s and pushed out by more than 100 newer events.
      // The other cases' time counts toward the 75 s (on a real server, their wall time).
      await target().pass(Math.max(0, 76_000 - (target().now() - aged.at)));
      // A follow now, with a change during its watch: its bookmark moves the list on to a fresh event.
      setTimeout(() => void put('filler-f', 'just before', { set: 'filler' }), 300);
      const moved = await followKeptList(new RawReader(client), followed, undefined);
      expect(moved.read).toMatchObject({ how: 'resumed', changes: 3, end: 'bookmark' });
      for (let i = 0; i < 130; i++) await put('filler', `f${i}`, { set: 'filler' });
      const watch = await send('GET', `${path()}?watch=1&resourceVersion=${from}&timeoutSeconds=2`);
      expect(watch.status).toBe(200);
      const lines = watch.text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({
        type: 'ERROR',
        object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410 },
      });
      expect(lines[0].object.message).toMatch(new RegExp(`^too old resource version: ${from} \\(\\d+\\)$`));
      const r = await readKeptList(new RawReader(client), aging, kept, async () => undefined);
      expect(r.read).toEqual({ how: 'listed', why: 'expired' });
      expect(asObject(r.list)).toEqual(asObject(await fresh(aging)));
      expect(r.list.items.get('ag-late')).toBe('late');
      expect(r.list.items.get('ag-3')).toBe('changed late');
      expect(r.list.items.has('ag-4')).toBe(false);
      // The list moved on 75 s later: its revision's event is younger than 75 s, the cache grew for it.
      const resumed = await readKeptList(new RawReader(client), aging, followed, async () => undefined);
      expect(resumed.read).toMatchObject({ how: 'resumed', changes: 0 });
      expect(asObject(resumed.list)).toEqual(asObject(await fresh(aging)));
    },
    180_000,
  );
}
