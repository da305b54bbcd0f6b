/**
 * The balloons' store port (shared/balloons/store.ts), one contract over both adapters: the DynamoDB one
 * on the local DynamoDB-protocol server (dynalite, through the local runtime) and the in-memory one the
 * balloon suites run on. What a cycle relies on is here: the state is written only over the version
 * read (two cycles never both win, and the loser writes nothing), an explicit size is dropped only if
 * it is still the one read, records come back in key order, and what comes back is a copy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalRuntime, startLocalRuntime } from '../../local/runtime.js';
import { amounts } from '../../shared/balloons/amounts.js';
import type { ExplicitRequest } from '../../shared/balloons/desired.js';
import { validatePolicy } from '../../shared/balloons/policy.js';
import type { BalloonStore, ClusterBalloons } from '../../shared/balloons/store.js';
import { DynamoBalloonStore } from '../../shared/balloons/store-dynamo.js';
import { MemoryBalloonStore } from '../../shared/balloons/store-memory.js';

const GI = 2 ** 30;
const policy = (name: string, selector = 'pool=a') =>
  validatePolicy({
    name,
    selector,
    headroomPercent: 10,
    headroomMin: { cpu: '250m', memory: '512Mi' },
    min: { cpu: '1', memory: '2Gi' },
    max: { cpu: '8', memory: '32Gi' },
    shrinkCooldownMinutes: 0,
  });
const request = (node: string, requestedAt: number): ExplicitRequest => ({
  node,
  size: amounts(2000, 4 * GI),
  requestedAt,
  via: 'cli',
});
const state = (cluster: string, cycleId: string): Omit<ClusterBalloons, 'version'> => ({
  cluster,
  at: 1_000,
  cycleId,
  nodes: {
    n1: {
      allocatable: amounts(4000, 16 * GI),
      capacity: amounts(4000, 16 * GI),
      workloads: amounts(500, GI),
      balloon: amounts(1500, 8 * GI),
      target: amounts(1500, 8 * GI),
    },
  },
  errors: [],
});

let runtime: LocalRuntime;
let n = 0;
/** A cluster name of its own per test: the DynamoDB table is shared by the whole file. */
const fresh = () => `contract-${++n}`;

beforeAll(async () => {
  runtime = await startLocalRuntime({ retryDelayMs: 5 });
});
afterAll(async () => runtime?.stop());

describe.each([
  ['in memory', () => new MemoryBalloonStore() as BalloonStore],
  ['DynamoDB (dynalite)', () => new DynamoBalloonStore(runtime.db, runtime.table) as BalloonStore],
])('the balloons store port, %s', (_, make) => {
  it('knows nothing of a cluster it was never told of', async () => {
    const store = make();
    expect(await store.load(fresh())).toEqual({ policies: [], requests: [] });
    expect(await store.state(fresh())).toBeUndefined();
  });

  it('gives policies back by name and sizes by node, a put replacing, one cluster not seeing another', async () => {
    const store = make();
    const [c, other] = [fresh(), fresh()];
    await store.putPolicy(c, policy('zeta'));
    await store.putPolicy(c, policy('alpha'));
    await store.putPolicy(c, policy('zeta', 'pool=z'));
    await store.putRequest(c, request('node-b', 2));
    await store.putRequest(c, request('node-a', 1));
    await store.putPolicy(other, policy('elsewhere'));
    const items = await store.load(c);
    expect(items.policies.map((p) => [p.name, p.selector])).toEqual([
      ['alpha', 'pool=a'],
      ['zeta', 'pool=z'],
    ]);
    expect(items.requests).toEqual([request('node-a', 1), request('node-b', 2)]);
    expect(items.state).toBeUndefined();
  });

  it('stores a state only over the version read: the second of two cycles loses the race and writes nothing', async () => {
    const store = make();
    const c = fresh();
    expect(await store.saveState(state(c, 'first'), undefined)).toBe('saved');
    expect(await store.saveState(state(c, 'also-first'), undefined)).toBe('lost-race');
    expect(await store.state(c)).toMatchObject({ cycleId: 'first', version: 1 });
    expect(await store.saveState(state(c, 'second'), 1)).toBe('saved');
    expect(await store.saveState(state(c, 'stale'), 1)).toBe('lost-race');
    const loaded = await store.load(c);
    expect(loaded.state).toEqual({ ...state(c, 'second'), version: 2 });
    // a version given where nothing was ever stored is a lost race too (the state was cleared meanwhile)
    expect(await store.saveState(state(fresh(), 'ghost'), 3)).toBe('lost-race');
  });

  it('lets exactly one of two cycles racing over one version win', async () => {
    const store = make();
    const c = fresh();
    await store.saveState(state(c, 'base'), undefined);
    const outcomes = await Promise.all([
      store.saveState(state(c, 'left'), 1),
      store.saveState(state(c, 'right'), 1),
    ]);
    expect([...outcomes].sort()).toEqual(['lost-race', 'saved']);
    const winner = outcomes[0] === 'saved' ? 'left' : 'right';
    expect(await store.state(c)).toMatchObject({ cycleId: winner, version: 2 });
  });

  it('drops an explicit size only if it is still the one read; says absent for what is not there', async () => {
    const store = make();
    const c = fresh();
    await store.putRequest(c, request('n1', 100));
    await store.putRequest(c, request('n1', 200)); // set again after a cycle read it at 100
    expect(await store.deleteRequestIf(c, 'n1', 100)).toBe('superseded');
    expect((await store.load(c)).requests).toEqual([request('n1', 200)]);
    expect(await store.deleteRequestIf(c, 'n1', 200)).toBe('removed');
    expect(await store.deleteRequestIf(c, 'n1', 200)).toBe('superseded');
    await store.putRequest(c, request('n2', 1));
    expect(await store.deleteRequest(c, 'n2')).toBe('removed');
    expect(await store.deleteRequest(c, 'n2')).toBe('absent');
    await store.putPolicy(c, policy('p'));
    expect(await store.deletePolicy(c, 'p')).toBe('removed');
    expect(await store.deletePolicy(c, 'p')).toBe('absent');
    expect(await store.load(c)).toEqual({ policies: [], requests: [] });
  });

  it('clears every record of one cluster, counting them, and no other', async () => {
    const store = make();
    const [c, other] = [fresh(), fresh()];
    await store.putPolicy(c, policy('p'));
    await store.putRequest(c, request('n1', 1));
    await store.saveState(state(c, 'x'), undefined);
    await store.putPolicy(other, policy('kept'));
    expect(await store.clear(c)).toBe(3);
    expect(await store.load(c)).toEqual({ policies: [], requests: [] });
    expect(await store.clear(c)).toBe(0);
    // the state starts over: a cycle that read none may store one
    expect(await store.saveState(state(c, 'again'), undefined)).toBe('saved');
    expect((await store.load(other)).policies.map((p) => p.name)).toEqual(['kept']);
  });

  it('gives back copies: changing what was read or written changes nothing stored', async () => {
    const store = make();
    const c = fresh();
    const written = state(c, 'mine');
    await store.saveState(written, undefined);
    written.errors.push('changed after the write');
    const read = (await store.state(c))!;
    read.errors.push('changed after the read');
    delete read.nodes.n1;
    const again = (await store.state(c))!;
    expect(again.errors).toEqual([]);
    expect(Object.keys(again.nodes)).toEqual(['n1']);
  });
});
