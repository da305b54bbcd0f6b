/**
 * Beside upstream VPA, on a real kube-apiserver (and a simulator of the same version, which must find
 * the same): a scoped VPA that names no recommender is fleetscope's until upstream's recommender
 * Deployment appears in kube-system, and is left alone from then on, with the reason; a VPA naming
 * fleetscope stays fleetscope's; one naming another recommender is skipped with the reason; the
 * admission controller is found by its webhook registration.
 */
import { expect, it, vi } from 'vitest';
import { RawReader } from '../../shared/k8s/raw-reader.js';
import { VPA_CRD_NAME, vpaCrd } from '../../shared/kernel/crds/vpa.js';
import { applyCrdPlan, planScopedCrd, readVpaCrd } from '../../shared/nodescope/crd-plan.js';
import { findTargets } from '../../shared/nodescope/find-targets.js';
import { type ApiBackend, onBothBackends } from '../support/backends.js';
import { describeRealApiserver } from '../support/real-apiserver.js';
import { vpaObject } from './helpers.js';

const NS = 'monitoring';
const VPAS = `/apis/autoscaling.k8s.io/v1/namespaces/${NS}/verticalpodautoscalers`;

const created = async (b: ApiBackend, path: string, body: unknown) => {
  const r = await b.raw('POST', path, { body });
  if (r.status !== 201) throw new Error(`${b.name}: POST ${path}: ${r.status} ${r.text}`);
  return r;
};

const daemonSet = (name: string) => ({
  apiVersion: 'apps/v1',
  kind: 'DaemonSet',
  metadata: { name, namespace: NS },
  spec: {
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'agent', image: 'agent:1', resources: { requests: { cpu: '50m' } } }] },
    },
  },
});

const scopedVpa = (name: string, recommenders?: string[]) => {
  const v = vpaObject({
    name,
    via: 'spec',
    mode: 'InPlace',
    target: { apiVersion: 'apps/v1', kind: 'DaemonSet', name },
  }) as { spec: Record<string, unknown> };
  if (recommenders) v.spec.recommenders = recommenders.map((n) => ({ name: n }));
  return v;
};

const upstreamRecommender = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'vpa-recommender', namespace: 'kube-system' },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'vpa-recommender' } },
    template: {
      metadata: { labels: { app: 'vpa-recommender' } },
      spec: {
        containers: [{ name: 'recommender', image: 'registry.k8s.io/autoscaling/vpa-recommender:1.8.0' }],
      },
    },
  },
};

/** As upstream's admission controller registers itself; Ignore, and matching nothing this test creates. */
const webhook = {
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'MutatingWebhookConfiguration',
  metadata: { name: 'vpa-webhook-config' },
  webhooks: [
    {
      name: 'vpa.k8s.io',
      admissionReviewVersions: ['v1'],
      sideEffects: 'None',
      failurePolicy: 'Ignore',
      clientConfig: { service: { namespace: 'kube-system', name: 'vpa-webhook', port: 443 } },
      rules: [
        {
          operations: ['CREATE'],
          apiGroups: ['example.invalid'],
          apiVersions: ['v1'],
          resources: ['nothing'],
        },
      ],
    },
  ],
};

/** A changed schema takes effect shortly after the update on a real server: wait until scope is kept. */
async function waitUntilScopeKept(b: ApiBackend) {
  await vi.waitFor(
    async () => {
      const probe = await b.raw('POST', `${VPAS}?dryRun=All`, { body: scopedVpa('probe') });
      if (probe.json?.spec?.scope !== 'node') throw new Error(`${b.name}: spec.scope still pruned`);
    },
    { timeout: 30_000, interval: 200 },
  );
}

