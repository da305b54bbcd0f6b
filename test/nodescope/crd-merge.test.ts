/**
 * install-crd adds spec.scope and changes nothing else of the installed CRD: the upstream manifest has
 * printer columns and older versions (v1beta2, v1beta1) that `kubectl get vpa` and stored objects need.
 */
import { describe, expect, it } from 'vitest';
import { vpaCrd, vpaV1Version } from '../../shared/kernel/crds/vpa.js';
import { STATUS_SHAPE_ANNOTATION, statusShapeOf } from '../../shared/nodescope/collect.js';
import { type CrdJson, defaultShape, SCOPE_RULE, withScope } from '../../shared/nodescope/crd.js';
import { LABEL_KEY_PATTERN, labelKeyProblem } from '../../shared/nodescope/label-key.js';

const CUSTOM_RULE = { rule: 'self.targetRef.name != ""', message: 'a site rule' };

/** The upstream CRD's shape: v1 (storage) with a site's own CEL rule, plus two older versions. */
function upstreamCrd(): CrdJson {
  const crd = vpaCrd() as CrdJson;
  const v1 = vpaV1Version() as NonNullable<NonNullable<CrdJson['spec']>['versions']>[number];
  const spec = v1.schema!.openAPIV3Schema!.properties!.spec!;
  spec['x-kubernetes-validations'] = [CUSTOM_RULE];
  const old = (name: string) => ({
    name,
    served: false,
    storage: false,
    schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
    additionalPrinterColumns: [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }],
  });
  crd.spec!.versions = [v1, old('v1beta2'), old('v1beta1')];
  crd.spec!.conversion = { strategy: 'None' };
  return crd;
}

// biome-ignore lint/suspicious/noExplicitAny: a test walks a CRD's schema by known paths
type Schema = Record<string, any>;
const v1Schema = (crd: CrdJson): Schema =>
  crd.spec!.versions!.find((v) => v.name === 'v1')!.schema!.openAPIV3Schema as Schema;
const modes = (crd: CrdJson) =>
  v1Schema(crd).properties.spec.properties.updatePolicy.properties.updateMode.enum;

/** Upstream's CRD with AEP-10031 (PR 10012, the Deckhouse fork): its own scope, groups and rule. */
function aep10031Crd(): CrdJson {
  const crd = upstreamCrd();
  const root = v1Schema(crd);
  root.properties.spec.properties.scope = { type: 'string', description: 'node label key (upstream)' };
  root.properties.spec['x-kubernetes-validations'] = [
    CUSTOM_RULE,
    { rule: "!has(self.scope) || self.targetRef.kind == 'DaemonSet'", message: 'upstream says no' },
  ];
  root.properties.status.properties.groups = {
    type: 'array',
    items: { type: 'object', properties: { scopeValue: { type: 'string' } }, 'x-upstream': true },
  };
  root.properties.spec.properties.updatePolicy.properties.updateMode.enum = [
    'Off',
    'Initial',
    'Recreate',
    'InPlaceOrRecreate',
    'InPlace',
    'Auto',
  ];
  return crd;
}

/** Upstream's CRD with AEP-10031 as it stands (PR 10012's head): scope, recommendationGroups. */
function currentAepCrd(): CrdJson {
  const crd = aep10031Crd();
  const status = v1Schema(crd).properties.status.properties;
  status.recommendationGroups = status.groups;
  delete status.groups;
  return crd;
}

