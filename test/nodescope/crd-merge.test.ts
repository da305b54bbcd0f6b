/**
 * install-crd adds spec.scope and changes nothing else of the installed CRD: the upstream manifest has
 * printer columns and older versions (v1beta2, v1beta1) that `kubectl get vpa` and stored objects need.
 */
import { describe, expect, it } from 'vitest';
import { vpaCrd, vpaV1Version } from '../../shared/kernel/crds/vpa.js';
import { type CrdJson, SCOPE_RULE, withScope } from '../../shared/nodescope/crd.js';

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

describe('withScope', () => {
  it('adds spec.scope (enum and CEL rule) to v1 and keeps every other part of the CRD', () => {
    const before = upstreamCrd();
    const after = withScope(structuredClone(before));
    const [v1, ...others] = after.spec!.versions!;
    const spec = v1!.schema!.openAPIV3Schema!.properties!.spec!;
    expect(spec.properties!.scope).toMatchObject({ type: 'string', enum: ['node'] });
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
    // Every v1 spec property that was there is still there, unchanged.
    const beforeSpec = before.spec!.versions![0]!.schema!.openAPIV3Schema!.properties!.spec!;
    expect(spec.properties).toMatchObject(beforeSpec.properties!);
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
