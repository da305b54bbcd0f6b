/**
 * The report model and its charts from plain data (no servers): the figures people read, the reasons
 * an empty section gives, and the highlighting of features that move or leave something behind.
 */
import { describe, expect, it } from 'vitest';
import { amounts } from '../../shared/balloons/amounts.js';
import type { NodeState } from '../../shared/balloons/store.js';
import { poolValues } from '../../shared/balloons/summary-model.js';
import type { StoredIdentity } from '../../shared/claims/store.js';
import type { FeatureRecord } from '../../shared/features/model.js';
import { readableUsd } from '../../shared/kernel/units-format.js';
import type { ContainerRec } from '../../shared/nodescope/model.js';
import type { DsHead } from '../../shared/nodescope/store.js';
import { buildReportModel, type ReportInputs } from '../../shared/report/build.js';
import { chartsOf } from '../../shared/report/charts.js';
import { renderReportHtml } from '../../shared/report/html.js';
import { PAGE_SCRIPT } from '../../shared/report/page-assets.js';

const MI = 2 ** 20;
const GI = 2 ** 30;
const NOW = new Date('2026-11-24T05:00:00.000Z');

const rec = (cpu: number, memory: number): ContainerRec => {
  const a = { cpu, memory };
  return { target: a, lowerBound: a, upperBound: a, uncappedTarget: a } as unknown as ContainerRec;
};

const head = (cluster: string, name: string): DsHead =>
  ({
    cluster,
    namespace: 'monitoring',
    name,
    vpa: { namespace: 'monitoring', name, uid: 'u' },
    updateMode: 'Auto',
    baseAt: NOW.getTime() - 3_600_000,
    containers: ['agent'],
    template: [{ name: 'agent', requests: { cpu: 200, memory: 256 * MI }, limits: {} }],
  }) as unknown as DsHead;

const node = (pool: string, balloon: number): NodeState => ({
  allocatable: amounts(8000, 32 * GI),
  capacity: amounts(8000, 32 * GI),
  workloads: amounts(3000, 8 * GI),
  balloon: amounts(balloon, balloon * (GI / 1000)),
  target: amounts(balloon, 0),
  source: { kind: 'policy', policy: pool, held: false },
});

const feature = (cluster: string, name: string, state: FeatureRecord['state']): FeatureRecord => ({
  cluster,
  namespace: 'fleetscope-system',
  name,
  default: 'on',
  state,
  tasks:
    state === 'TurningOn'
      ? [{ spec: {} as never, title: 'wait for uses', attempts: 0, writes: 0, waitingFor: 'components' }]
      : [],
  ...(state === 'TurningOn'
    ? { transition: { to: 'On', startedAt: NOW.getTime() - 60_000, reason: 'default on', done: [] } }
    : {}),
  history: [],
  version: 1,
  updatedAt: NOW.getTime(),
});