describe('status shapes', () => {
  const fields = (crd: CrdJson) => Object.keys(v1Schema(crd).properties.status.properties).sort();

  it("over AEP-10031's current CRD: its recommendationGroups kept as they are, shape upstream", () => {
    const before = currentAepCrd();
    const after = withScope(structuredClone(before));
    expect(v1Schema(after).properties.status.properties.recommendationGroups).toEqual(
      v1Schema(before).properties.status.properties.recommendationGroups,
    );
    expect(fields(after)).toEqual([...fields(before), 'nodeScope'].sort());
    expect(statusShapeOf(v1Schema(after).properties.status.properties, undefined)).toEqual({
      shape: 'upstream',
      groups: true,
    });
  });

  it("over the Deckhouse fork's CRD: its status.groups kept and used, nothing of upstream's added", () => {
    const before = aep10031Crd();
    const after = withScope(structuredClone(before));
    expect(fields(after)).toEqual([...fields(before), 'nodeScope'].sort());
    expect(defaultShape(before)).toBe('deckhouse');
    expect(after.metadata?.annotations?.[STATUS_SHAPE_ANNOTATION]).toBe('deckhouse');
  });

  it('--status-shape deckhouse on the stock CRD: status.groups, not recommendationGroups', () => {
    const after = withScope(upstreamCrd(), 'deckhouse');
    expect(fields(after)).toContain('groups');
    expect(fields(after)).not.toContain('recommendationGroups');
    expect(statusShapeOf(v1Schema(after).properties.status.properties, undefined).shape).toBe('deckhouse');
  });

  it("upgrades fleetscope's own earlier variant (status.groups) to upstream's shape; the annotation decides", () => {
    const earlier = withScope(upstreamCrd(), 'deckhouse');
    delete earlier.metadata?.annotations?.[STATUS_SHAPE_ANNOTATION];
    const after = withScope(structuredClone(earlier));
    expect(fields(after)).toEqual(expect.arrayContaining(['groups', 'recommendationGroups']));
    const props = v1Schema(after).properties.status.properties;
    expect(statusShapeOf(props, after.metadata?.annotations?.[STATUS_SHAPE_ANNOTATION]).shape).toBe(
      'upstream',
    );
    expect(statusShapeOf(props, 'deckhouse').shape).toBe('deckhouse');
  });
});

