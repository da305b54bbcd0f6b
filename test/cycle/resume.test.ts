/**
 * The resume's decisions, over a stub reader: a kept list at the current revision sends nothing more; a
 * revision that went backwards, a 410 and a failed watch each list in full; an error that is not the
 * cluster's (a bug) is not hidden behind a fallback; resourceVersions that are not integers never count
 * as reached. Every path is counted, and the test fails if one was never taken.
 */
import { describe, expect, it } from 'vitest';
import type { KeptList, KeptListSpec } from '../../shared/cycle/kept-lists.js';
import { type FollowRead, followKeptList, type ListRead, readKeptList } from '../../shared/cycle/resume.js';
import { ClusterAccessError } from '../../shared/k8s/errors.js';
import { atOrAfter, type RawReader, type WatchEventType } from '../../shared/k8s/raw-reader.js';

type Obj = { metadata: { name: string; resourceVersion: string }; v: string };
const obj = (name: string, rv: string, v = name): Obj => ({ metadata: { name, resourceVersion: rv }, v });

const spec: KeptListSpec<Obj, string> = {
  operation: 'list things',
  path: '/things',
  query: {},
  pageSize: 10,
  keyOf: (o) => o.metadata.name,
  view: (o) => o.v,
};

interface Script {
  list: { items: Obj[]; rv: string };
  watch?: { events: [WatchEventType, Obj][]; fail?: Error };
}

/** A reader that answers from a script and records what it was asked. */
function stub(script: Script) {
  const asked: string[] = [];
  const reader = {
    list: async (_op: string, _p: string, _q: unknown, onPage: (items: Obj[]) => void) => {
      asked.push('list');
      onPage(script.list.items);
      return { resourceVersion: script.list.rv };
    },
    watch: async (
      _op: string,
      _p: string,
      _q: unknown,
      onEvent: (t: WatchEventType, o: Obj) => void,
      opts: { from: string; until?: string },
    ) => {
      asked.push(`watch from ${opts.from} until ${opts.until}`);
      if (script.watch?.fail) throw script.watch.fail;
      let rv = opts.from;
      for (const [t, o] of script.watch?.events ?? []) {
        onEvent(t, o);
        rv = o.metadata.resourceVersion;
        if (atOrAfter(rv, opts.until)) return { rv, events: 1, bookmarks: 0, end: 'reached' as const };
      }
      return { rv, events: script.watch?.events.length ?? 0, bookmarks: 0, end: 'quiet' as const };
    },
  } as unknown as RawReader;
  return { reader, asked };
}

const keptAt = (rv: string, items: [string, string][]): KeptList<string, Obj> => ({
  rv,
  spec,
  items: new Map(items),
  shared: new Map(),
});

const http = (status: number) =>
  new ClusterAccessError({
    cluster: 'c',
    operation: 'o',
    kind: 'http',
    status,
    retryable: false,
    detail: 'x',
  });

describe('readKeptList', () => {
  const seen = new Set<string>();
  const read = async (script: Script, kept: KeptList<string> | undefined, now: string | undefined) => {
    const s = stub(script);
    const out = await readKeptList(s.reader, spec, kept, async () => now);
    seen.add(out.read.how === 'listed' ? out.read.why : `resumed ${out.read.end}`);
    return { ...out, asked: s.asked };
  };
  const full = { items: [obj('a', '5'), obj('b', '6')], rv: '9' };

  it('a cold read lists, and keeps the list at its resourceVersion', async () => {
    const r = await read({ list: full }, undefined, '9');
    expect(r.read).toEqual({ how: 'listed', why: 'cold' } satisfies ListRead);
    expect(r.list.rv).toBe('9');
    expect([...r.list.items]).toEqual([
      ['a', 'a'],
      ['b', 'b'],
    ]);
  });

  it('a kept list at the current revision sends nothing more', async () => {
    const r = await read({ list: full }, keptAt('9', [['a', 'a']]), '9');
    expect(r.read).toMatchObject({ how: 'resumed', end: 'current', changes: 0 });
    expect(r.asked).toEqual([]);
  });

  it('applies adds, modifies and deletes in order, up to the current revision', async () => {
    const events: [WatchEventType, Obj][] = [
      ['ADDED', obj('c', '10')],
      ['MODIFIED', obj('a', '11', 'a2')],
      ['DELETED', obj('b', '12')],
      ['ADDED', obj('b', '13', 'b-again')],
    ];
    const r = await read(
      { list: full, watch: { events } },
      keptAt('9', [
        ['a', 'a'],
        ['b', 'b'],
      ]),
      '13',
    );
    expect(r.asked).toEqual(['watch from 9 until 13']);
    expect(r.read).toMatchObject({ how: 'resumed', end: 'reached' });
    expect(r.list.rv).toBe('13');
    expect(Object.fromEntries(r.list.items)).toEqual({ a: 'a2', b: 'b-again', c: 'c' });
  });

  it('a revision behind the kept one (another store behind the address) lists in full', async () => {
    const r = await read({ list: full }, keptAt('50', [['z', 'z']]), '9');
    expect(r.read).toEqual({ how: 'listed', why: 'revision went back' });
    expect(r.asked).toEqual(['list']);
    expect(Object.fromEntries(r.list.items)).toEqual({ a: 'a', b: 'b' });
  });

  it('410 Expired lists in full, and so does any other failed watch; what was applied is dropped', async () => {
    const partial: [WatchEventType, Obj][] = [['DELETED', obj('a', '10')]];
    const gone = await read(
      { list: full, watch: { events: partial, fail: http(410) } },
      keptAt('3', []),
      '9',
    );
    expect(gone.read).toEqual({ how: 'listed', why: 'expired' });
    const denied = await read({ list: full, watch: { events: [], fail: http(403) } }, keptAt('3', []), '9');
    expect(denied.read).toEqual({ how: 'listed', why: 'watch failed' });
    expect(Object.fromEntries(denied.list.items)).toEqual({ a: 'a', b: 'b' });
  });

  it('an error that is not the cluster answering (a bug) is thrown, not hidden by a fallback', async () => {
    await expect(
      read({ list: full, watch: { events: [], fail: new TypeError('bug') } }, keptAt('3', []), '9'),
    ).rejects.toThrow('bug');
  });

  it('every path was taken', () => {
    expect([...seen].sort()).toEqual(
      ['cold', 'expired', 'resumed current', 'resumed reached', 'revision went back', 'watch failed'].sort(),
    );
  });
});

