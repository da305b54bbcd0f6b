/**
 * The VPA CRD fleetscope installs (spec.scope, its label-key pattern and CEL rule) and the upstream checkpoint CRD,
 * on a real kube-apiserver: the same steps run against the real server and a simulator of the same
 * version, and the simulator must answer as the real one does (status codes, reasons, messages and
 * causes, what is kept and what is pruned).
 */
import { expect, it, vi } from 'vitest';
import { RawReader } from '../../shared/k8s/raw-reader.js';
import { vpaCheckpointCrd, vpaCrd } from '../../shared/kernel/crds/vpa.js';
import { installScopedCrd } from '../../shared/nodescope/crd.js';
import { patchVpaStatus } from '../../shared/nodescope/incluster.js';
import { checkpointObject } from '../../shared/recommendation/checkpoint/vpa-checkpoint.js';
import type { RawResponse } from '../sim/helpers.js';
import { type ApiBackend, onBothBackends } from '../support/backends.js';
import { describeRealApiserver } from '../support/real-apiserver.js';
import { vpaObject } from './helpers.js';

const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const NS = 'monitoring';
const VPAS = `/apis/autoscaling.k8s.io/v1/namespaces/${NS}/verticalpodautoscalers`;
const CHECKPOINTS = `/apis/autoscaling.k8s.io/v1/namespaces/${NS}/verticalpodautoscalercheckpoints`;

/** What a refusal says, as a client sees it. */
const refusal = (r: RawResponse) => ({
  status: r.status,
  reason: r.json?.reason,
  message: r.json?.message,
  causes: r.json?.details?.causes,
});

const created = async (b: ApiBackend, path: string, body: unknown) => {
  const r = await b.raw('POST', path, { body });
  if (r.status !== 201) throw new Error(`${b.name}: POST ${path}: ${r.status} ${r.text}`);
  return r;
};

/** A checkpoint as `fleetscope recommendations checkpoints` exports it: node-scoped, with histograms. */
const CHECKPOINT = checkpointObject(
  NS,
  'agent',
  'shipper',
  {
    lastUpdateTime: '2026-11-26T10:00:00Z',
    version: 'v3',
    cpuHistogram: {
      referenceTimestamp: '2026-11-26T00:00:00Z',
      bucketWeights: { '3': 10000, '5': 2500 },
      totalWeight: 4.5,
    },
    memoryHistogram: {
      referenceTimestamp: '2026-11-27T00:00:00Z',
      bucketWeights: { '12': 10000 },
      totalWeight: 1,
    },
    firstSampleStart: '2026-11-26T06:00:00Z',
    lastSampleStart: '2026-11-26T09:59:00Z',
    totalSamplesCount: 240,
  },
  'node-a',
);

const POOL = 'fleetscope.test/pool';
const ZONE = 'topology.kubernetes.io/zone';

/** A VPA with another name and scope. */
const withScope = (vpa: Record<string, unknown>, name: string, scope: string) => {
  const v = structuredClone(vpa) as { metadata: { name: string }; spec: Record<string, unknown> };
  v.metadata.name = name;
  v.spec.scope = scope;
  return v;
};

/** The groups as fleetscope publishes them: __absent__, the empty value, a value; bounds and none. */
const GROUPS = [
  {
    scopeValue: '',
    containerRecommendations: [
      {
        containerName: 'collector',
        target: { cpu: '120m', memory: '100Mi' },
        lowerBound: { cpu: '25m', memory: '64Mi' },
        upperBound: { cpu: '2', memory: '1Gi' },
        uncappedTarget: { cpu: '120m', memory: '100Mi' },
      },
    ],
  },
  {
    scopeValue: '__absent__',
    containerRecommendations: [{ containerName: 'collector', target: { cpu: '63m', memory: '262144k' } }],
  },
  {
    scopeValue: 'gpu',
    containerRecommendations: [
      { containerName: 'collector', target: { cpu: '1500m', memory: '2Gi' } },
      { containerName: 'shipper', target: { cpu: '11m', memory: '50331648' } },
    ],
  },
];

/** status.recommendation as fleetscope publishes it: the DaemonSet-wide fallback, with bounds. */
const FALLBACK = {
  containerRecommendations: [
    {
      containerName: 'collector',
      target: { cpu: '90m', memory: '309Mi' },
      lowerBound: { cpu: '25m', memory: '64Mi' },
      upperBound: { cpu: '2', memory: '1Gi' },
      uncappedTarget: { cpu: '90m', memory: '323522422' },
    },
  ],
};

const SUMMARY = {
  nodes: 3,
  nodesWithHistory: 3,
  fallbackNodes: 0,
  containers: {},
  perNodeTotal: {},
  daemonSetWideTotal: {},
  updatedAt: '2026-11-26T00:00:00Z',
};

