/**
 * The guards judged by the real kube-apiserver: does LimitRanger and ResourceQuota admission refuse a
 * pods/resize (1.33 and 1.36)? For each case, fleetscope's verdict (guards/limit-range.ts,
 * guards/resource-quota.ts, over the pod and the quota as the server returns them) is set beside what
 * the server answers to the same resize, sent for real: a verdict of "held" must be a 403 of the same
 * kind, and "sent" must be admitted. (The finding, in docs/nodescope.md: both versions judge a resize
 * against LimitRanges as a new pod and charge quotas with its increase.)
 */
import { expect, it } from 'vitest';
import { podView } from '../../../shared/cycle/views.js';
import type { PodObject } from '../../../shared/cycle/wire.js';
import { limitRangeViolations } from '../../../shared/nodescope/guards/limit-range.js';
import { quotaDelta, quotaViolations } from '../../../shared/nodescope/guards/resource-quota.js';
import { amountsAfter, specAmounts } from '../../../shared/nodescope/guards/resources.js';
import type { DesiredResources } from '../../../shared/resize/index.js';
import { realBackend } from '../../support/backends.js';
import { describeRealApiserver, SKEW_VERSIONS } from '../../support/real-apiserver.js';

const NS = 'guarded';
const SMP = 'application/strategic-merge-patch+json';
const MI = 2 ** 20;
const resources = (cpu: string, memory: string, limCpu: string, limMem: string) => ({
  requests: { cpu, memory },
  limits: { cpu: limCpu, memory: limMem },
});
const LIMIT_RANGE = {
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
const HARD = { 'requests.cpu': '400m', 'limits.memory': '1Gi' };

/** Each case: a resize of one pod's container `c` (requests and limits as sent), and what must come of it. */
const CASES: {
  name: string;
  desired: DesiredResources;
  judge: 'LimitRange' | 'ResourceQuota' | 'sent';
  on?: string[];
}[] = [
  {
    name: 'a cpu limit above max',
    desired: { c: { requests: { cpu: 100 }, limits: { cpu: 600 } } },
    judge: 'LimitRange',
  },
  { name: 'a memory limit above max', desired: { c: { limits: { memory: 600 * MI } } }, judge: 'LimitRange' },
  // 1.33 cannot lower a memory limit in place at all (422 before any admission): a request only.
  {
    name: 'a memory request below min',
    desired: { c: { requests: { memory: 40 * MI } } },
    judge: 'LimitRange',
  },
  {
    name: 'a limit/request ratio above max',
    desired: { c: { requests: { memory: 50 * MI } } },
    judge: 'LimitRange',
  },
  {
    name: 'requests.cpu past the quota',
    desired: { c: { requests: { cpu: 350 }, limits: { cpu: 400 } } },
    judge: 'ResourceQuota',
  },
  {
    name: 'within every bound',
    desired: { c: { requests: { cpu: 150 }, limits: { cpu: 300 } } },
    judge: 'sent',
  },
  {
    name: 'requests.cpu past the quota with what the last one added (250m used)',
    desired: { c: { requests: { cpu: 260 }, limits: { cpu: 300 } } },
    judge: 'ResourceQuota',
  },
  { name: 'a decrease under a full quota', desired: { c: { requests: { cpu: 80 } } }, judge: 'sent' },
];

describeRealApiserver(
  'the resize guards against real LimitRanger and ResourceQuota admission',
  (server) => {
    it('holds exactly what the server refuses, and lets through what it admits', async () => {
      const b = realBackend(server);
      const call = async (method: string, path: string, body?: unknown, contentType?: string) => {
        const r = await b.raw(method, path, { body, contentType });
        return r;
      };
      const ok = async (method: string, path: string, body?: unknown, contentType?: string) => {
        const r = await call(method, path, body, contentType);
        if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
        return r.json;
      };
      await ok('POST', '/api/v1/nodes', { metadata: { name: 'node-a' } });
      const offers = { cpu: '8', memory: '16Gi', pods: '110' };
      await ok(
        'PATCH',
        '/api/v1/nodes/node-a/status',
        { status: { capacity: offers, allocatable: offers } },
        SMP,
      );
      await ok('POST', '/api/v1/namespaces', { metadata: { name: NS } });
      await ok('POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: 'default' } });
      await ok('POST', `/api/v1/namespaces/${NS}/limitranges`, LIMIT_RANGE);
      const quota = await ok('POST', `/api/v1/namespaces/${NS}/resourcequotas`, {
        metadata: { name: 'rq' },
        spec: { hard: HARD },
      });
      // The quota controller's first count (there is no controller-manager here): nothing used yet.
      await ok('PUT', `/api/v1/namespaces/${NS}/resourcequotas/rq/status`, {
        ...quota,
        status: { hard: HARD, used: { 'requests.cpu': '0', 'limits.memory': '0' } },
      });
      for (const i of [1, 2])
        await ok('POST', `/api/v1/namespaces/${NS}/pods`, {
          metadata: { name: `agent-${i}` },
          spec: {
            nodeName: 'node-a',
            containers: [
              { name: 'c', image: 'busybox', resources: resources('100m', '100Mi', '200m', '200Mi') },
            ],
          },
        });
      const seen: string[] = [];
      for (const c of CASES) {
        const pod = c.judge === 'sent' ? 'agent-2' : 'agent-1';
        const raw = (await ok('GET', `/api/v1/namespaces/${NS}/pods/${pod}`)) as PodObject;
        const view = podView(raw);
        if (!view) throw new Error('no view of the pod');
        const ranges = (await ok('GET', `/api/v1/namespaces/${NS}/limitranges`)).items;
        const quotas = (await ok('GET', `/api/v1/namespaces/${NS}/resourcequotas`)).items;
        const after = amountsAfter(view, c.desired);
        const verdict =
          limitRangeViolations(ranges, after)[0] ??
          quotaViolations(quotas, quotaDelta(specAmounts(view), after))[0];
        const container = {
          name: 'c',
          resources: {
            ...(c.desired.c?.requests ? { requests: quantities(c.desired.c.requests) } : {}),
            ...(c.desired.c?.limits ? { limits: quantities(c.desired.c.limits) } : {}),
          },
        };
        const answer = await call(
          'PATCH',
          `/api/v1/namespaces/${NS}/pods/${pod}/resize`,
          { spec: { containers: [container] } },
          SMP,
        );
        seen.push(
          `${c.name}: fleetscope ${verdict ? `holds (${verdict.by}: ${verdict.message})` : 'sends'}; ${server.api().version} ${answer.status} ${answer.status >= 300 ? answer.json?.message : ''}`,
        );
        if (c.judge === 'sent') {
          expect(verdict, seen.at(-1)).toBeUndefined();
          expect(answer.status, seen.at(-1)).toBe(200);
        } else {
          expect(verdict?.by ?? 'sends', seen.at(-1)).toMatch(new RegExp(`^${c.judge} `));
          expect(answer.status, seen.at(-1)).toBe(403);
          expect(String(answer.json?.message), seen.at(-1)).toMatch(
            c.judge === 'LimitRange' ? /per Container is/ : /exceeded quota: rq/,
          );
        }
      }
      console.log(seen.join('\n'));
    }, 120_000);
  },
  { versions: SKEW_VERSIONS },
);

function quantities(p: { cpu?: number; memory?: number }): Record<string, string> {
  return {
    ...(p.cpu !== undefined ? { cpu: `${p.cpu}m` } : {}),
    ...(p.memory !== undefined ? { memory: String(p.memory) } : {}),
  };
}
