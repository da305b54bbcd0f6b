/**
 * The VerticalPodAutoscaler CRD variant that carries KEP-4943's `spec.scope`, with validation: an
 * OpenAPI enum (the only scope is `node`) and a CEL rule (`node` only when targetRef.kind is DaemonSet),
 * so the apiserver itself refuses node scope on anything else. Status gains `nodeScope`, the structured
 * summary fleetscope writes.
 *
 * Installing it over an existing VPA CRD adds scope to the v1 schema and changes nothing else (other
 * versions, printer columns and stored objects stay as they are): existing VPAs keep working, and `spec.scope` stops being pruned. Rollback is
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

/** The whole CRD, for a cluster that has none: the stock CRD (its printer columns) with spec.scope. */
export function scopedVpaCrd(): Record<string, unknown> {
  return withScope(vpaCrd()) as Record<string, unknown>;
}

/**
 * The installed CRD with spec.scope added to its v1 schema, and nothing else changed: other versions,
 * printer columns (kubectl get vpa's CPU and Mem), names and conversion stay as installed. A CRD
 * without v1 gets the stock v1 (not storage, since another version already is).
 */
export function withScope(crd: CrdJson): CrdJson {
  const versions = crd.spec?.versions ?? [];
  const hasV1 = versions.some((v) => v.name === 'v1');
  const next = hasV1
    ? versions.map((v) => (v.name === 'v1' ? scopeVersion(v) : v))
    : [...versions, scopeVersion({ ...vpaV1Version(), storage: false })];
  const meta = crd.metadata ?? {};
  return {
    ...crd,
    metadata: { ...meta, annotations: { ...meta.annotations, 'fleetscope.io/variant': 'scope' } },
    spec: { ...crd.spec, versions: next },
  };
}

/** One version with scope in spec (property and CEL rule) and nodeScope in status, merged in place. */
function scopeVersion(version: CrdVersion): CrdVersion {
  const root: RootSchema = version.schema?.openAPIV3Schema ?? (scopedVpaSchema() as RootSchema);
  const props: NonNullable<RootSchema['properties']> = root.properties ?? {};
  const spec = props.spec ?? { type: 'object' };
  const rules = (spec['x-kubernetes-validations'] ?? []).filter((r) => r.rule !== SCOPE_RULE.rule);
  const status = props.status ?? { type: 'object' };
  return {
    ...version,
    schema: {
      ...version.schema,
      openAPIV3Schema: {
        ...root,
        properties: {
          ...props,
          spec: {
            ...spec,
            properties: { ...spec.properties, ...SCOPED.spec },
            'x-kubernetes-validations': [...rules, ...SCOPED.specValidations],
          },
          // fleetscope's summary would otherwise be pruned from status.
          status: { ...status, properties: { ...status.properties, ...SCOPED.status } },
        },
      },
    },
  };
}

/**
 * Installs the variant: creates the CRD when absent, else adds spec.scope to the installed one (see
 * withScope). Raw JSON throughout: client-node's typed models rename the x-kubernetes-* keys.
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
  const v1 = existing.spec?.versions?.find((v) => v.name === 'v1');
  if (v1?.schema?.openAPIV3Schema?.properties?.spec?.properties?.scope) return 'unchanged';
  await raw.send('replace VPA CRD', 'PUT', `${path}/${VPA_CRD_NAME}`, withScope(existing));
  return 'updated';
}

type Json = Record<string, unknown>;
interface SchemaNode extends Json {
  properties?: Record<string, Json>;
  'x-kubernetes-validations'?: { rule?: string }[];
}
type RootSchema = SchemaNode & { properties?: { spec?: SchemaNode; status?: SchemaNode } };
interface CrdVersion extends Json {
  name?: string;
  storage?: boolean;
  schema?: { openAPIV3Schema?: RootSchema };
}
export interface CrdJson extends Json {
  metadata?: { resourceVersion?: string; annotations?: Record<string, string> } & Json;
  spec?: { versions?: CrdVersion[] } & Json;
}
