/**
 * Feature objects and the objects feature tasks write, on a real kube-apiserver and on a simulator of
 * the same version, which must answer alike: the Feature CRD fleetscope installs, its object applied
 * (created, then unchanged, then updated) through the ObjectsApi the tasks use, a component's use
 * reported by a merge patch of status.uses (one key per component), a use without its time refused
 * by the schema, the status subresource keeping spec out of reach, and the tasks' own kinds (a
 * ConfigMap applied and deleted, an unserved kind found absent).
 */
import { expect, it } from 'vitest';
import { FEATURE_API_VERSION, FEATURE_CRD, featureCrd } from '../../shared/features/crd.js';
import { type KObject, ObjectsApi } from '../../shared/features/objects.js';
import { type ApiBackend, onBothBackends } from '../support/backends.js';
import { describeRealApiserver } from '../support/real-apiserver.js';

const NS = 'widgets';
const FEATURES = `/apis/${FEATURE_API_VERSION}/namespaces/${NS}/features`;
const FEATURE = { apiVersion: FEATURE_API_VERSION, kind: FEATURE_CRD.kind };

const feature = (desired: 'on' | 'off'): KObject => ({
  ...FEATURE,
  metadata: { name: 'widgets', namespace: NS, labels: { 'app.kubernetes.io/managed-by': 'fleetscope' } },
  spec: { default: 'off', desired, description: 'Widgets', components: ['widget-agent'] },
});
const use = (component: string, value: 'on' | 'off', time?: string) => ({
  status: { uses: { [component]: { value, ...(time ? { time } : {}) } } },
});

async function scenario(b: ApiBackend) {
  const record: Record<string, unknown> = {};
  const created = await b.raw('POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } });
  if (created.status !== 201) throw new Error(`${b.name}: namespace: ${created.status} ${created.text}`);
  const crd = await b.raw('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
    body: featureCrd(),
  });
  if (crd.status !== 201) throw new Error(`${b.name}: Feature CRD: ${crd.status} ${crd.text}`);
  await b.established(FEATURE_CRD.crdName);

  const objects = new ObjectsApi(await b.client());
  record.apply = [
    await objects.apply(feature('off')),
    await objects.apply(feature('off')),
    await objects.apply(feature('on')),
  ];
  const obj = feature('on');
  const q = { ...FEATURE, namespace: NS };
  await objects.mergePatch(
    q,
    obj,
    { status: { state: 'TurningOn', value: 'on', observedVersion: 3 } },
    'status',
  );
  await objects.mergePatch(q, obj, use('widget-agent', 'on', '2026-11-21T10:00:00Z'), 'status');
  await objects.mergePatch(q, obj, use('widget-web', 'off', '2026-11-21T10:01:00Z'), 'status');
  const untimed = await objects.mergePatch(q, obj, use('widget-cli', 'on'), 'status').catch((e: Error) => e);
  record.untimedUse = untimed instanceof Error ? untimed.message.replace(/\s+\(.*$/, '') : 'accepted';
  // A status write cannot change spec: the subresource keeps it.
  await objects.mergePatch(q, obj, { spec: { desired: 'off' }, status: { state: 'On' } }, 'status');
  const live = (await b.raw('GET', `${FEATURES}/widgets`)).json;
  record.live = { spec: live.spec, status: live.status };
  record.listed = (await objects.list({ ...q, selector: 'app.kubernetes.io/managed-by=fleetscope' })).map(
    (o) => o.metadata?.name,
  );

  const config: KObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'widget-settings', namespace: NS },
    data: { widgets: 'enabled' },
  };
  record.task = [await objects.apply(config), await objects.apply(config)];
  const configMaps = { apiVersion: 'v1', kind: 'ConfigMap' };
  record.deleted = [await objects.delete(configMaps, config), await objects.delete(configMaps, config)];
  record.unserved = await objects.resolve({ apiVersion: 'example.com/v1', kind: 'Widget' });
  record.writes = objects.writes;
  return record;
}

describeRealApiserver('feature objects and their tasks', (server) => {
  const records = onBothBackends(server, scenario);

  it('on the real server: applied idempotently, uses kept per component, spec out of a status write', () => {
    const r = records.get('real') ?? {};
    expect(r.apply).toEqual(['created', 'unchanged', 'updated']);
    expect(r.untimedUse).toMatch(/status\.uses\.widget-cli\.time: Required value/);
    expect(r.live).toEqual({
      spec: { default: 'off', desired: 'on', description: 'Widgets', components: ['widget-agent'] },
      status: {
        state: 'On',
        value: 'on',
        observedVersion: 3,
        uses: {
          'widget-agent': { value: 'on', time: '2026-11-21T10:00:00Z' },
          'widget-web': { value: 'off', time: '2026-11-21T10:01:00Z' },
        },
      },
    });
    expect(r.listed).toEqual(['widgets']);
    expect(r.task).toEqual(['created', 'unchanged']);
    expect(r.deleted).toEqual([true, false]);
    expect(r.unserved).toBeUndefined();
  });

  it('the simulator answers every step as the real server did', () => {
    expect(records.get('sim')).toEqual(records.get('real'));
  });
});
