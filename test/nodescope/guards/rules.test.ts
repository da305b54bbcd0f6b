/**
 * The guards' rules on their own: what a LimitRange or a ResourceQuota refuses of a resize (as
 * kube-apiserver's admission does, judged for real in guards.real.test.ts), the caps on one step, and
 * the annotations' parse errors.
 */
import { describe, expect, it } from 'vitest';
import type { PodView } from '../../../shared/cycle/views.js';
import { capDesired, parseCap } from '../../../shared/nodescope/guards/caps.js';
import { limitRangeViolations } from '../../../shared/nodescope/guards/limit-range.js';
import { QuotaLedger, quotaDelta, quotaViolations } from '../../../shared/nodescope/guards/resource-quota.js';
import { amountsAfter, specAmounts } from '../../../shared/nodescope/guards/resources.js';
import { guardSpecOf } from '../../../shared/nodescope/guards/settings.js';

const MI = 2 ** 20;
const pod = {
  name: 'agent-x',
  uid: 'u1',
  containers: [{ name: 'c', reqCpu: 100, reqMem: 100 * MI, limCpu: 200, limMem: 200 * MI, hasActual: true }],
} as unknown as PodView;
const lr = {
  metadata: { name: 'lr' },
  spec: {
    limits: [
      {
        type: 'Container',
        max: { cpu: '500m', memory: '512Mi' },
        min: { cpu: '50m', memory: '50Mi' },
        maxLimitRequestRatio: { memory: '3' },
      },
    ],
  },
};
const resized = (d: Parameters<typeof amountsAfter>[1]) => amountsAfter(pod, d);

describe('a LimitRange', () => {
  it('refuses a limit above max, a request below min and a ratio above maxLimitRequestRatio, in people’s units', () => {
    expect(
      limitRangeViolations([lr], resized({ c: { requests: { cpu: 600 }, limits: { cpu: 600 } } })),
    ).toEqual([{ by: 'LimitRange lr', message: 'container "c": cpu limit 600m above the maximum 500m' }]);
    expect(limitRangeViolations([lr], resized({ c: { requests: { memory: 40 * MI } } }))[0]?.message).toBe(
      'container "c": memory request 40Mi below the minimum 50Mi',
    );
    expect(limitRangeViolations([lr], resized({ c: { requests: { memory: 50 * MI } } }))[0]?.message).toBe(
      'container "c": memory limit/request ratio 4.00 (200Mi/50Mi) above the maximum 3',
    );
  });

  it('lets a resize within every bound through, and ignores Pod items and other resources', () => {
    expect(limitRangeViolations([lr], resized({ c: { requests: { cpu: 150, memory: 80 * MI } } }))).toEqual(
      [],
    );
    const podItem = { metadata: { name: 'p' }, spec: { limits: [{ type: 'Pod', max: { cpu: '1m' } }] } };
    expect(limitRangeViolations([podItem], resized({ c: { requests: { cpu: 150 } } }))).toEqual([]);
  });

  it('refuses any resize of a container without the limit a max needs (the apiserver judges the whole pod)', () => {
    const noLimit = {
      ...pod,
      containers: [{ name: 'c', reqCpu: 100, hasActual: true }],
    } as unknown as PodView;
    const v = limitRangeViolations([lr], amountsAfter(noLimit, { c: { requests: { cpu: 150 } } }));
    expect(v[0]?.message).toBe('container "c": cpu has no limit, and the maximum 500m needs one');
  });
});

