/**
 * CRD validation rules (x-kubernetes-validations, CEL) on create and update, with the real server's
 * error form: fleetscope's own VPA CRD variant, rules without a message, transition rules, runtime
 * errors, and type errors that keep the rules from running.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SimCluster, type Simulator, startSimulator } from '../../local/sim/index.js';
import { scopedVpaCrd } from '../../shared/nodescope/crd.js';
import { raw } from './helpers.js';

const widgets = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Cluster',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                'x-kubernetes-validations': [
                  { rule: 'self.minReplicas <= self.replicas' },
                  { rule: 'self.mode == oldSelf.mode', message: 'mode is immutable', fieldPath: '.mode' },
                  { rule: 'self.extra.size > 0' },
                ],
                properties: {
                  minReplicas: { type: 'integer' },
                  replicas: { type: 'integer' },
                  mode: { type: 'string' },
                  extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                },
              },
            },
          },
        },
      },
    ],
  },
};

describe('CRD validation rules (CEL)', () => {
  let sim: Simulator;
  let c: SimCluster;
  const widget = (name: string, spec: object) => ({
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name },
    spec,
  });
  const WIDGETS = '/apis/example.com/v1/widgets';

  beforeAll(async () => {
    sim = await startSimulator({ clusters: [{ name: 'cel', nodes: 1, controllers: false }] });
    c = sim.cluster('cel');
    for (const crd of [widgets, scopedVpaCrd()])
      expect(
        (await raw(c, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { body: crd }))
          .status,
      ).toBe(201);
    await raw(c, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'monitoring' } } });
  });
  afterAll(async () => {
    await sim?.stop();
  });

  it("refuses node scope on anything but a DaemonSet with the variant's rule (reason, message, fieldPath)", async () => {
    const vpa = (kind: string) => ({
      apiVersion: 'autoscaling.k8s.io/v1',
      kind: 'VerticalPodAutoscaler',
      metadata: { name: 'web' },
      spec: { scope: 'node', targetRef: { apiVersion: 'apps/v1', kind, name: 'web' } },
    });
    const path = '/apis/autoscaling.k8s.io/v1/namespaces/monitoring/verticalpodautoscalers';
    const bad = await raw(c, 'POST', path, { body: vpa('Deployment') });
    expect(bad.status).toBe(422);
    expect(bad.json).toMatchObject({
      reason: 'Invalid',
      message:
        'VerticalPodAutoscaler.autoscaling.k8s.io "web" is invalid: spec.scope: Forbidden: scope applies to DaemonSets only (targetRef.kind must be DaemonSet)',
      details: {
        name: 'web',
        group: 'autoscaling.k8s.io',
        kind: 'VerticalPodAutoscaler',
        causes: [
          {
            reason: 'FieldValueForbidden',
            message: 'Forbidden: scope applies to DaemonSets only (targetRef.kind must be DaemonSet)',
            field: 'spec.scope',
          },
        ],
      },
    });
    expect((await raw(c, 'POST', path, { body: vpa('DaemonSet') })).status).toBe(201);
    const patched = await raw(c, 'PATCH', `${path}/web`, {
      body: { spec: { targetRef: { kind: 'StatefulSet' } } },
      contentType: 'application/merge-patch+json',
    });
    expect(patched.status).toBe(422);
    expect(patched.json.details.causes[0].field).toBe('spec.scope');
  });

  it('reports a rule without a message as "failed rule", and a runtime error with cel-go wording', async () => {
    const r = await raw(c, 'POST', WIDGETS, {
      body: widget('a', { minReplicas: 3, replicas: 2, mode: 'x', extra: {} }),
    });
    expect(r.json.message).toBe(
      'Widget.example.com "a" is invalid: [spec: Invalid value: "object": failed rule: self.minReplicas <= self.replicas, spec: Invalid value: "object": no such key: size evaluating rule: self.extra.size > 0]',
    );
  });

  it('runs transition rules on update only', async () => {
    const ok = await raw(c, 'POST', WIDGETS, {
      body: widget('b', { minReplicas: 1, replicas: 2, mode: 'x', extra: { size: 1 } }),
    });
    expect(ok.status).toBe(201);
    const r = await raw(c, 'PATCH', `${WIDGETS}/b`, {
      body: { spec: { mode: 'y' } },
      contentType: 'application/merge-patch+json',
    });
    expect(r.json.message).toBe(
      'Widget.example.com "b" is invalid: spec.mode: Invalid value: "object": mode is immutable',
    );
  });

  it('does not run the rules of an object with an enum error either (as seen on real 1.33 and 1.36)', async () => {
    const body = {
      apiVersion: 'autoscaling.k8s.io/v1',
      kind: 'VerticalPodAutoscaler',
      metadata: { name: 'zone', namespace: 'monitoring' },
      spec: {
        targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        scope: 'node',
        updatePolicy: { updateMode: 'Sometimes' },
      },
    };
    const r = await raw(
      c,
      'POST',
      '/apis/autoscaling.k8s.io/v1/namespaces/monitoring/verticalpodautoscalers',
      {
        body,
      },
    );
    expect(r.json.details.causes).toEqual([
      {
        reason: 'FieldValueNotSupported',
        message:
          'Unsupported value: "Sometimes": supported values: "Off", "Initial", "Recreate", "InPlaceOrRecreate", "InPlace", "Auto"',
        field: 'spec.updatePolicy.updateMode',
      },
      {
        reason: 'FieldValueInvalid',
        message:
          'Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
        field: '<nil>',
      },
    ]);
  });

  it('does not run the rules of an object with type errors', async () => {
    const r = await raw(c, 'POST', WIDGETS, { body: widget('c', { minReplicas: 'three', replicas: 2 }) });
    expect(r.json.message).toBe(
      'Widget.example.com "c" is invalid: [spec.minReplicas: Invalid value: "string": spec.minReplicas in body must be of type integer: "string", <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]',
    );
  });
});
