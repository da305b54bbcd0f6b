/**
 * The fidelity comparison (local/fidelity/compare.ts) and the run-specific value mapping
 * (local/fidelity/values.ts) on their own, no server needed: what counts as alike, and which
 * resourceVersion a replayed request must carry.
 */
import { describe, expect, it } from 'vitest';
import { compareShapes } from '../../local/fidelity/compare.js';
import { Values } from '../../local/fidelity/values.js';

const differences = (sim: unknown, real: unknown) => {
  const out: string[] = [];
  compareShapes(sim, real, 'body', out);
  return out;
};

describe('the fidelity comparison', () => {
  it('finds an object alike whatever the order of its keys (JSON objects are unordered)', () => {
    const sim = { kind: 'Pod', metadata: { name: 'p', labels: { b: '2', a: '1' } }, spec: { x: 1, y: 2 } };
    const real = { spec: { y: 2, x: 1 }, metadata: { labels: { a: '1', b: '2' }, name: 'p' }, kind: 'Pod' };
    expect(differences(sim, real)).toEqual([]);
  });

  it('compares a whole-value subtree (resources, taints) regardless of key order, not of array order', () => {
    const taint = (key: string) => ({ key, effect: 'NoSchedule' });
    expect(
      differences(
        { resources: { requests: { memory: '1Gi', cpu: '1' } } },
        { resources: { requests: { cpu: '1', memory: '1Gi' } } },
      ),
    ).toEqual([]);
    expect(
      differences(
        { spec: { taints: [taint('a'), taint('b')] } },
        { spec: { taints: [taint('b'), taint('a')] } },
      ),
    ).toHaveLength(1);
  });

  it('still tells a reordered array of plain values apart', () => {
    expect(differences({ verbs: ['get', 'list'] }, { verbs: ['list', 'get'] })).toEqual([
      'body.verbs: ["get","list"] in the simulator, ["list","get"] in the real server',
    ]);
  });

  it('compares a name the server generated from generateName by shape, any other name exactly', () => {
    const meta = (name: string, generateName?: string) => ({ metadata: { name, generateName } });
    expect(differences(meta('pod.abcde', 'pod.'), meta('pod.xyz12', 'pod.'))).toEqual([]);
    expect(differences(meta('a'), meta('b'))).toEqual([
      'body.metadata.name: "a" in the simulator, "b" in the real server',
    ]);
  });

  it('still tells a changed label value apart', () => {
    expect(differences({ metadata: { labels: { a: '1' } } }, { metadata: { labels: { a: '2' } } })).toEqual([
      'body.metadata.labels: {"a":"1"} in the simulator, {"a":"2"} in the real server',
    ]);
  });
});

describe('the run-specific values', () => {
  const pod = (rv: string) => ({ kind: 'Pod', metadata: { name: 'p', namespace: 'n', resourceVersion: rv } });

  it("learns an object's own resourceVersion, not one it merely refers to", () => {
    const v = new Values();
    v.learn(pod('139'), pod('337'));
    // An Event written as the simulator wrote it echoes the simulator's values in its reference.
    const event = (rv: string) => ({
      kind: 'Event',
      metadata: { name: 'p.1', resourceVersion: rv },
      involvedObject: { kind: 'Pod', name: 'p', resourceVersion: '139', uid: 'sim-uid' },
    });
    v.learn(event('140'), event('338'));
    expect(v.of('resourceVersion', '139')).toBe('337');
    expect(v.of('uid', 'sim-uid')).toBeUndefined();
  });

  it("pairs a list's items by name, whatever order each server lists them in", () => {
    const v = new Values();
    const item = (name: string, rv: string) => ({ metadata: { name, namespace: 'n', resourceVersion: rv } });
    v.learn(
      { kind: 'PodList', metadata: { resourceVersion: '50' }, items: [item('b', '10'), item('a', '11')] },
      { kind: 'PodList', metadata: { resourceVersion: '90' }, items: [item('a', '71'), item('b', '70')] },
    );
    expect(v.of('resourceVersion', '10')).toBe('70');
    expect(v.of('resourceVersion', '11')).toBe('71');
    expect(v.of('resourceVersion', '50')).toBe('90');
  });
});