describe('withScope', () => {
  it("over an upstream CRD that has AEP-10031's fields, changes nothing of theirs", () => {
    const before = aep10031Crd();
    const after = withScope(structuredClone(before));
    const [b, a] = [v1Schema(before), v1Schema(after)];
    expect(a.properties.spec).toEqual(b.properties.spec);
    expect(a.properties.status.properties.groups).toEqual(b.properties.status.properties.groups);
    // What it lacked is added: fleetscope's summary.
    expect(a.properties.status.properties.nodeScope).toBeDefined();
    expect({ ...a.properties.status.properties, nodeScope: undefined }).toEqual({
      ...b.properties.status.properties,
      nodeScope: undefined,
    });
    expect(after.spec!.versions!.slice(1)).toEqual(before.spec!.versions!.slice(1));
  });

  it("replaces fleetscope's KEP-4943 variant (scope an enum of node) with the label key", () => {
    const old = upstreamCrd();
    const spec = v1Schema(old).properties.spec;
    spec.properties.scope = { type: 'string', enum: ['node'] };
    spec['x-kubernetes-validations'] = [
      CUSTOM_RULE,
      { rule: "!has(self.scope) || self.scope != 'node' || self.targetRef.kind == 'DaemonSet'" },
    ];
    const after = v1Schema(withScope(old)).properties.spec;
    expect(after.properties.scope.pattern).toBe(LABEL_KEY_PATTERN);
    expect(after['x-kubernetes-validations']).toEqual([CUSTOM_RULE, SCOPE_RULE]);
  });

  it('adds spec.scope (a label key, and the CEL rule) to v1 and keeps every other part of the CRD', () => {
    const before = upstreamCrd();
    const after = withScope(structuredClone(before));
    const [v1, ...others] = after.spec!.versions!;
    const spec = v1!.schema!.openAPIV3Schema!.properties!.spec!;
    expect(spec.properties!.scope).toMatchObject({ type: 'string', pattern: LABEL_KEY_PATTERN });
    expect(spec.properties!.scope!.enum).toBeUndefined();
    expect(spec['x-kubernetes-validations']).toEqual([CUSTOM_RULE, SCOPE_RULE]);
    expect(v1!.additionalPrinterColumns).toEqual(before.spec!.versions![0]!.additionalPrinterColumns);
    expect((v1!.additionalPrinterColumns as { name: string }[]).map((c) => c.name)).toEqual([
      'Mode',
      'CPU',
      'Mem',
      'Age',
    ]);
    expect(others).toEqual(before.spec!.versions!.slice(1));
    expect(after.spec!.conversion).toEqual({ strategy: 'None' });
    expect(after.spec!.names).toEqual(before.spec!.names);
    // Every v1 spec property that was there is still there, unchanged but for the added update mode.
    const beforeSpec = before.spec!.versions![0]!.schema!.openAPIV3Schema!.properties!.spec!;
    const { updatePolicy, ...rest } = beforeSpec.properties!;
    expect(spec.properties).toMatchObject(rest);
    expect(modes(after)).toEqual(modes(before));
    expect(updatePolicy).toBeDefined();
    const status = v1!.schema!.openAPIV3Schema!.properties!.status!;
    // AEP-10031 as it stands by default: recommendationGroups, said in the annotation too.
    expect(status.properties!.groups).toBeUndefined();
    expect(after.metadata?.annotations?.[STATUS_SHAPE_ANNOTATION]).toBe('upstream');
    expect(status.properties!.recommendationGroups).toMatchObject({
      type: 'array',
      items: { properties: { scopeValue: { type: 'string' }, containerRecommendations: { type: 'array' } } },
    });
  });

  it("adds VPA 1.7's InPlace to an older CRD's updateMode enum, after its own values", () => {
    const old = upstreamCrd();
    const mode = v1Schema(old).properties.spec.properties.updatePolicy.properties.updateMode;
    mode.enum = ['Off', 'Initial', 'Recreate', 'Auto'];
    expect(modes(withScope(old))).toEqual([
      'Off',
      'Initial',
      'Recreate',
      'Auto',
      'InPlaceOrRecreate',
      'InPlace',
    ]);
  });

  it('is idempotent: applying it twice adds the rule once', () => {
    const twice = withScope(withScope(upstreamCrd()));
    const spec = twice.spec!.versions![0]!.schema!.openAPIV3Schema!.properties!.spec!;
    expect(spec['x-kubernetes-validations']).toEqual([CUSTOM_RULE, SCOPE_RULE]);
  });

  it('adds a non-storage v1 to a CRD that has only older versions', () => {
    const crd = upstreamCrd();
    crd.spec!.versions = crd.spec!.versions!.slice(1);
    const names = withScope(crd).spec!.versions!.map((v) => [v.name, v.storage]);
    expect(names).toEqual([
      ['v1beta2', false],
      ['v1beta1', false],
      ['v1', false],
    ]);
  });
});

describe('label keys', () => {
  it('accepts what Kubernetes accepts as a label key and names what is wrong otherwise', () => {
    const pattern = new RegExp(LABEL_KEY_PATTERN);
    for (const ok of [
      'node',
      'kubernetes.io/hostname',
      'node.kubernetes.io/instance-type',
      'nvidia.com/gpu.present',
      'node-role/gpu_shared',
      `${'a'.repeat(253)}/${'b'.repeat(63)}`,
    ]) {
      expect(labelKeyProblem(ok), ok).toBeUndefined();
      expect(pattern.test(ok), ok).toBe(true);
    }
    const bad: [string, RegExp][] = [
      ['', /name part is empty/],
      ['example.com/', /name part is empty/],
      ['/zone', /prefix before "\/" is empty/],
      ['-zone', /starts and ends alphanumeric/],
      ['Example.com/zone', /DNS subdomain/],
      ['a/b/c', /label key/],
      ['zone name', /label key/],
      [`x/${'b'.repeat(64)}`, /longer than 63/],
      [`${'a'.repeat(254)}/b`, /prefix is longer than 253/],
    ];
    for (const [key, why] of bad) expect(labelKeyProblem(key), key).toMatch(why);
    // The CRD's pattern refuses the same, but for the prefix's length (left to fleetscope's check).
    for (const [key] of bad.slice(0, -1)) expect(pattern.test(key), key).toBe(false);
  });
});
