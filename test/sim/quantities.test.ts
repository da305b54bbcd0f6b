/** Quantities on every write path: malformed (400, or 422 `patch` for a patch), negative or fractional (422 with the field path). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SimCluster, type Simulator, startSimulator } from '../../local/sim/index.js';
import { type RawResponse, raw } from './helpers.js';

const REGEX = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
const pod = (name: string, requests: object, limits?: object) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'i', resources: { requests, ...(limits ? { limits } : {}) } }] },
});
const ds = (name: string, requests: object) => ({
  apiVersion: 'apps/v1',
  kind: 'DaemonSet',
  metadata: { name },
  spec: {
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'c', image: 'i', resources: { requests } }] },
    },
  },
});

describe('quantities on every write path', () => {
  let sim: Simulator;
  let c: SimCluster;
  const causes = (r: RawResponse) =>
    r.json?.details?.causes?.map((x: { field: string; message: string }) => `${x.field}: ${x.message}`);
  beforeAll(async () => {
    sim = await startSimulator({ clusters: [{ name: 'q', nodes: 1 }] });
    c = sim.cluster('q');
  });
  afterAll(async () => {
    await sim?.stop();
  });

  it('refuses a malformed quantity when decoding a create or an update (400)', async () => {
    const bad = await raw(c, 'POST', '/api/v1/namespaces/default/pods', {
      body: pod('p1', { cpu: '1.5.5' }),
    });
    expect(bad.json).toMatchObject({
      code: 400,
      reason: 'BadRequest',
      message: `Pod in version "v1" cannot be handled as a Pod: ${REGEX}`,
    });
    await raw(c, 'POST', '/apis/apps/v1/namespaces/default/daemonsets', { body: ds('d1', { cpu: '10m' }) });
    const current = (await raw(c, 'GET', '/apis/apps/v1/namespaces/default/daemonsets/d1')).json;
    current.spec.template.spec.containers[0].resources.requests.memory = '12Kb';
    const put = await raw(c, 'PUT', '/apis/apps/v1/namespaces/default/daemonsets/d1', { body: current });
    expect(put.json.message).toBe(`DaemonSet in version "v1" cannot be handled as a DaemonSet: ${REGEX}`);
  });

  it('refuses negative and fractional quantities with the field path in the causes (422)', async () => {
    const neg = await raw(c, 'POST', '/api/v1/namespaces/default/pods', {
      body: pod('p2', { cpu: '-100m' }),
    });
    expect(causes(neg)).toEqual([
      'spec.containers[0].resources.requests[cpu]: Invalid value: "-100m": must be greater than or equal to 0',
    ]);
    const tmpl = await raw(c, 'POST', '/apis/apps/v1/namespaces/default/daemonsets', {
      body: ds('d2', { memory: '-1Mi' }),
    });
    expect(tmpl.json.message).toBe(
      'DaemonSet.apps "d2" is invalid: spec.template.spec.containers[0].resources.requests[memory]: Invalid value: "-1Mi": must be greater than or equal to 0',
    );
    const node = c.store.list('nodes')[0].metadata.name;
    const status = await raw(c, 'PATCH', `/api/v1/nodes/${node}/status`, {
      body: { status: { allocatable: { cpu: '-2' } } },
      contentType: 'application/merge-patch+json',
    });
    expect(causes(status)).toEqual([
      'status.allocatable.cpu: Invalid value: "-2": must be greater than or equal to 0',
    ]);
    const quota = await raw(c, 'POST', '/api/v1/namespaces/default/resourcequotas', {
      body: { metadata: { name: 'q' }, spec: { hard: { pods: '1.5', cpu: '-1' } } },
    });
    expect(causes(quota)).toEqual([
      'spec.hard[cpu]: Invalid value: "-1": must be greater than or equal to 0',
      'spec.hard[pods]: Invalid value: "1500m": must be an integer',
    ]);
  });

  it('refuses a patch that leaves a malformed quantity as the patcher does (422 on the field patch)', async () => {
    await raw(c, 'POST', '/api/v1/namespaces/default/pods', {
      body: pod('p3', { cpu: '100m' }, { cpu: '100m' }),
    });
    const smp = await raw(c, 'PATCH', '/api/v1/namespaces/default/pods/p3/resize', {
      body: { spec: { containers: [{ name: 'c', resources: { requests: { cpu: 'lots' } } }] } },
      contentType: 'application/strategic-merge-patch+json',
    });
    expect(smp.json).toMatchObject({
      code: 422,
      reason: 'Invalid',
      message: ` "" is invalid: patch: Invalid value: "map[spec:map[containers:[map[name:c resources:map[requests:map[cpu:lots]]]]]]": ${REGEX}`,
      details: { causes: [{ reason: 'FieldValueInvalid', field: 'patch' }] },
    });
    const merge = await raw(c, 'PATCH', '/api/v1/namespaces/default/pods/p3', {
      body: { spec: { overhead: { cpu: 'x1' } } },
      contentType: 'application/merge-patch+json',
    });
    expect(merge.json.message).toMatch(
      /^ "" is invalid: patch: Invalid value: "\{.*\}": quantities must match/,
    );
    const neg = await raw(c, 'PATCH', '/api/v1/namespaces/default/pods/p3/resize', {
      body: {
        spec: { containers: [{ name: 'c', resources: { requests: { cpu: '-1' }, limits: { cpu: '-1' } } }] },
      },
      contentType: 'application/strategic-merge-patch+json',
    });
    expect(neg.status).toBe(422);
    expect(causes(neg)).toContain(
      'spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0',
    );
  });
});