function inputs(over: Partial<ReportInputs> = {}): ReportInputs {
  return {
    clusters: ['a', 'b'],
    statuses: new Map([
      ['a', { cluster: 'a', reachable: true, metricsApi: 'available', observedAt: '', nodeCount: 3 }],
      ['b', { cluster: 'b', reachable: false, metricsApi: 'unknown', observedAt: '', error: 'timeout' }],
    ]),
    nodescopeCycled: new Set(['a']),
    daemonSets: [
      {
        head: head('a', 'agent'),
        recs: {
          // One busy node, two idle ones: the DaemonSet-wide target is the busy node's size.
          nodes: {
            n1: { source: 'node', containers: { agent: rec(400, 512 * MI) } },
            n2: { source: 'node', containers: { agent: rec(50, 64 * MI) } },
            n3: { source: 'fallback', containers: { agent: rec(400, 512 * MI) } },
          },
          dsWide: { agent: rec(400, 512 * MI) },
          requests: { agent: { cpu: 200, memory: 256 * MI } },
          // n1's pod was resized in place to 300m; n3's pod was not seen yet (the template counts).
          podRequests: {
            n1: { agent: { cpu: 300, memory: 256 * MI } },
            n2: { agent: { cpu: 200, memory: 256 * MI } },
          },
          asOf: '2026-11-24T04:55:00.000Z',
        },
      },
      { head: head('b', 'agent') },
    ],
    balloons: [
      {
        cluster: 'a',
        policies: 1,
        state: {
          cluster: 'a',
          at: 0,
          cycleId: 'c',
          nodes: { x: node('elastic', 2000), y: node('elastic', 1000) },
          errors: [],
          version: 1,
        },
      },
      { cluster: 'b', policies: 0 },
    ],
    identities: [
      {
        cluster: 'a',
        clusterId: 'id-a',
        idSource: 'kube-system-uid',
        clusterSet: 'blue',
        memberSince: 'then',
        version: 1,
        updatedAt: '',
      },
      {
        cluster: 'b',
        clusterId: 'id-b',
        idSource: 'operator',
        pending: { op: 'join', set: 'blue', at: 'now', token: 't' },
        version: 1,
        updatedAt: '',
      },
    ] as StoredIdentity[],
    customClaims: new Map([['a', ['team.example.com']]]),
    syncs: new Map([['a', { cluster: 'a', state: 'in-sync', at: '' }]]),
    features: [
      { record: feature('a', 'balloons', 'On'), dangling: [] },
      { record: feature('a', 'nodescope', 'TurningOn'), dangling: [] },
      { record: feature('b', 'balloons', 'Off'), dangling: ['state: 3 stored item(s) under balloons#'] },
      // An On feature's "dangling" is not a thing: only Off features are flagged.
      { record: feature('b', 'nodescope', 'On'), dangling: ['ignored'] },
    ],
    ...over,
  };
}

