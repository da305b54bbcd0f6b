/** CustomResourceDefinitions and custom resources: establishment, discovery, validation, pruning, versions, patch types. */
import {
  ApiException,
  ApiextensionsV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  clusterClaimCrd,
  clusterPropertyCrd,
  type Simulator,
  startSimulator,
} from '../../local/sim/index.js';
import { kubeConfigFor, raw } from './helpers.js';

let sim: Simulator;
let ext: ApiextensionsV1Api;
let custom: CustomObjectsApi;

beforeAll(async () => {
  sim = await startSimulator({ clusters: [{ name: 'c', nodes: 1, vpaCrd: true }] });
  const kc = kubeConfigFor(sim, 'c');
  ext = kc.makeApiClient(ApiextensionsV1Api);
  custom = kc.makeApiClient(CustomObjectsApi);
});
afterAll(async () => {
  await sim?.stop();
});

const failure = async (p: Promise<unknown>) => {
  const e = (await p.catch((x: unknown) => x)) as ApiException<string>;
  expect(e).toBeInstanceOf(ApiException);
  return { code: e.code, body: JSON.parse(e.body) };
};

const cp = (name: string, value: string, extra: object = {}) => ({
  apiVersion: 'about.k8s.io/v1alpha1',
  kind: 'ClusterProperty',
  metadata: { name },
  spec: { value, ...extra },
});

