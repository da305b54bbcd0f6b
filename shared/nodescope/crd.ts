/**
 * The VerticalPodAutoscaler CRD variant that carries KEP-4943's `spec.scope`, with validation: an
 * OpenAPI enum (the only scope is `node`) and a CEL rule (`node` only when targetRef.kind is DaemonSet),
 * so the apiserver itself refuses node scope on anything else. Status gains `nodeScope`, the structured
 * summary fleetscope writes.
 *
 * Installing it over an existing VPA CRD changes only the v1 schema (other versions and their stored
 * objects stay as they are): existing VPAs keep working, and `spec.scope` stops being pruned. Rollback is
 * re-applying the stock CRD; the annotation fleetscope.io/scope: node works with either.
 */

import type { ClusterClient } from '../k8s/client.js';
import { ClusterAccessError } from '../k8s/errors.js';
import { RawReader } from '../k8s/raw-reader.js';
import { VPA_CRD_NAME, vpaCrd, vpaSchema, vpaV1Version } from '../kernel/crds/vpa.js';

/** The CEL rule on spec (also checked by fleetscope itself, for clusters with the stock CRD). */
export const SCOPE_RULE = {
  rule: "!has(self.scope) || self.scope != 'node' || self.targetRef.kind == 'DaemonSet'",
  message: 'scope: node applies to DaemonSets only (targetRef.kind must be DaemonSet)',
  fieldPath: '.scope',
  reason: 'FieldValueForbidden',
};

export const SCOPE_PROPERTY = {
  type: 'string',
  enum: ['node'],
  description:
    'Scope of the recommendation (KEP-4943). "node": each node\'s pod of the target DaemonSet gets its own recommendation from that node\'s history. Only valid when targetRef.kind is DaemonSet.',
};

/** What the variant adds to the stock v1 schema. */
const SCOPED = {
  spec: { scope: SCOPE_PROPERTY },
  specValidations: [SCOPE_RULE],
  status: {
    nodeScope: {
      type: 'object',
      description: 'Summary of the node-scoped recommendations (fleetscope)',
      'x-kubernetes-preserve-unknown-fields': true,
    },
  },
};

/** The v1 openAPIV3Schema of the scoped variant. */
export function scopedVpaSchema(): Record<string, unknown> {
  return vpaSchema(SCOPED);
}

/** The whole CRD, for a cluster that has none (kubectl apply -f of this is the same). */
export function scopedVpaCrd(): Record<string, unknown> {
  return vpaCrd(v1Version(), { 'fleetscope.io/variant': 'scope' });
}

function v1Version(): Record<string, unknown> {
  return vpaV1Version(SCOPED, [
    { name: 'Mode', type: 'string', jsonPath: '.spec.updatePolicy.updateMode' },
    { name: 'Scope', type: 'string', jsonPath: '.spec.scope' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ]);
}

/**
 * Installs the variant: creates the CRD when absent, else replaces its v1 schema (keeping every other
 * version). Raw JSON throughout: client-node's typed models rename the x-kubernetes-* keys.
 */
export async function installScopedCrd(client: ClusterClient): Promise<'created' | 'updated' | 'unchanged'> {
  const raw = new RawReader(client);
  const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions`;
  let existing: CrdJson | undefined;
  try {
    existing = await raw.get<CrdJson>('get VPA CRD', `${path}/${VPA_CRD_NAME}`);
  } catch (err) {
    if (!(err instanceof ClusterAccessError && err.status === 404)) throw err;
  }
  if (!existing) {
    await raw.send('create VPA CRD', 'POST', path, scopedVpaCrd());
    return 'created';
  }
  const versions = existing.spec?.versions ?? [];
  const v1 = versions.find((v) => v.name === 'v1');
  if (v1?.schema?.openAPIV3Schema?.properties?.spec?.properties?.scope) return 'unchanged';
  const next: Record<string, unknown>[] = versions.map((v) =>
    v.name === 'v1' ? { ...v, ...v1Version(), storage: v.storage ?? true } : v,
  );
  if (!v1) next.push({ ...v1Version(), storage: false });
  const meta = existing.metadata ?? {};
  await raw.send('replace VPA CRD', 'PUT', `${path}/${VPA_CRD_NAME}`, {
    ...existing,
    metadata: { ...meta, annotations: { ...meta.annotations, 'fleetscope.io/variant': 'scope' } },
    spec: { ...existing.spec, versions: next },
  });
  return 'updated';
}

interface CrdJson {
  metadata?: { resourceVersion?: string; annotations?: Record<string, string> };
  spec?: {
    versions?: {
      name?: string;
      storage?: boolean;
      schema?: { openAPIV3Schema?: { properties?: { spec?: { properties?: { scope?: unknown } } } } };
    }[];
  };
}
