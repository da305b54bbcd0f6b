/**
 * The VPA CRD variant with spec.scope: installable over the stock CRD (or where there is none), the
 * field then kept instead of pruned, its label-key pattern enforced, and the CEL rule restricting it to
 * DaemonSets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterAccessError } from '../../shared/k8s/errors.js';
import { RawReader } from '../../shared/k8s/raw-reader.js';
import { readCrd } from '../../shared/nodescope/collect.js';
import { installScopedCrd, SCOPE_RULE, scopedVpaSchema } from '../../shared/nodescope/crd.js';
import { LABEL_KEY_PATTERN } from '../../shared/nodescope/label-key.js';
import { agentDaemonSet, cycle, type Env, MINUTE, startEnv, vpaObject } from './helpers.js';

const VPAS = '/apis/autoscaling.k8s.io/v1/namespaces/monitoring/verticalpodautoscalers';

describe('the scoped VPA CRD', () => {
  let env: Env;
  beforeAll(async () => {
    env = await startEnv([
      { name: 'stock', nodes: 3, seed: 51, vpaCrd: true, daemonSets: [agentDaemonSet()] },
      { name: 'bare', nodes: 2, seed: 52 },
    ]);
  });
  afterAll(async () => {
    await env?.stop();
  });

  it('validates scope as a label key, with a CEL rule allowing it only on DaemonSets', () => {
    const spec = (scopedVpaSchema().properties as Record<string, Record<string, unknown>>).spec as {
      properties: { scope: { pattern: string; maxLength: number } };
      'x-kubernetes-validations': unknown[];
    };
    expect(spec.properties.scope).toMatchObject({ pattern: LABEL_KEY_PATTERN, maxLength: 317 });
    expect(spec['x-kubernetes-validations']).toEqual([
      {
        rule: "!has(self.scope) || self.targetRef.kind == 'DaemonSet'",
        message: 'scope applies to DaemonSets only (targetRef.kind must be DaemonSet)',
        fieldPath: '.scope',
        reason: 'FieldValueForbidden',
      },
    ]);
    expect(SCOPE_RULE.rule).toContain("self.targetRef.kind == 'DaemonSet'");
  });

  it('installs over the stock CRD; spec.scope is then kept instead of pruned', async () => {
    const client = env.clients.get('stock')!;
    const raw = new RawReader(client);
    expect(await readCrd(raw)).toBe('stock');
    const before = await raw.send<{ spec: Record<string, unknown> }>(
      'create',
      'POST',
      VPAS,
      vpaObject({ name: 'before', via: 'spec' }),
    );
    expect(before.spec.scope).toBeUndefined();

    expect(await installScopedCrd(client)).toBe('updated');
    expect(await installScopedCrd(client)).toBe('unchanged');
    // kubectl get vpa keeps its CPU and Mem columns.
    const crd = await raw.get<{ spec: { versions: { additionalPrinterColumns: { name: string }[] }[] } }>(
      'get',
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/verticalpodautoscalers.autoscaling.k8s.io',
    );
    expect(crd.spec.versions[0]!.additionalPrinterColumns.map((c) => c.name)).toEqual([
      'Mode',
      'CPU',
      'Mem',
      'Age',
    ]);
    expect(await readCrd(raw)).toBe('scoped');
    const after = await raw.send<{ spec: Record<string, unknown> }>(
      'create',
      'POST',
      VPAS,
      vpaObject({ name: 'agent', via: 'spec', mode: 'Initial' }),
    );
    expect(after.spec.scope).toBe('node');
    const bad = vpaObject({ name: 'bad', via: 'spec' }) as { spec: Record<string, unknown> };
    bad.spec.scope = 'zone name';
    const err = await raw.send('create', 'POST', VPAS, bad).catch((e) => e);
    expect(err).toBeInstanceOf(ClusterAccessError);
    expect((err as ClusterAccessError).status).toBe(422);
    expect((err as ClusterAccessError).message).toMatch(/spec\.scope/);

    // fleetscope reads the field, and writes the structured summary the variant allows.
    const r = await cycle(env, 'stock', 5 * MINUTE);
    expect(r.detail.vpaCrd).toBe('scoped');
    expect(r.daemonSets.map((d) => d.vpa)).toEqual(['agent']);
    const vpa = env.sim
      .cluster('stock')
      .store.get('verticalpodautoscalers.autoscaling.k8s.io', 'agent', 'monitoring');
    expect(vpa.status.nodeScope).toMatchObject({
      nodesWithHistory: expect.any(Number),
      updatedAt: expect.any(String),
    });
  });

  it('creates the CRD where there is none', async () => {
    const client = env.clients.get('bare')!;
    expect(await readCrd(new RawReader(client))).toBe('absent');
    expect(await installScopedCrd(client)).toBe('created');
    expect(await readCrd(new RawReader(client))).toBe('scoped');
  });
});
