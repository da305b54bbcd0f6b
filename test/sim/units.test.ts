/** The simulator's building blocks: selectors, patches, continue tokens, durations, versions, load profiles. */
import { describe, expect, it } from 'vitest';
import { goDuration, rfc3339 } from '../../local/sim/clock.js';
import { compareKubeVersions } from '../../local/sim/discovery.js';
import { ApiError } from '../../local/sim/errors.js';
import { decodeContinueToken } from '../../local/sim/list-options.js';
import { encodeContinue } from '../../local/sim/pagination.js';
import { applyJsonPatch, applyMergePatch, applyStrategicMergePatch } from '../../local/sim/patch.js';
import { computeQos } from '../../local/sim/pods.js';
import {
  labelSelectorObjectMatches,
  parseFieldSelector,
  parseLabelSelector,
} from '../../local/sim/selectors.js';
import { humanDuration } from '../../local/sim/table.js';
import { advanceOom, containerLoad, nodeFactor } from '../../local/sim/workload.js';

describe('label selectors', () => {
  const l = { app: 'web', tier: 'front', n: '5' };
  it.each([
    ['app=web', true],
    ['app==web', true],
    ['app!=web', false],
    ['app in (web, api)', true],
    ['app notin (web)', false],
    ['tier', true],
    ['!tier', false],
    ['!missing', true],
    ['missing!=x', true],
    ['n>4', true],
    ['n<5', false],
    ['app=web,tier=back', false],
    ['', true],
  ])('%j -> %s', (sel, want) => expect(parseLabelSelector(sel)(l)).toBe(want));

  it('rejects malformed selectors with 400', () => {
    for (const bad of ['app in (a', 'a b', '=x', 'app=has space']) {
      expect(() => parseLabelSelector(bad)).toThrow(ApiError);
    }
  });

  it('matches LabelSelector objects (matchLabels, matchExpressions)', () => {
    expect(
      labelSelectorObjectMatches(
        {
          matchLabels: { app: 'web' },
          matchExpressions: [{ key: 'tier', operator: 'In', values: ['front'] }],
        },
        l,
      ),
    ).toBe(true);
    expect(
      labelSelectorObjectMatches({ matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] }, l),
    ).toBe(false);
  });
});

describe('field selectors', () => {
  const pod = {
    metadata: { name: 'p', namespace: 'ns' },
    spec: { nodeName: 'n1' },
    status: { phase: 'Running' },
  };
  it('supports the pod fields and metadata fields, =, == and !=', () => {
    expect(parseFieldSelector('spec.nodeName=n1,status.phase==Running', 'pods').match(pod)).toBe(true);
    expect(parseFieldSelector('metadata.name!=p', 'pods').match(pod)).toBe(false);
    expect(parseFieldSelector('spec.nodeName=n1', 'pods').nodeName).toBe('n1');
  });
  it('rejects unknown fields with the message of each resource family', () => {
    expect(() => parseFieldSelector('spec.x=1', 'pods')).toThrow('field label not supported: spec.x');
    expect(() => parseFieldSelector('spec.nodeName=1', 'pods', 'meta')).toThrow(
      '"spec.nodeName" is not a known field selector: only "metadata.name", "metadata.namespace"',
    );
  });
});

describe('patches', () => {
  const pod = {
    metadata: { labels: { a: '1' }, finalizers: ['x'] },
    spec: {
      containers: [
        { name: 'a', image: 'a:1', resources: { requests: { cpu: '1' } } },
        { name: 'b', image: 'b:1' },
      ],
    },
  };
  it('strategic merge merges containers by name, deletes with null and $patch: delete', () => {
    const out = applyStrategicMergePatch(pod, {
      metadata: { labels: { a: null, b: '2' }, finalizers: ['y'] },
      spec: {
        $setElementOrder: [],
        containers: [
          { name: 'a', resources: { requests: { memory: '1Gi' } } },
          { name: 'b', $patch: 'delete' },
          { name: 'c', image: 'c:1' },
        ],
      },
    });
    expect(out.metadata).toEqual({ labels: { b: '2' }, finalizers: ['x', 'y'] });
    expect(out.spec.containers).toEqual([
      { name: 'a', image: 'a:1', resources: { requests: { cpu: '1', memory: '1Gi' } } },
      { name: 'c', image: 'c:1' },
    ]);
    expect(pod.spec.containers).toHaveLength(2);
  });
  it('merge patch replaces lists and deletes with null (RFC 7386)', () => {
    const out = applyMergePatch(pod, { spec: { containers: [{ name: 'z' }] }, metadata: { labels: null } });
    expect(out.spec.containers).toEqual([{ name: 'z' }]);
    expect(out.metadata.labels).toBeUndefined();
  });
  it('JSON patch applies RFC 6902 operations and answers 422 when one fails', () => {
    expect(
      applyJsonPatch(pod, [{ op: 'replace', path: '/spec/containers/1/image', value: 'b:2' }]).spec
        .containers[1].image,
    ).toBe('b:2');
    expect(() => applyJsonPatch(pod, [{ op: 'test', path: '/metadata/labels/a', value: '2' }])).toThrow(
      ApiError,
    );
    expect(pod.spec.containers[1]?.image).toBe('b:1');
  });
});

