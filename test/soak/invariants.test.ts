/** Each soak invariant's judge, on a broken state: a check that cannot fail proves nothing. */
import { describe, expect, it } from 'vitest';
import type { DeadLetter } from '../../local/invoker.js';
import type { StoredIdentity } from '../../shared/claims/store.js';
import { judgeGuards, judgeUniqueIds } from '../../soak/invariants/claims.js';
import { judgeRemovals } from '../../soak/invariants/evictions.js';
import { judgeHistories } from '../../soak/invariants/history.js';
import { judgeDeadLetters, judgeSecrets } from '../../soak/invariants/platform.js';
import { judgeReplay } from '../../soak/invariants/replay.js';
import { judgeResends, judgeStuck, podResizeView } from '../../soak/invariants/resizes.js';
import { Ledger } from '../../soak/ledger.js';
import type { ResizeRequest, Text } from '../../soak/types.js';

const identity = (cluster: string, clusterId: string, clusterSet?: string): StoredIdentity => ({
  cluster,
  clusterId,
  idSource: 'operator',
  clusterSet,
  version: 1,
  updatedAt: '2026-01-01T00:00:00Z',
});
const guard = (cluster: string, clusterSet: string, clusterId: string, token = 't') => ({
  cluster,
  clusterSet,
  clusterId,
  token,
  acquiredAt: '2026-01-01T00:00:00Z',
});

describe('soak invariants fail on broken states', () => {
  it('history: a duplicated and a lost sample are both caught; a failed cycle excuses one loss', () => {
    const ledger = new Ledger();
    for (const cycle of [1, 2, 3]) ledger.attempt('nodescope', 'c', cycle);
    for (const cycle of [1, 2]) ledger.complete('nodescope', 'c', cycle);
    const ok = judgeHistories([{ cluster: 'c', scope: 'ds n1 app', samples: 2 }], ledger);
    expect(ok.violations).toEqual([]);
    const broken = judgeHistories(
      [
        { cluster: 'c', scope: 'ds n1 app', samples: 4 },
        { cluster: 'c', scope: 'ds n2 app', samples: 1 },
      ],
      ledger,
    );
    expect(broken.violations).toEqual([
      'c ds n1 app: 4 samples from 3 cycles (duplicated)',
      'c ds n2 app: 1 samples but 2 clean cycles (lost)',
    ]);
  });

  it('replay: a stored recommendation no state explains', () => {
    const r = judgeReplay([
      { what: 'c ds n1', stored: { cpu: 100 }, replayed: { cpu: 100 } },
      { what: 'c ds n2', stored: { cpu: 120 }, replayed: { cpu: 100 } },
    ]);
    expect(r.checked).toBe(2);
    expect(r.violations).toEqual(['c ds n2: stored {"cpu":120} != replayed {"cpu":100}']);
  });

  it('claims: a guard without its identity, and two members of one ClusterSet with one ID', () => {
    const ids = [identity('a', 'x', 'blue'), identity('b', 'x', 'blue'), identity('c', 'y')];
    expect(judgeGuards(ids, [guard('a', 'blue', 'x')]).violations).toEqual([]);
    expect(judgeGuards(ids, [guard('c', 'blue', 'y')]).violations).toEqual([
      'guard blue/y held by c, whose identity does not explain it',
    ]);
    const pending = {
      ...identity('c', 'y'),
      pending: { op: 'join' as const, set: 'blue', token: 'k', at: '' },
    };
    expect(judgeGuards([pending], [guard('c', 'blue', 'y', 'k')]).violations).toEqual([]);
    expect(judgeUniqueIds(ids).violations).toEqual(['ClusterSet blue: a and b both hold ID x']);
  });

  it('resizes: one sent twice (no change) and one stuck without a record', () => {
    const req = (before: string, after: string, status = 200): ResizeRequest => ({
      cluster: 'c',
      namespace: 'm',
      pod: 'p',
      podUid: 'u',
      status,
      before,
      after,
    });
    expect(judgeResends([req('a', 'b'), req('b', 'b', 409)]).violations).toEqual([]);
    expect(judgeResends([req('a', 'b'), req('b', 'b')]).violations).toHaveLength(1);

    const pod = (conditions: unknown[], running = '100m') =>
      podResizeView('c', {
        metadata: {
          namespace: 'm',
          name: 'p',
          uid: 'u',
          ownerReferences: [{ kind: 'DaemonSet', name: 'ds' }],
        },
        spec: { containers: [{ name: 'app', resources: { requests: { cpu: '200m' } } }] },
        status: {
          conditions,
          containerStatuses: [{ name: 'app', resources: { requests: { cpu: running } } }],
        },
      });
    const deferred = pod([{ type: 'PodResizePending', status: 'True', reason: 'Deferred' }]);
    expect(judgeStuck([deferred], new Set(['u'])).violations).toEqual([]);
    expect(judgeStuck([deferred], new Set()).violations).toHaveLength(1);
    expect(judgeStuck([pod([])], new Set(['u'])).violations).toHaveLength(1);
    expect(judgeStuck([pod([], '200m')], new Set()).violations).toEqual([]);
  });

  it('dead letters: one whose error the soak did not provoke', () => {
    const dl = (error: string): DeadLetter => ({
      functionId: 'nodescope',
      source: 'rule:x',
      event: {},
      error,
      attempts: 3,
      at: '',
    });
    const r = judgeDeadLetters([
      dl('cluster answered 503'),
      dl('ConditionalCheckFailedException'),
      dl('TypeError: x is undefined'),
    ]);
    expect(r.causes).toEqual({ 'injected fault': 1, 'lost race': 1 });
    expect(r.violations).toEqual(['nodescope (rule:x): TypeError: x is undefined']);
  });

  it('secrets: a canary token, plain or base64, in any text', async () => {
    const canary = 'canary-0123456789abcdef';
    async function* texts(): AsyncIterable<Text> {
      yield { source: 'log:1', text: 'all fine' };
      yield { source: 'log:2', text: `Authorization: Bearer ${canary}` };
      yield { source: 'item', text: JSON.stringify({ v: Buffer.from(canary).toString('base64') }) };
    }
    const r = await judgeSecrets(texts(), [canary]);
    expect(r.checked).toBe(3);
    expect(r.violations).toEqual(['log:2: contains a canary token', 'item: contains a canary token']);
  });

  it('evictions: a pod removed that is not a balloon', () => {
    const removal = (balloon: boolean) => ({
      cluster: 'c',
      pod: 'm/p',
      how: 'eviction' as const,
      status: 201,
      balloon,
    });
    expect(judgeRemovals([removal(true)], 5).violations).toEqual([]);
    expect(judgeRemovals([removal(true), removal(false)], 5).violations).toEqual([
      'c m/p: eviction (HTTP 201) of a pod that is not a balloon',
    ]);
  });
});