describe('the report model', () => {
  const m = buildReportModel(inputs(), NOW);

  it('puts each node target next to the DaemonSet-wide one and says what per-node sizing saves', () => {
    const ds = m.nodescope.daemonSets[0]!;
    expect(ds.nodes.map((n) => [n.node, n.source, n.target.cpu])).toEqual([
      ['n1', 'node', 400],
      ['n3', 'fallback', 400],
      ['n2', 'node', 50],
    ]);
    expect(ds.dsWide).toEqual({ cpu: 400, memory: 512 * MI });
    expect(ds.perNodeTotal).toEqual({ cpu: 850, memory: 1088 * MI });
    expect(ds.dsWideTotal).toEqual({ cpu: 1200, memory: 1536 * MI });
    expect(ds.delta).toEqual({ cpu: -350, memory: -448 * MI });
    expect(m.summary.perNodeDelta).toEqual(ds.delta);
    // Requests today are the pods' (n1 resized to 300m), the template's where no pod was seen yet.
    expect(ds.nodes.map((n) => [n.node, n.requests.cpu, n.requestsFrom])).toEqual([
      ['n1', 300, 'pod'],
      ['n3', 200, 'template'],
      ['n2', 200, 'pod'],
    ]);
    expect(ds.requestsTotal).toEqual({ cpu: 700, memory: 768 * MI });
    expect(ds.change).toEqual({ cpu: 150, memory: 320 * MI });
    expect(ds.asOf).toBe('2026-11-24T04:55:00.000Z');
    // Cluster b's cycle never ran: its DaemonSet says so instead of drawing nothing.
    expect(m.nodescope.daemonSets[1]!.empty).toMatch(/no cycle has run/);
  });

  it('shows a label scope\'s groups, one row per scope value, __absent__ and "" said readably', () => {
    const pool = 'fleetscope.test/pool';
    const scope = { key: pool, perNode: false, groupLabel: pool };
    const grouped = buildReportModel(
      inputs({
        daemonSets: [
          {
            head: head('a', 'agent'),
            recs: {
              nodes: {
                n1: { source: 'group', group: 'gpu', containers: { agent: rec(400, 512 * MI) } },
                n2: { source: 'group', group: '__absent__', containers: { agent: rec(50, 64 * MI) } },
                n3: { source: 'group', group: '', containers: { agent: rec(100, 128 * MI) } },
              },
              dsWide: { agent: rec(400, 512 * MI) },
              scope,
              groups: {
                gpu: { agent: rec(400, 512 * MI) },
                __absent__: { agent: rec(50, 64 * MI) },
                '': { agent: rec(100, 128 * MI) },
              },
              requests: { agent: { cpu: 200, memory: 256 * MI } },
              podRequests: {},
              asOf: '2026-11-24T04:55:00.000Z',
            },
          },
        ],
      }),
      NOW,
    );
    const ds = grouped.nodescope.daemonSets[0]!;
    expect(ds.groups?.map((g) => [g.value, g.label, g.nodes, g.target.cpu])).toEqual([
      ['', `${pool}=""`, 1, 100],
      ['__absent__', `no ${pool} label`, 1, 50],
      ['gpu', `${pool}=gpu`, 1, 400],
    ]);
    const html = renderReportHtml(grouped, '/* chart.js */');
    for (const label of [`${pool}=&quot;&quot;`, `no ${pool} label`, `${pool}=gpu`])
      expect(html).toContain(label);
    // Each node's bar says its group the same way.
    const labels = chartsOf(grouped).find((c) => c.id === 'ds-0-cpu')?.labels;
    expect(labels).toEqual([
      `n1 (group ${pool}=gpu)`,
      `n3 (group ${pool}="")`,
      `n2 (group no ${pool} label)`,
    ]);
    // A node scope has no group table: its groups only size nodes without history.
    expect(m.nodescope.daemonSets[0]!.groups).toBeUndefined();
  });

  it("sums requests today (the pods' requests) against the recommendations per cluster, and the headline compares the same", () => {
    expect(m.summary).toMatchObject({
      requestsToday: { cpu: 700, memory: 768 * MI },
      recommended: { cpu: 850, memory: 1088 * MI },
      change: { cpu: 150, memory: 320 * MI },
    });
    expect(m.requests.clusters).toEqual([
      {
        cluster: 'a',
        current: { cpu: 700, memory: 768 * MI },
        recommended: { cpu: 850, memory: 1088 * MI },
        daemonSets: 1,
      },
    ]);
  });

  it('splits each node pool into workloads, free and capacity that does not exist', () => {
    expect(m.balloons.pools).toEqual([
      expect.objectContaining({
        cluster: 'a',
        pool: 'elastic',
        nodes: 2,
        workloads: { cpu: 6000, memory: 16 * GI },
        balloon: { cpu: 3000, memory: 3 * GI },
        free: { cpu: 7000, memory: 45 * GI },
      }),
    ]);
  });

  it("values each pool's ballooned capacity at its nodes' prices, the same figure balloons status -o wide shows", () => {
    const price = { instanceType: 'm5.2xlarge', hourlyUsd: 0.384, from: 'table' as const };
    const priced = { x: { ...node('elastic', 2000), price }, y: node('elastic', 1000) };
    const base = inputs();
    const withPrices = buildReportModel(
      {
        ...base,
        balloons: [{ cluster: 'a', policies: 1, state: { ...base.balloons[0]!.state!, nodes: priced } }],
      },
      NOW,
    );
    // x: a quarter of the cpu and 1/16 of the memory ballooned, half each, at 0.384 USD/h for 730 h.
    const expected = ((2000 / 8000 + 2 / 32) / 2) * 0.384 * 730;
    const pool = withPrices.balloons.pools[0]!;
    expect(pool.balloonMonthlyUsd).toBeCloseTo(expected, 6);
    expect(pool.unpricedNodes).toBe(1); // y has no known price: not valued, and said so
    expect(poolValues(Object.values(priced))).toEqual([
      { pool: 'elastic', monthlyUsd: pool.balloonMonthlyUsd, unpriced: 1 },
    ]);
    expect(renderReportHtml(withPrices, '')).toContain(`a / elastic ${readableUsd(expected)}/month`);
  });

  it('lists ClusterSet members, with a pending join shown as such', () => {
    expect(m.claims.sets).toEqual([
      {
        name: 'blue',
        members: [
          { cluster: 'a', clusterId: 'id-a', since: 'then' },
          { cluster: 'b', clusterId: 'id-b', pending: 'join blue since now' },
        ],
      },
    ]);
    expect(m.claims.rows[0]).toMatchObject({ customClaims: ['team.example.com'], sync: 'in-sync' });
  });

  it('highlights transitions in progress and Off features with dangling state', () => {
    const cell = (c: string, f: string) => m.features.cells.find((x) => x.cluster === c && x.feature === f)!;
    expect(cell('a', 'fleetscope-system/nodescope').moving).toEqual({
      task: 'wait for uses',
      waitingFor: 'components',
      since: '2026-11-24T04:59:00.000Z',
    });
    expect(cell('b', 'fleetscope-system/balloons').dangling).toEqual([
      'state: 3 stored item(s) under balloons#',
    ]);
    expect(cell('b', 'fleetscope-system/nodescope').dangling).toEqual([]);
    expect(m.summary).toMatchObject({ featuresMoving: 1, featuresDangling: 1, clusters: 2, reachable: 1 });
  });

  it('counts one chart per resource for each DaemonSet with nodes, requests, pools; one for sets and features', () => {
    expect(chartsOf(m).map((c) => c.id)).toEqual([
      'ds-0-cpu',
      'ds-0-memory',
      'requests-cpu',
      'requests-memory',
      'balloons-cpu',
      'balloons-memory',
      'clustersets',
      'features',
    ]);
    // Axes in cores and GiB; tooltips in what people read.
    const cpu = chartsOf(m)[0]!;
    expect(cpu.datasets[0]).toMatchObject({ data: [0.4, 0.4, 0.05], readable: ['400m', '400m', '50m'] });
    expect(chartsOf(m)[1]!.datasets[1]!.readable[0]).toBe('512Mi');
  });

  it("draws each node's requests today as a marker of its own, not a line across the nodes", () => {
    const today = chartsOf(m)[0]!.datasets.find((d) => d.label === "pod's requests today");
    expect(today).toMatchObject({ marker: true });
    expect(today).not.toHaveProperty('line');
    // The page draws a marker dataset unjoined: points, no line between categories.
    expect(PAGE_SCRIPT).toMatch(/showLine: d\.marker \? false/);
  });

  it('says why each section is empty', () => {
    const none = buildReportModel(
      inputs({
        clusters: ['a'],
        nodescopeCycled: new Set(),
        daemonSets: [],
        balloons: [{ cluster: 'a', policies: 0 }],
        identities: [],
        features: [],
      }),
      NOW,
    );
    expect(none.nodescope.empty).toBe('no nodescope cycle has run yet');
    expect(none.requests.empty).toMatch(/no recommendation yet/);
    expect(none.balloons.empty).toMatch(/no balloon cycle has run yet/);
    expect(none.claims.empty).toMatch(/no cluster has an ID yet/);
    expect(none.features.empty).toMatch(/no feature announced yet/);
    expect(chartsOf(none)).toEqual([]);
    const noPolicy = buildReportModel(
      inputs({
        balloons: [
          {
            cluster: 'a',
            policies: 0,
            state: { cluster: 'a', at: 0, cycleId: 'c', nodes: {}, errors: [], version: 1 },
          },
        ],
      }),
      NOW,
    );
    expect(noPolicy.balloons.empty).toMatch(/no balloon policy/);
    const empty = buildReportModel(
      inputs({ clusters: [], daemonSets: [], balloons: [], identities: [], features: [] }),
      NOW,
    );
    expect(empty.nodescope.empty).toMatch(/no cluster is registered/);
  });
});

describe('the HTML report', () => {
  it('is one file: no external reference, a CSP that forbids fetching, escaped text', () => {
    const evil = inputs({
      clusters: ['a'],
      daemonSets: [{ ...inputs().daemonSets[0]!, head: { ...head('a', '<img src=x onerror=alert(1)>') } }],
    });
    const html = renderReportHtml(buildReportModel(evil, NOW, 'a'), '/* chart.js */');
    expect(html).toContain("default-src 'none'");
    expect(html).not.toMatch(/<(script|link|img|iframe)[^>]+(src|href)=/i);
    expect(html).not.toContain('<img src=x');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    // The chart data cannot close its <script> element either.
    expect(html.match(/<\/script>/g)).toHaveLength(3);
    expect(html).toContain(
      'generated <time datetime="2026-11-24T05:00:00.000Z">2026-11-24 05:00:00 UTC</time>',
    );
  });
});