describe('continue tokens', () => {
  it('use the apiserver format (base64url JSON with the key and a NUL)', () => {
    // The page-1 token recorded from kube-apiserver 1.32 (02c) decodes to rv 81, start "node-2\u0000".
    const recorded = 'eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6ODEsInN0YXJ0Ijoibm9kZS0yXHUwMDAwIn0';
    expect(encodeContinue(81, 'node-2')).toBe(recorded);
    expect(decodeContinueToken(recorded)).toEqual({ rv: 81, start: 'node-2\u0000' });
    expect(() => decodeContinueToken('%%%')).toThrow(
      'invalid continue token: continue key is not valid: illegal base64 data at input byte 0',
    );
  });
});

describe('time formats', () => {
  it('writes Go durations and RFC 3339 seconds', () => {
    expect(goDuration(15_000)).toBe('15s');
    expect(goDuration(15_012)).toBe('15.012s');
    expect(goDuration(14_980)).toBe('14.98s');
    expect(goDuration(60_000)).toBe('1m0s');
    expect(goDuration(3_723_000)).toBe('1h2m3s');
    expect(goDuration(500)).toBe('500ms');
    expect(rfc3339(Date.parse('2026-08-01T10:00:05.900Z'))).toBe('2026-08-01T10:00:05Z');
  });
  it('writes kubectl ages', () => {
    expect(humanDuration(5_000)).toBe('5s');
    expect(humanDuration(150_000)).toBe('2m30s');
    expect(humanDuration(45 * 60_000)).toBe('45m');
    expect(humanDuration(6.5 * 3_600_000)).toBe('6h30m');
    expect(humanDuration(3 * 86_400_000)).toBe('3d');
  });
});

describe('versions and QoS', () => {
  it('orders versions by Kubernetes priority', () => {
    expect(['v1alpha1', 'v2', 'v1beta1', 'v1', 'v1beta2', 'foo'].sort(compareKubeVersions)).toEqual([
      'v2',
      'v1',
      'v1beta2',
      'v1beta1',
      'v1alpha1',
      'foo',
    ]);
  });
  it('computes QoS classes like ComputePodQOS', () => {
    const c = (requests?: object, limits?: object) => ({
      containers: [{ name: 'a', resources: { requests, limits } }],
    });
    expect(computeQos(c())).toBe('BestEffort');
    expect(computeQos(c({ cpu: '1', memory: '1Gi' }, { cpu: '1', memory: '1Gi' }))).toBe('Guaranteed');
    expect(computeQos(c({ cpu: '1000m', memory: '1024Mi' }, { cpu: '1', memory: '1Gi' }))).toBe('Guaranteed');
    expect(computeQos(c({ cpu: '1' }, { cpu: '1' }))).toBe('Burstable');
    expect(computeQos(c({ cpu: '500m', memory: '1Gi' }, { cpu: '1', memory: '1Gi' }))).toBe('Burstable');
  });
});

describe('load profiles', () => {
  it('spans exactly the heterogeneous range across the nodes known at start, deterministically', () => {
    const f = Array.from({ length: 50 }, (_, i) =>
      nodeFactor({ perNode: 'heterogeneous' }, i, `n${i}`, 50, 'ds'),
    );
    expect(Math.min(...f)).toBeCloseTo(0.25, 10);
    expect(Math.max(...f)).toBeCloseTo(4, 10);
    expect(new Set(f).size).toBe(50);
    expect(nodeFactor({ perNode: 'heterogeneous' }, 7, 'n7', 50, 'ds')).toBe(f[7]);
    expect(nodeFactor({ perNode: { n3: 9, '4': 2 } }, 3, 'n3', 50, 'ds')).toBe(9);
    expect(nodeFactor({ perNode: { n3: 9, '4': 2 } }, 4, 'n4', 50, 'ds')).toBe(2);
    expect(nodeFactor({}, 4, 'n4', 50, 'ds')).toBe(1);
  });
  it('kills a leaking container each time its memory reaches the limit', () => {
    const l = containerLoad({ memory: '50Mi', memoryGrowthPerHour: 1 }, 'c', {}, 1);
    const res = { memLimit: 100 * 2 ** 20 };
    // 50Mi doubling per hour reaches 100Mi after 1 h: three kills in 3.5 h.
    const s = advanceOom(l, res, { restartCount: 0, lastStartMs: 0 }, 0, 3.5 * 3_600_000, 0, 'c');
    expect(s.restartCount).toBe(3);
    expect(s.lastKillMs).toBe(3 * 3_600_000);
  });
});
