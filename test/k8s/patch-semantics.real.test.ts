/**
 * The patch semantics fleetscope relies on, on a real kube-apiserver and on a simulator of the same
 * version, which must answer alike: a strategic-merge patch of pods/resize merges containers by name
 * (fleetscope's resize call, through its own client); a JSON merge patch replaces lists and deletes a
 * key given null (DaemonSets, ClusterProperties, feature objects); a JSON patch's failed `test` is
 * refused whole; server-side apply keeps each manager's fields and refuses a conflicting one.
 */
import { expect, it } from 'vitest';
import { clusterResizeApi } from '../../shared/resize/api.js';
import type { RawResponse } from '../sim/helpers.js';
import { type ApiBackend, onBothBackends } from '../support/backends.js';
import { describeRealApiserver } from '../support/real-apiserver.js';

const NS = 'patching';
const MERGE = 'application/merge-patch+json';
const JSON_PATCH = 'application/json-patch+json';
const APPLY = 'application/apply-patch+yaml';

const ok = async (b: ApiBackend, method: string, path: string, body: unknown, contentType?: string) => {
  const r = await b.raw(method, path, { body, contentType });
  if (r.status >= 300) throw new Error(`${b.name}: ${method} ${path}: ${r.status} ${r.text}`);
  return r.json;
};
const statusOf = (r: RawResponse) => ({ code: r.status, reason: r.json?.reason, message: r.json?.message });
const resources = (cpu: string, memory: string) => ({ requests: { cpu, memory }, limits: { cpu, memory } });

async function scenario(b: ApiBackend) {
  const record: Record<string, unknown> = {};
  await ok(b, 'POST', '/api/v1/namespaces', { metadata: { name: NS } });
  // No controller-manager on a bare server: the namespace's default ServiceAccount is made by hand.
  await ok(b, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name: 'default' } });
  await ok(b, 'POST', `/api/v1/namespaces/${NS}/pods`, {
    metadata: { name: 'agent' },
    spec: {
      containers: [
        { name: 'collector', image: 'busybox', resources: resources('100m', '64Mi') },
        { name: 'shipper', image: 'busybox', resources: resources('50m', '32Mi') },
      ],
    },
  });
  // Strategic merge by container name, through fleetscope's resize call: shipper keeps its resources.
  const client = await b.client();
  const resized = await clusterResizeApi(client).patchResize(NS, 'agent', {
    spec: { containers: [{ name: 'collector', resources: resources('200m', '64Mi') }] },
  });
  record.resized = resized.spec?.containers?.map((c) => ({ name: c.name, resources: c.resources }));

  const ds = `/apis/apps/v1/namespaces/${NS}/daemonsets`;
  await ok(b, 'POST', ds, {
    metadata: { name: 'balloon', labels: { keep: 'yes', drop: 'yes' } },
    spec: {
      selector: { matchLabels: { app: 'balloon' } },
      template: {
        metadata: { labels: { app: 'balloon' } },
        spec: {
          containers: [
            { name: 'a', image: 'pause' },
            { name: 'b', image: 'pause' },
          ],
        },
      },
    },
  });
  const merged = await ok(
    b,
    'PATCH',
    `${ds}/balloon`,
    {
      metadata: { labels: { drop: null } },
      spec: { template: { spec: { containers: [{ name: 'c', image: 'pause' }] } } },
    },
    MERGE,
  );
  record.mergeLabels = merged.metadata.labels;
  record.mergeContainers = merged.spec.template.spec.containers.map((c: { name: string }) => c.name);

  const cm = `/api/v1/namespaces/${NS}/configmaps`;
  await ok(b, 'POST', cm, { metadata: { name: 'settings' }, data: { mode: 'fast' } });
  const failedTest = await b.raw('PATCH', `${cm}/settings`, {
    body: [
      { op: 'test', path: '/data/mode', value: 'slow' },
      { op: 'replace', path: '/data/mode', value: 'off' },
    ],
    contentType: JSON_PATCH,
  });
  record.jsonPatchTest = statusOf(failedTest);
  record.afterFailedTest = (await ok(b, 'GET', `${cm}/settings`, undefined)).data;

  const applied = `${cm}/applied`;
  const apply = (manager: string, data: Record<string, string>, force = false) =>
    b.raw('PATCH', `${applied}?fieldManager=${manager}${force ? '&force=true' : ''}`, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied', namespace: NS }, data },
      contentType: APPLY,
    });
  record.applyCreate = (await apply('fleetscope', { owner: 'fleetscope' })).status;
  record.applyOther = (await apply('someone', { theirs: 'x' })).status;
  record.applyConflict = statusOf(await apply('someone', { owner: 'someone' }));
  record.afterApply = (await ok(b, 'GET', applied, undefined)).data;
  return record;
}

describeRealApiserver('patch semantics fleetscope relies on', (server) => {
  const records = onBothBackends(server, scenario);

  it('on the real server: each patch type does what fleetscope expects of it', () => {
    const r = records.get('real') ?? {};
    expect(r.resized).toEqual([
      { name: 'collector', resources: resources('200m', '64Mi') },
      { name: 'shipper', resources: resources('50m', '32Mi') },
    ]);
    expect(r.mergeLabels).toEqual({ keep: 'yes' });
    expect(r.mergeContainers).toEqual(['c']);
    expect(r.jsonPatchTest).toMatchObject({ code: 422 });
    expect(r.afterFailedTest).toEqual({ mode: 'fast' });
    expect([r.applyCreate, r.applyOther]).toEqual([201, 200]);
    expect(r.applyConflict).toMatchObject({ code: 409, reason: 'Conflict' });
    expect(r.afterApply).toEqual({ owner: 'fleetscope', theirs: 'x' });
  });

  it('the simulator answers every step as the real server did, but for its listed divergences', () => {
    const { applyConflict: _c, afterApply: _a, ...real } = records.get('real') ?? {};
    const { applyConflict, afterApply, ...sim } = records.get('sim') ?? {};
    expect(sim).toEqual(real);
    // local/sim/README.md, "Divergences": the simulator's server-side apply has no field conflicts
    // (fleetscope itself never applies). When it gains them, this turns red: move them into the check above.
    expect({ applyConflict, afterApply }).toEqual({
      applyConflict: { code: 200, reason: undefined, message: undefined },
      afterApply: { owner: 'someone', theirs: 'x' },
    });
  });
});