describe('followKeptList', () => {
  const seen = new Set<string>();
  const follow = async (script: Script, kept: KeptList<string, Obj>, now: string | undefined) => {
    const s = stub(script);
    const out = await followKeptList(s.reader, kept, now);
    seen.add(out.read.how === 'dropped' ? out.read.why : `resumed ${out.read.end}`);
    return { ...out, asked: s.asked };
  };
  const full = { items: [obj('a', '5')], rv: '9' };

  it('applies the changes and moves the list on, never listing', async () => {
    const r = await follow(
      { list: full, watch: { events: [['MODIFIED', obj('a', '12', 'a2')]] } },
      keptAt('9', [['a', 'a']]),
      '12',
    );
    expect(r.read).toEqual({
      how: 'resumed',
      changes: 1,
      bookmarks: 0,
      end: 'reached',
      rv: '12',
    } satisfies FollowRead);
    expect(r.asked).toEqual(['watch from 9 until 12']);
    expect(Object.fromEntries(r.list?.items ?? [])).toEqual({ a: 'a2' });
    const current = await follow({ list: full }, keptAt('12', []), '12');
    expect(current.read).toMatchObject({ how: 'resumed', end: 'current', rv: '12' });
    expect(current.asked).toEqual([]);
  });

  it('drops what it cannot take up (410, a failed watch, a revision gone back) and lists nothing', async () => {
    for (const [fail, why] of [
      [http(410), 'expired'],
      [http(403), 'watch failed'],
    ] as const) {
      const r = await follow({ list: full, watch: { events: [], fail } }, keptAt('3', []), '9');
      expect(r.read).toEqual({ how: 'dropped', why });
      expect(r.list).toBeUndefined();
      expect(r.asked).not.toContain('list');
    }
    const back = await follow({ list: full }, keptAt('50', []), '9');
    expect(back.read).toEqual({ how: 'dropped', why: 'revision went back' });
    expect(back.asked).toEqual([]);
  });

  it('an error that is not the cluster answering (a bug) is thrown', async () => {
    await expect(
      follow({ list: full, watch: { events: [], fail: new TypeError('bug') } }, keptAt('3', []), '9'),
    ).rejects.toThrow('bug');
  });

  it('every path was taken', () => {
    expect([...seen].sort()).toEqual(
      ['expired', 'resumed current', 'resumed reached', 'revision went back', 'watch failed'].sort(),
    );
  });
});

describe('atOrAfter', () => {
  it('compares integer resourceVersions as numbers, and nothing else as reached', () => {
    expect(atOrAfter('10', '9')).toBe(true);
    expect(atOrAfter('9', '9')).toBe(true);
    expect(atOrAfter('9', '10')).toBe(false);
    expect(atOrAfter('12345678901234567890', '12345678901234567889')).toBe(true);
    expect(atOrAfter('abc', '1')).toBe(false);
    expect(atOrAfter('5', undefined)).toBe(false);
  });
});
