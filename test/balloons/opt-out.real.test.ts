/**
 * KEP-5836 detection and the node patch on real kube-apiservers before 1.37 (the judges of the
 * simulator's 1.36): core/v1's OpenAPI v3 publishes NodeSpec without `podPreemptionPolicy`, so
 * fleetscope's detection says no (and reads the right document: NodeSpec's other fields are there); a
 * JSON patch fenced on a stale resourceVersion is refused with 422 and changes nothing; the field sent
 * anyway is dropped, not stored. The simulator answers alike.
 */
import { expect, it } from 'vitest';
import { NodeOptOutApi } from '../../shared/balloons/node-opt-out.js';
import { OPT_OUT_KEY } from '../../shared/balloons/opt-out.js';
import { RawReader } from '../../shared/k8s/raw-reader.js';
import { type ApiBackend, onBothBackends } from '../support/backends.js';
import { describeRealApiserver } from '../support/real-apiserver.js';

const JSON_PATCH = 'application/json-patch+json';
const NODE = '/api/v1/nodes/opt-out-node';

async function scenario(b: ApiBackend) {
  const record: Record<string, unknown> = {};
  const api = new NodeOptOutApi(new RawReader(await b.client()));
  record.fieldServed = (await api.fieldServed()).served;
  const index = await b.raw('GET', '/openapi/v3');
  const doc = await b.raw('GET', index.json.paths['api/v1'].serverRelativeURL);
  const spec = doc.json.components.schemas['io.k8s.api.core.v1.NodeSpec'];
  record.nodeSpecHasTaints = 'taints' in (spec?.properties ?? {});

  const created = await b.raw('POST', '/api/v1/nodes', { body: { metadata: { name: 'opt-out-node' } } });
  expect(created.status, created.text).toBe(201);
  const rv = created.json.metadata.resourceVersion;
  const add = {
    op: 'add',
    path: '/spec/podPreemptionPolicy',
    value: { disableResizePreemption: [OPT_OUT_KEY] },
  };
  const stale = await b.raw('PATCH', NODE, {
    body: [{ op: 'test', path: '/metadata/resourceVersion', value: `${rv}0` }, add],
    contentType: JSON_PATCH,
  });
  record.staleStatus = stale.status;
  const fresh = await b.raw('PATCH', NODE, {
    body: [{ op: 'test', path: '/metadata/resourceVersion', value: rv }, add],
    contentType: JSON_PATCH,
  });
  record.freshStatus = fresh.status;
  record.stored = (await b.raw('GET', NODE)).json.spec?.podPreemptionPolicy ?? null;
  return record;
}

describeRealApiserver('KEP-5836 detection and node patch before 1.37', (server) => {
  const records = onBothBackends(server, scenario);

  it('on the real server: no field in the OpenAPI, a stale fence refused with 422, the field dropped', () => {
    expect(records.get('real')).toEqual({
      fieldServed: false,
      nodeSpecHasTaints: true,
      staleStatus: 422,
      freshStatus: 200,
      stored: null,
    });
  });

  it('the simulator answers as the real server did', () => {
    expect(records.get('sim')).toEqual(records.get('real'));
  });
});
