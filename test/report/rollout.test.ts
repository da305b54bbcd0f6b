/**
 * The report says what canary and revert did to a DaemonSet (issue 30): the rollout in the words of
 * `recommendations list`, and each revert with why and the sizes it took back, in the shared units.
 */
import { describe, expect, it } from 'vitest';
import type { ContainerRec } from '../../shared/nodescope/model.js';
import { emptyRollout, type RolloutRecord } from '../../shared/nodescope/rollout.js';
import type { DsHead } from '../../shared/nodescope/store.js';
import { buildReportModel, type ReportInputs } from '../../shared/report/build.js';
import { renderReportHtml } from '../../shared/report/html.js';

const MI = 2 ** 20;
const NOW = new Date('2026-11-24T05:00:00.000Z');
const rec = (cpu: number, memory: number): ContainerRec => {
  const a = { cpu, memory };
  return { target: a, lowerBound: a, upperBound: a, uncappedTarget: a } as unknown as ContainerRec;
};
const head = {
  cluster: 'a',
  namespace: 'monitoring',
  name: 'agent',
  vpa: { namespace: 'monitoring', name: 'agent', uid: 'u' },
  updateMode: 'InPlace',
  baseAt: NOW.getTime() - 3_600_000,
  containers: ['agent'],
  template: [{ name: 'agent', requests: { cpu: 200, memory: 256 * MI }, limits: {} }],
} as unknown as DsHead;

const rollout: RolloutRecord = {
  ...emptyRollout(),
  hold: {
    until: NOW.getTime() + 45 * 60_000,
    consecutive: 1,
    node: 'n2',
    reason: 'OOMKilled',
    at: NOW.getTime() - 15 * 60_000,
  },
  reverts: [
    {
      node: 'n2',
      podUid: 'p',
      at: NOW.getTime() - 15 * 60_000,
      reason: 'OOMKilled',
      detail: 'container agent was OOM-killed after the downsize',
      from: { agent: { requests: { memory: 64 * MI } } },
      to: { agent: { requests: { memory: 256 * MI } } },
      sent: true,
    },
  ],
};

const inputs = (): ReportInputs => ({
  clusters: ['a'],
  statuses: new Map([
    ['a', { cluster: 'a', reachable: true, metricsApi: 'available', observedAt: '', nodeCount: 2 }],
  ]),
  nodescopeCycled: new Set(['a']),
  daemonSets: [
    {
      head,
      recs: {
        nodes: { n1: { source: 'node', containers: { agent: rec(100, 64 * MI) } } },
        dsWide: { agent: rec(100, 64 * MI) },
        requests: { agent: { cpu: 200, memory: 256 * MI } },
        podRequests: {},
        asOf: NOW.toISOString(),
      },
      rollout,
    },
  ],
  balloons: [],
  identities: [],
  customClaims: new Map(),
  syncs: new Map(),
  features: [],
});

describe('the report: canary and revert', () => {
  it('carries the rollout and each revert with why, and renders them on the DaemonSet card', () => {
    const model = buildReportModel(inputs(), NOW);
    const ds = model.nodescope.daemonSets[0];
    expect(ds?.rollout).toEqual({
      phrase: 'held, lifts in 45m (OOMKilled on n2), 1 revert',
      reverts: [
        {
          node: 'n2',
          at: '2026-11-24T04:45:00.000Z',
          reason: 'OOMKilled',
          detail: 'container agent was OOM-killed after the downsize',
          sizeChange: 'agent memory request 64Mi → 256Mi',
        },
      ],
    });
    const html = renderReportHtml(model, '');
    expect(html).toContain('held, lifts in 45m (OOMKilled on n2), 1 revert');
    expect(html).toContain('agent memory request 64Mi → 256Mi');
  });

  it('says nothing of a rollout where none was stored', () => {
    const i = inputs();
    const { rollout: _none, ...bare } = i.daemonSets[0] as ReportInputs['daemonSets'][number];
    const model = buildReportModel({ ...i, daemonSets: [bare] }, NOW);
    expect(model.nodescope.daemonSets[0]?.rollout).toBeUndefined();
    expect(renderReportHtml(model, '')).not.toContain('Rollout (canary first');
  });
});
