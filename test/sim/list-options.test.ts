/**
 * List and watch options as the real server checks them (status codes, reasons, causes, messages), and
 * watches from an older resourceVersion: the retained changes are replayed, 410 Expired only beyond.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SimCluster, type Simulator, startSimulator } from '../../local/sim/index.js';
import { raw } from './helpers.js';

describe('list options and watch history', () => {
  let sim: Simulator;
  let c: SimCluster;
  beforeAll(async () => {
    sim = await startSimulator({ clusters: [{ name: 'opts', nodes: 3, controllers: false }] });
    c = sim.cluster('opts');
  });
  afterAll(async () => {
    await sim?.stop();
  });

  const invalid = (message: string, causes: { reason: string; message: string; field: string }[]) => ({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason: 'Invalid',
    details: { group: 'meta.k8s.io', kind: 'ListOptions', causes },
    code: 422,
  });

  it('validates resourceVersionMatch as ValidateListOptions does (422)', async () => {
    const noRv = await raw(c, 'GET', '/api/v1/nodes?resourceVersionMatch=NotOlderThan');
    expect(noRv.json).toEqual(
      invalid(
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
        [
          {
            reason: 'FieldValueForbidden',
            message: 'Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
            field: 'resourceVersionMatch',
          },
        ],
      ),
    );
    const bad = await raw(c, 'GET', '/api/v1/nodes?resourceVersion=0&resourceVersionMatch=exact');
    expect(bad.json.message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: "exact": supported values: "Exact", "NotOlderThan", ""',
    );
    const exact0 = await raw(c, 'GET', '/api/v1/nodes?resourceVersion=0&resourceVersionMatch=Exact');
    expect(exact0.json.message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
    );
    const watch = await raw(
      c,
      'GET',
      '/api/v1/nodes?watch=true&resourceVersion=1&resourceVersionMatch=Exact',
    );
    expect(watch.status).toBe(422);
    expect(watch.json.details.causes.map((x: { message: string }) => x.message)).toEqual([
      'Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
      'Unsupported value: "Exact": supported values: "NotOlderThan"',
    ]);
  });

  it('refuses a malformed limit or continue token with 400 and the storage layer message', async () => {
    const limit = await raw(c, 'GET', '/api/v1/nodes?limit=ten');
    expect(limit.json).toMatchObject({
      code: 400,
      reason: 'BadRequest',
      message: 'strconv.ParseInt: parsing "ten": invalid syntax',
    });
    expect((await raw(c, 'GET', '/api/v1/nodes?limit=-1')).json.items).toHaveLength(3);
    const token = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const cases: [string, string][] = [
      ['not*base64', 'illegal base64 data at input byte 3'],
      [Buffer.from('hello').toString('base64url'), "invalid character 'h' looking for beginning of value"],
      [
        token({ v: 'meta.k8s.io/v1', rv: 0, start: 'a\u0000' }),
        'incorrect encoded start resourceVersion (version meta.k8s.io/v1)',
      ],
      [token({ v: 'meta.k8s.io/v1', rv: 5, start: '' }), 'encoded start key empty (version meta.k8s.io/v1)'],
      [token({ v: 'meta.k8s.io/v1', rv: 5, start: '../secrets\u0000' }), '../secrets\u0000'],
      [token({ v: 'v2', rv: 5, start: 'a' }), 'server does not recognize this encoded version v2'],
    ];
    for (const [t, detail] of cases) {
      const r = await raw(c, 'GET', `/api/v1/nodes?limit=1&continue=${encodeURIComponent(t)}`);
      expect(r.json, t).toMatchObject({
        code: 400,
        reason: 'BadRequest',
        message: `invalid continue token: continue key is not valid: ${detail}`,
      });
    }
    const page = await raw(c, 'GET', '/api/v1/nodes?limit=1');
    const both = await raw(
      c,
      'GET',
      `/api/v1/nodes?limit=1&resourceVersion=5&continue=${page.json.metadata.continue}`,
    );
    expect(both.json.message).toBe('specifying resource version is not allowed when using continue');
  });

  it('replays the changes a watch from an older resourceVersion still has, and answers 410 beyond', async () => {
    const list = await raw(c, 'GET', '/api/v1/namespaces');
    const from = list.json.metadata.resourceVersion;
    for (const name of ['w1', 'w2'])
      await raw(c, 'POST', '/api/v1/namespaces', { body: { metadata: { name } } });
    await raw(c, 'DELETE', '/api/v1/namespaces/w1');
    const w = await raw(c, 'GET', `/api/v1/namespaces?watch=true&resourceVersion=${from}&timeoutSeconds=1`, {
      timeoutMs: 5000,
    });
    const events = w.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual([
      'ADDED w1',
      'ADDED w2',
      'DELETED w1',
    ]);
    const old = await raw(c, 'GET', '/api/v1/namespaces?watch=true&resourceVersion=2&timeoutSeconds=1', {
      timeoutMs: 5000,
    });
    const [expired] = old.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(expired.type).toBe('ERROR');
    expect(expired.object).toMatchObject({ code: 410, reason: 'Expired' });
    expect(expired.object.message).toMatch(/^too old resource version: 2 \(\d+\)$/);
  });
});