/** The scenario, step by step; every answer that matters goes into the record compared across backends. */
async function scenario(b: ApiBackend) {
  const record: Record<string, unknown> = {};
  await created(b, '/api/v1/namespaces', { metadata: { name: NS } });
  await created(b, CRDS, vpaCrd());
  await b.established('verticalpodautoscalers.autoscaling.k8s.io');
  const before = await created(b, VPAS, vpaObject({ name: 'before', via: 'spec' }));
  record.stockPrunesScope = before.json.spec.scope === undefined;
  record.stockWarning = before.headers.warning;

  const client = await b.client();
  record.install = [await installScopedCrd(client), await installScopedCrd(client)];
  // A changed schema takes effect shortly after the update on a real server: wait until scope is kept.
  await vi.waitFor(
    async () => {
      const probe = await b.raw('POST', `${VPAS}?dryRun=All`, {
        body: vpaObject({ name: 'probe', via: 'spec' }),
      });
      if (probe.json?.spec?.scope !== 'node') throw new Error(`${b.name}: spec.scope still pruned`);
    },
    { timeout: 30_000, interval: 200 },
  );
  record.scoped = (await created(b, VPAS, vpaObject({ name: 'agent', via: 'spec' }))).json.spec.scope;
  const zone = vpaObject({ name: 'zone', via: 'spec' }) as { spec: Record<string, unknown> };
  zone.spec.scope = 'zone name';
  record.pattern = refusal(await b.raw('POST', VPAS, { body: zone }));
  const deployment = vpaObject({
    name: 'web',
    via: 'spec',
    target: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
  });
  record.cel = refusal(await b.raw('POST', VPAS, { body: deployment }));
  record.labelCel = refusal(await b.raw('POST', VPAS, { body: withScope(deployment, 'web-zone', ZONE) }));

  // AEP-10031: a label key as the scope, and status.groups through the status subresource.
  const pool = await created(b, VPAS, withScope(vpaObject({ name: 'pool', via: 'spec' }), 'pool', POOL));
  record.labelScope = pool.json.spec.scope;
  // Written as a cycle writes it, AEP-10031 as it stands (the default shape): the condition,
  // status.nodeScope, the groups and the DaemonSet-wide fallback in one merge patch.
  const raw = new RawReader(client);
  const condition = {
    type: 'RecommendationProvided',
    status: 'True',
    reason: 'NodeScope',
    message: 'groups',
  } as const;
  const at = Date.UTC(2026, 10, 26);
  await patchVpaStatus(raw, { namespace: NS, name: 'pool' }, condition, at, undefined, {
    nodeScope: SUMMARY,
    recommendation: FALLBACK,
    recommendationGroups: GROUPS,
    groups: GROUPS, // not in this shape's CRD: pruned
  });
  const read = await b.raw('GET', `${VPAS}/pool`);
  record.upstream = {
    recommendationGroups: read.json?.status?.recommendationGroups,
    recommendation: read.json?.status?.recommendation,
    groups: read.json?.status?.groups ?? null,
  };
  // The Deckhouse fork's shape, installed over it: status.groups kept too, the recommendation cleared.
  record.deckhouseInstall = await installScopedCrd(client, 'deckhouse');
  await vi.waitFor(
    async () => {
      await patchVpaStatus(raw, { namespace: NS, name: 'pool' }, condition, at, read.json, {
        groups: GROUPS,
        recommendation: null,
        recommendationGroups: null,
      });
      const again = await b.raw('GET', `${VPAS}/pool`);
      if (!again.json?.status?.groups) throw new Error(`${b.name}: status.groups still pruned`);
      record.deckhouse = {
        groups: again.json.status.groups,
        recommendation: again.json.status.recommendation ?? null,
        recommendationGroups: again.json.status.recommendationGroups ?? null,
      };
    },
    { timeout: 30_000, interval: 200 },
  );

  await created(b, CRDS, vpaCheckpointCrd());
  await b.established('verticalpodautoscalercheckpoints.autoscaling.k8s.io');
  const cp = await created(b, CHECKPOINTS, CHECKPOINT);
  record.checkpointCreate = { spec: cp.json.spec, status: cp.json.status, warning: cp.headers.warning };
  const path = `${CHECKPOINTS}/${CHECKPOINT.metadata.name}`;
  const put = await b.raw('PUT', `${path}/status`, { body: { ...cp.json, status: CHECKPOINT.status } });
  record.checkpointStatus = { code: put.status, status: put.json?.status };
  return record;
}

describeRealApiserver('the scoped VPA CRD and checkpoints', (server) => {
  const records = onBothBackends(server, scenario);

  it('the real server: scope pruned by the stock CRD, kept once installed, its pattern and CEL rule enforced', () => {
    const r = records.get('real') ?? {};
    expect(r.stockPrunesScope).toBe(true);
    expect(r.install).toEqual(['updated', 'unchanged']);
    expect(r.scoped).toBe('node');
    expect(r.pattern).toMatchObject({
      status: 422,
      reason: 'Invalid',
      message: expect.stringContaining('spec.scope'),
    });
    expect(r.cel).toMatchObject({
      status: 422,
      reason: 'Invalid',
      message: expect.stringContaining('scope applies to DaemonSets only'),
    });
    expect(r.labelCel).toMatchObject({
      status: 422,
      message: expect.stringContaining('spec.scope: Forbidden: scope applies to DaemonSets only'),
    });
  });

  it('the real server keeps a label key as the scope, and either shape exactly as written', () => {
    const r = records.get('real') ?? {};
    expect(r.labelScope).toBe(POOL);
    expect(r.upstream).toEqual({ recommendationGroups: GROUPS, recommendation: FALLBACK, groups: null });
    expect(r.deckhouseInstall).toBe('updated');
    expect(r.deckhouse).toEqual({ groups: GROUPS, recommendation: null, recommendationGroups: null });
  });

  it("the real server keeps an exported checkpoint's histograms, but prunes its scopeValue", () => {
    const r = records.get('real') ?? {};
    // Upstream's checkpoint CRD has no status subresource (the recommender writes whole objects), so
    // applying an export keeps its histograms. It has no spec.scopeValue either (AEP-10031 is not in
    // the stock CRD): a node-scoped checkpoint applied to such a cluster loses its node, with a warning.
    const { scopeValue: _, ...unscoped } = CHECKPOINT.spec;
    expect(r.checkpointCreate).toEqual({
      spec: unscoped,
      status: CHECKPOINT.status,
      warning: '299 - "unknown field \\"spec.scopeValue\\""',
    });
    expect(r.checkpointStatus).toMatchObject({ code: 404 });
  });

  it('the simulator answers every step as the real server did', () => {
    expect(records.get('sim')).toEqual(records.get('real'));
  });
});