describe('CRDs', () => {
  it('installs the VerticalPodAutoscaler CRDs when asked', async () => {
    const names = (await ext.listCustomResourceDefinition()).items.map((c) => c.metadata?.name);
    expect(names).toEqual([
      'verticalpodautoscalercheckpoints.autoscaling.k8s.io',
      'verticalpodautoscalers.autoscaling.k8s.io',
    ]);
    const vpa = await custom.createNamespacedCustomObject({
      group: 'autoscaling.k8s.io',
      version: 'v1',
      namespace: 'default',
      plural: 'verticalpodautoscalers',
      body: {
        apiVersion: 'autoscaling.k8s.io/v1',
        kind: 'VerticalPodAutoscaler',
        metadata: { name: 'v' },
        spec: {
          targetRef: { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'x' },
          updatePolicy: { updateMode: 'Off' },
        },
      },
    });
    expect((vpa as { metadata: { generation: number } }).metadata.generation).toBe(1);
    const bad = await failure(
      custom.createNamespacedCustomObject({
        group: 'autoscaling.k8s.io',
        version: 'v1',
        namespace: 'default',
        plural: 'verticalpodautoscalers',
        body: {
          apiVersion: 'autoscaling.k8s.io/v1',
          kind: 'VerticalPodAutoscaler',
          metadata: { name: 'w' },
          spec: { targetRef: { kind: 'DaemonSet', name: 'x' }, updatePolicy: { updateMode: 'Sometimes' } },
        },
      }),
    );
    expect(bad.code).toBe(422);
    expect(bad.body.details.causes).toEqual([
      {
        reason: 'FieldValueNotSupported',
        message:
          'Unsupported value: "Sometimes": supported values: "Off", "Initial", "Recreate", "InPlaceOrRecreate", "InPlace", "Auto"',
        field: 'spec.updatePolicy.updateMode',
      },
    ]);
  });

  it('requires the approval annotation for *.k8s.io groups', async () => {
    const { code, body } = await failure(
      ext.createCustomResourceDefinition({ body: clusterPropertyCrd({ approved: false }) as never }),
    );
    expect(code).toBe(422);
    expect(body.details.causes[0].field).toBe('metadata.annotations[api-approved.kubernetes.io]');
  });

  it('serves a new CRD at once: discovery, both versions, conditions', async () => {
    await ext.createCustomResourceDefinition({ body: clusterPropertyCrd() as never });
    const crd = await ext.readCustomResourceDefinition({ name: 'clusterproperties.about.k8s.io' });
    expect(crd.status?.conditions?.map((c) => [c.type, c.status])).toEqual([
      ['KubernetesAPIApprovalPolicyConformant', 'True'],
      ['NamesAccepted', 'True'],
      ['Established', 'True'],
    ]);
    const group = await raw(sim.cluster('c'), 'GET', '/apis/about.k8s.io');
    expect(group.json.preferredVersion.version).toBe('v1beta1');
    const list = await raw(sim.cluster('c'), 'GET', '/apis/about.k8s.io/v1alpha1');
    expect(list.json.resources.map((r: { name: string }) => r.name)).toEqual([
      'clusterproperties',
      'clusterproperties/status',
    ]);
  });

  it('creates, lists and reads custom objects in every served version', async () => {
    await custom.createClusterCustomObject({
      group: 'about.k8s.io',
      version: 'v1alpha1',
      plural: 'clusterproperties',
      body: cp('id.k8s.io', sim.cluster('c').kubeSystemUid),
    });
    const v1beta1 = (await custom.getClusterCustomObject({
      group: 'about.k8s.io',
      version: 'v1beta1',
      plural: 'clusterproperties',
      name: 'id.k8s.io',
    })) as { apiVersion: string; spec: { value: string } };
    expect(v1beta1.apiVersion).toBe('about.k8s.io/v1beta1');
    expect(v1beta1.spec.value).toBe(sim.cluster('c').kubeSystemUid);
    const list = (await custom.listClusterCustomObject({
      group: 'about.k8s.io',
      version: 'v1alpha1',
      plural: 'clusterproperties',
    })) as { items: unknown[]; metadata: { continue: string } };
    expect(list.items).toHaveLength(1);
    expect(list.metadata.continue).toBe('');
    const dup = await failure(
      custom.createClusterCustomObject({
        group: 'about.k8s.io',
        version: 'v1alpha1',
        plural: 'clusterproperties',
        body: cp('id.k8s.io', 'x'),
      }),
    );
    expect(dup.code).toBe(409);
    expect(dup.body.message).toBe('clusterproperties.about.k8s.io "id.k8s.io" already exists');
  });

  it('validates names, required fields and minLength', async () => {
    const upper = await failure(
      custom.createClusterCustomObject({
        group: 'about.k8s.io',
        version: 'v1alpha1',
        plural: 'clusterproperties',
        body: cp('Upper.Example', 'x'),
      }),
    );
    expect(upper.code).toBe(422);
    expect(upper.body.details.causes[0].field).toBe('metadata.name');
    const empty = await failure(
      custom.createClusterCustomObject({
        group: 'about.k8s.io',
        version: 'v1alpha1',
        plural: 'clusterproperties',
        body: cp('e.example.com', ''),
      }),
    );
    expect(empty.body.message).toBe(
      'ClusterProperty.about.k8s.io "e.example.com" is invalid: spec.value: Invalid value: "": spec.value in body should be at least 1 chars long',
    );
    const missing = await failure(
      custom.createClusterCustomObject({
        group: 'about.k8s.io',
        version: 'v1alpha1',
        plural: 'clusterproperties',
        body: { ...cp('m.example.com', 'x'), spec: {} },
      }),
    );
    expect(missing.body.details.causes).toEqual([
      { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.value' },
    ]);
  });

  it('prunes unknown fields with a Warning header, or refuses them with fieldValidation=Strict', async () => {
    const c = sim.cluster('c');
    const r = await raw(c, 'POST', '/apis/about.k8s.io/v1alpha1/clusterproperties', {
      body: cp('p.example.com', 'v', { color: 'red' }),
    });
    expect(r.status).toBe(201);
    expect(r.headers.warning).toBe('299 - "unknown field \\"spec.color\\""');
    expect(r.json.spec).toEqual({ value: 'v' });
    const strict = await raw(
      c,
      'POST',
      '/apis/about.k8s.io/v1alpha1/clusterproperties?fieldValidation=Strict',
      { body: cp('q.example.com', 'v', { color: 'red' }) },
    );
    expect(strict.status).toBe(400);
    expect(strict.json.message).toMatch(/strict decoding error: unknown field "spec.color"/);
  });

  it('enforces maxLength and pattern (ClusterClaim: 1..1024)', async () => {
    await ext.createCustomResourceDefinition({ body: clusterClaimCrd() as never });
    const claim = (name: string, value: string) => ({
      apiVersion: 'cluster.open-cluster-management.io/v1alpha1',
      kind: 'ClusterClaim',
      metadata: { name },
      spec: { value },
    });
    const g = { group: 'cluster.open-cluster-management.io', version: 'v1alpha1', plural: 'clusterclaims' };
    await custom.createClusterCustomObject({ ...g, body: claim('id.k8s.io', 'a'.repeat(1024)) });
    const long = await failure(
      custom.createClusterCustomObject({ ...g, body: claim('big.example.com', 'a'.repeat(1025)) }),
    );
    expect(long.body.details.causes).toEqual([
      {
        reason: 'FieldValueTooLong',
        message: 'Too long: may not be more than 1024 bytes',
        field: 'spec.value',
      },
    ]);
    const crd = await ext.readCustomResourceDefinition({
      name: 'clusterclaims.cluster.open-cluster-management.io',
    });
    const schema = crd.spec.versions[0]?.schema?.openAPIV3Schema as {
      properties: Record<string, { properties: Record<string, object> }>;
    };
    (schema.properties.spec as { properties: Record<string, object> }).properties.value = {
      type: 'string',
      pattern: '^[a-z]+$',
    };
    await ext.replaceCustomResourceDefinition({ name: crd.metadata?.name as string, body: crd });
    const pattern = await failure(
      custom.createClusterCustomObject({ ...g, body: claim('p.example.com', 'ABC') }),
    );
    expect(pattern.body.details.causes[0].message).toBe(
      'Invalid value: "ABC": spec.value in body should match \'^[a-z]+$\'',
    );
  });

  it('needs a resourceVersion on PUT and refuses strategic merge patches (415)', async () => {
    const g = { group: 'about.k8s.io', version: 'v1beta1', plural: 'clusterproperties', name: 'id.k8s.io' };
    const noRv = await failure(
      custom.replaceClusterCustomObject({
        ...g,
        body: { ...cp('id.k8s.io', 'x'), apiVersion: 'about.k8s.io/v1beta1' },
      }),
    );
    expect(noRv.code).toBe(422);
    expect(noRv.body.message).toBe(
      'clusterproperties.about.k8s.io "id.k8s.io" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
    );
    const smp = await failure(
      custom.patchClusterCustomObject(
        { ...g, body: { spec: { value: 'y' } } },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      ),
    );
    expect(smp.code).toBe(415);
    expect(smp.body.message).toBe(
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
    );
    const merged = (await custom.patchClusterCustomObject(
      { ...g, body: { spec: { value: 'y' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    )) as { spec: { value: string }; metadata: { generation: number } };
    expect(merged.spec.value).toBe('y');
    expect(merged.metadata.generation).toBe(2);
  });

  it('removes the resource and its objects when the CRD is deleted', async () => {
    await ext.deleteCustomResourceDefinition({ name: 'clusterproperties.about.k8s.io' });
    const r = await raw(sim.cluster('c'), 'GET', '/apis/about.k8s.io/v1beta1/clusterproperties');
    expect(r.status).toBe(404);
    expect(r.text).toBe('404 page not found\n');
  });
});