describe('a ResourceQuota', () => {
  const rq = {
    metadata: { name: 'rq' },
    spec: { hard: { 'requests.cpu': '400m', 'limits.memory': '1Gi' } },
    status: {
      hard: { 'requests.cpu': '400m', 'limits.memory': '1Gi' },
      used: { 'requests.cpu': '200m', 'limits.memory': '400Mi' },
    },
  };
  const delta = (d: Parameters<typeof amountsAfter>[1]) => quotaDelta(specAmounts(pod), resized(d));

  it('refuses what used plus the increase would take past hard; a decrease always passes', () => {
    expect(quotaViolations([rq], delta({ c: { requests: { cpu: 350 }, limits: { cpu: 400 } } }))).toEqual([
      { by: 'ResourceQuota rq', message: 'requests.cpu: 200m used + 250m would pass the hard limit 400m' },
    ]);
    expect(quotaViolations([rq], delta({ c: { requests: { cpu: 300 } } }))).toEqual([]);
    expect(quotaViolations([rq], delta({ c: { requests: { cpu: 50, memory: 10 * MI } } }))).toEqual([]);
  });

  it('adds up the increases already sent this cycle', () => {
    const ledger = new QuotaLedger();
    const d = delta({ c: { requests: { cpu: 200 } } });
    expect(quotaViolations([rq], d, ledger.charged)).toEqual([]);
    ledger.charge([rq], d);
    expect(quotaViolations([rq], d, ledger.charged)).toEqual([]);
    ledger.charge([rq], d);
    expect(quotaViolations([rq], d, ledger.charged)[0]?.message).toBe(
      'requests.cpu: 400m used + 100m would pass the hard limit 400m',
    );
  });

  it('refuses an increase while the quota has no status, and does not count a pod out of its scopes', () => {
    const fresh = { metadata: { name: 'new' }, spec: { hard: { 'requests.cpu': '1' } } };
    expect(quotaViolations([fresh], delta({ c: { requests: { cpu: 150 } } }))[0]?.message).toMatch(
      /not counted yet/,
    );
    const terminating = { ...rq, spec: { ...rq.spec, scopes: ['Terminating'] } };
    expect(quotaViolations([terminating], delta({ c: { requests: { cpu: 350 } } }))).toEqual([]);
  });
});

describe('caps on one resize', () => {
  it('take an increase at most max-increase above, a decrease at most max-decrease below, limits alike', () => {
    const caps = { maxIncrease: 0.5, maxDecrease: 0.25 };
    const up = capDesired({ c: { requests: { cpu: 400 }, limits: { cpu: 800 } } }, pod, caps);
    expect(up.desired).toEqual({ c: { requests: { cpu: 150 }, limits: { cpu: 300 } } });
    expect(up.capped).toEqual(['container "c" cpu request', 'container "c" cpu limit']);
    const down = capDesired({ c: { requests: { memory: 10 * MI }, limits: { memory: 20 * MI } } }, pod, caps);
    expect(down.desired).toEqual({ c: { requests: { memory: 75 * MI }, limits: { memory: 150 * MI } } });
    const near = capDesired({ c: { requests: { cpu: 90, memory: 120 * MI } } }, pod, caps);
    expect(near).toEqual({ desired: { c: { requests: { cpu: 90, memory: 120 * MI } } }, capped: [] });
  });

  it('are none by default and parse as a percentage or none, with a clear error otherwise', () => {
    const d = { c: { requests: { cpu: 1000 } } };
    expect(capDesired(d, pod, guardSpecOf({}).caps).desired).toBe(d);
    expect(parseCap('100%', 'increase')).toBe(1);
    expect(parseCap('none', 'decrease')).toBeUndefined();
    expect(() => parseCap('25', 'decrease')).toThrow('"25" is not a percentage above 0% (e.g. 25%) or none');
    expect(() => parseCap('100%', 'decrease')).toThrow(/less than 100%/);
    const spec = guardSpecOf({ 'fleetscope.io/max-decrease': 'lots', 'fleetscope.io/max-increase': '200%' });
    expect(spec.caps).toEqual({ maxIncrease: 2 });
    expect(spec.problems).toEqual([
      'annotation fleetscope.io/max-decrease: "lots" is not a percentage above 0% (e.g. 25%) or none',
    ]);
  });
});