async function scenario(b: ApiBackend) {
  const record: Record<string, unknown> = {};
  await created(b, '/api/v1/namespaces', { metadata: { name: NS } });
  // install-crd over upstream's stock CRD: the plan first; a dry run stores nothing; then the change.
  await created(b, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', vpaCrd());
  await b.established(VPA_CRD_NAME);
  const client = await b.client();
  const version = async () => (await readVpaCrd(client))?.metadata?.resourceVersion;
  const plan = planScopedCrd(await readVpaCrd(client));
  record.plan = [plan.action, ...plan.changes];
  const stock = await version();
  await applyCrdPlan(client, plan, { dryRun: true });
  record.dryRunStoredNothing = (await version()) === stock;
  await applyCrdPlan(client, plan, { dryRun: false });
  record.applied = (await version()) !== stock;
  const after = planScopedCrd(await readVpaCrd(client));
  record.planAfter = [after.action, ...after.changes];
  await b.established(VPA_CRD_NAME);
  await waitUntilScopeKept(b);
  for (const name of ['plain', 'ours', 'theirs'])
    await created(b, `/apis/apps/v1/namespaces/${NS}/daemonsets`, daemonSet(name));
  await created(b, VPAS, scopedVpa('plain'));
  await created(b, VPAS, scopedVpa('ours', ['fleetscope']));
  await created(b, VPAS, scopedVpa('theirs', ['strict']));
  const found = async () => {
    const f = await findTargets(new RawReader(client), 500);
    return {
      targets: f.targets.map((t) => t.vpa.name),
      skipped: f.skipped.map((s) => [s.vpa, s.reason]),
      rejected: f.rejected.map((r) => [r.vpa, r.reason]),
      upstream: f.upstream,
    };
  };
  record.without = await found();
  await created(b, '/apis/apps/v1/namespaces/kube-system/deployments', upstreamRecommender);
  record.withRecommender = await found();
  await created(b, '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', webhook);
  record.withWebhook = (await found()).upstream;
  return record;
}

describeRealApiserver('fleetscope beside upstream VPA', (server) => {
  const records = onBothBackends(server, scenario);
  const theirs = ['theirs', 'spec.recommenders names strict, not fleetscope: left to that recommender'];

  it("a VPA without recommenders naming fleetscope is left alone when upstream's recommender is present", () => {
    const r = records.get('real') ?? {};
    expect(r.without).toEqual({
      targets: ['ours', 'plain'],
      skipped: [theirs],
      rejected: [],
      upstream: { state: 'read', components: [] },
    });
    expect(r.withRecommender).toEqual({
      targets: ['ours'],
      skipped: [
        [
          'plain',
          "it names no recommender and upstream's recommender runs (kube-system/vpa-recommender), which serves such VPAs: left to it; set spec.recommenders: [{name: fleetscope}] for fleetscope to size it",
        ],
        theirs,
      ],
      rejected: [],
      upstream: {
        state: 'read',
        components: [{ role: 'recommender', where: 'kube-system/vpa-recommender' }],
      },
    });
    expect(r.withWebhook).toEqual({
      state: 'read',
      components: [
        { role: 'recommender', where: 'kube-system/vpa-recommender' },
        {
          role: 'admission-controller',
          where: 'MutatingWebhookConfiguration vpa-webhook-config -> service kube-system/vpa-webhook',
        },
      ],
    });
  });

  it('install-crd over the stock CRD: a plan, a dry run that stores nothing, then the change', () => {
    const r = records.get('real') ?? {};
    const v1 = 'spec.versions[v1].schema.openAPIV3Schema.properties';
    expect(r.plan).toEqual([
      'update',
      '+ metadata.annotations.fleetscope.io/variant',
      '+ metadata.annotations.fleetscope.io/status-shape',
      `+ ${v1}.spec.properties.scope`,
      `+ ${v1}.spec.x-kubernetes-validations`,
      `+ ${v1}.status.properties.recommendationGroups`,
      `+ ${v1}.status.properties.nodeScope`,
    ]);
    expect(r.dryRunStoredNothing).toBe(true);
    expect(r.applied).toBe(true);
    expect(r.planAfter).toEqual(['unchanged']);
  });

  it('the simulator finds the same as the real server', () => {
    expect(records.get('sim')).toEqual(records.get('real'));
  });
});
