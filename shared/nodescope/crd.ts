/**
 * The VerticalPodAutoscaler CRD variant fleetscope installs: `spec.scope` as AEP-10031 has it (any node
 * label key; KEP-4943's `node` is still accepted, being a valid key), allowed only for DaemonSet targets
 * (a CEL rule, so the apiserver itself refuses it elsewhere), and in status the groups (one
 * recommendation per value of the label) in one of two shapes (collect.ts StatusShape): AEP-10031 as it
 * stands, `recommendationGroups` (the default), or the Deckhouse fork's older `groups`; beside them
 * `nodeScope`, the structured summary fleetscope writes. The shape is also said in the CRD's annotation
 * fleetscope.io/status-shape, which decides where a CRD keeps both fields.
 * updatePolicy.updateMode also accepts VPA 1.7's `InPlace`.
 *
 * Installing it over an existing VPA CRD changes only the v1 schema, and there only adds: other
 * versions, printer columns, names, conversion and stored objects stay as they are. A field the installed
 * CRD already defines (an upstream CRD with AEP-10031's scope and groups) is kept as it is, with its own
 * rules; only fleetscope's earlier variant (scope an enum of `node`) is replaced. Rollback is
 * re-applying the stock CRD; the annotation fleetscope.io/scope works with either.
 */

import { isDeepStrictEqual } from 'node:util';
import type { ClusterClient } from '../k8s/client.js';
import { ClusterAccessError } from '../k8s/errors.js';
import { RawReader } from '../k8s/raw-reader.js';
import { VPA_CRD_NAME, vpaCrd, vpaSchema, vpaV1Version } from '../kernel/crds/vpa.js';
import { STATUS_SHAPE_ANNOTATION, type StatusShape, statusShapeOf } from './collect.js';
import { LABEL_KEY_MAX_LENGTH, LABEL_KEY_PATTERN } from './label-key.js';

/** The CEL rule on spec (also checked by fleetscope itself, for clusters with the stock CRD). */
export const SCOPE_RULE = {
  rule: "!has(self.scope) || self.targetRef.kind == 'DaemonSet'",
  message: 'scope applies to DaemonSets only (targetRef.kind must be DaemonSet)',
  fieldPath: '.scope',
  reason: 'FieldValueForbidden',
};

/** fleetscope's KEP-4943 variant's rule, replaced by SCOPE_RULE on install. */
const KEP4943_RULE = "!has(self.scope) || self.scope != 'node' || self.targetRef.kind == 'DaemonSet'";

export const SCOPE_PROPERTY = {
  type: 'string',
  maxLength: LABEL_KEY_MAX_LENGTH,
  pattern: LABEL_KEY_PATTERN,
  description:
    'Scope of the recommendation (AEP-10031): a node label key. The target DaemonSet\'s pods are grouped by the value of that label on their node (scopeValue "__absent__" for nodes without it), one recommendation per group in status.recommendationGroups (status.groups in the Deckhouse shape); kubernetes.io/hostname (or "node", KEP-4943) gives each node its own. Only valid when targetRef.kind is DaemonSet.',
};

/** The descriptions of fleetscope's earlier variants' spec.scope: theirs, not someone else's. */
const EARLIER_SCOPE_DESCRIPTIONS = [
  'Scope of the recommendation (AEP-10031): a node label key. The target DaemonSet\'s pods are grouped by the value of that label on their node (scopeValue "__absent__" for nodes without it), one recommendation per group in status.groups; kubernetes.io/hostname (or "node", KEP-4943) gives each node its own. Only valid when targetRef.kind is DaemonSet.',
];

/** The status field each shape's groups go in. */
export const GROUPS_FIELD: Record<StatusShape, 'recommendationGroups' | 'groups'> = {
  upstream: 'recommendationGroups',
  deckhouse: 'groups',
};

/** VPA 1.7's update modes; InPlace resizes in place only, never evicts. */
const UPDATE_MODES = ['Off', 'Initial', 'Recreate', 'InPlaceOrRecreate', 'InPlace', 'Auto'];

/** The groups' items: AEP-10031's RecommendedPodResourcesGroup, its containerRecommendations as upstream's. */
function groupsProperty(containerRecommendation: unknown, shape: StatusShape) {
  return {
    type: 'array',
    description:
      shape === 'upstream'
        ? 'One recommendation per value of the spec.scope label (AEP-10031), targets only; status.recommendation is the fallback for pods whose value has none'
        : 'One recommendation per value of the spec.scope label (the Deckhouse fork of AEP-10031)',
    items: {
      type: 'object',
      required: ['scopeValue'],
      properties: {
        scopeValue: {
          type: 'string',
          description: 'The label value; "__absent__" for nodes without the label, "" for an empty value',
        },
        containerRecommendations: { type: 'array', items: containerRecommendation },
      },
    },
  };
}

const NODE_SCOPE_STATUS = {
  type: 'object',
  description: 'Summary of the node-scoped recommendations (fleetscope)',
  'x-kubernetes-preserve-unknown-fields': true,
};

/** The v1 openAPIV3Schema of the scoped variant. */
export function scopedVpaSchema(shape: StatusShape = 'upstream'): Record<string, unknown> {
  return scopeVersion({ schema: { openAPIV3Schema: vpaSchema() as RootSchema } }, shape).schema
    ?.openAPIV3Schema as Record<string, unknown>;
}

/** The whole CRD, for a cluster that has none: the stock CRD (its printer columns) with spec.scope. */
export function scopedVpaCrd(shape?: StatusShape): Record<string, unknown> {
  return withScope(vpaCrd(), shape) as Record<string, unknown>;
}

/**
 * The installed CRD with the variant's fields added to its v1 schema, and nothing else changed: other
 * versions, printer columns (kubectl get vpa's CPU and Mem), names and conversion stay as installed. A
 * CRD without v1 gets the stock v1 (not storage, since another version already is).
 */
export function withScope(crd: CrdJson, asked?: StatusShape): CrdJson {
  const shape = asked ?? defaultShape(crd);
  const versions = crd.spec?.versions ?? [];
  const hasV1 = versions.some((v) => v.name === 'v1');
  const next = hasV1
    ? versions.map((v) => (v.name === 'v1' ? scopeVersion(v, shape) : v))
    : [...versions, scopeVersion({ ...vpaV1Version(), storage: false }, shape)];
  const meta = crd.metadata ?? {};
  const annotations = {
    ...meta.annotations,
    'fleetscope.io/variant': 'scope',
    [STATUS_SHAPE_ANNOTATION]: shape,
  };
  return {
    ...crd,
    metadata: { ...meta, annotations },
    spec: { ...crd.spec, versions: next },
  };
}

/**
 * The shape installed when none is asked for: a CRD whose scope is someone else's (upstream's, the
 * fork's) keeps its own; fleetscope's own variants and CRDs without scope get AEP-10031 as it stands.
 */
export function defaultShape(crd: CrdJson | undefined): StatusShape {
  const root = crd?.spec?.versions?.find((v) => v.name === 'v1')?.schema?.openAPIV3Schema;
  if (!foreignScope(root?.properties?.spec?.properties?.scope)) return 'upstream';
  return statusShapeOf(
    root?.properties?.status?.properties,
    crd?.metadata?.annotations?.[STATUS_SHAPE_ANNOTATION],
  ).shape;
}

/** Whether an installed spec.scope is someone else's (upstream's AEP-10031 CRD): then it is kept as is. */
function foreignScope(scope: Json | undefined): boolean {
  if (!scope) return false;
  const e = scope.enum;
  const kep4943 = Array.isArray(e) && e.length === 1 && e[0] === 'node';
  const ours = [SCOPE_PROPERTY.description, ...EARLIER_SCOPE_DESCRIPTIONS];
  return !kep4943 && !ours.includes(scope.description as string);
}

/** One version with the variant's spec and status fields merged in: only added, never changed. */
function scopeVersion(version: CrdVersion, shape: StatusShape): CrdVersion {
  const root: RootSchema = version.schema?.openAPIV3Schema ?? (vpaSchema() as RootSchema);
  const props: NonNullable<RootSchema['properties']> = root.properties ?? {};
  const spec = props.spec ?? { type: 'object' };
  const theirs = foreignScope(spec.properties?.scope);
  const rules = (spec['x-kubernetes-validations'] ?? []).filter(
    (r) => theirs || (r.rule !== SCOPE_RULE.rule && r.rule !== KEP4943_RULE),
  );
  const status = props.status ?? { type: 'object' };
  const recommendation = status.properties?.recommendation as SchemaNode | undefined;
  const item =
    (recommendation?.properties?.containerRecommendations as SchemaNode | undefined)?.items ??
    stockRecommendationItem();
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
            properties: {
              ...spec.properties,
              ...(theirs ? {} : { scope: SCOPE_PROPERTY }),
              ...withUpdateModes(spec.properties?.updatePolicy),
            },
            'x-kubernetes-validations': theirs ? rules : [...rules, SCOPE_RULE],
          },
          // fleetscope's summary and the groups would otherwise be pruned from status.
          status: {
            ...status,
            properties: {
              [GROUPS_FIELD[shape]]: groupsProperty(item, shape),
              nodeScope: NODE_SCOPE_STATUS,
              ...status.properties,
            },
          },
        },
      },
    },
  };
}

/** updatePolicy with the update modes the installed enum lacks appended (theirs stay, in their order). */
function withUpdateModes(updatePolicy: SchemaNode | undefined): Record<string, SchemaNode> {
  const mode = updatePolicy?.properties?.updateMode;
  const e = mode?.enum;
  if (!updatePolicy || !mode || !Array.isArray(e)) return {};
  const missing = UPDATE_MODES.filter((m) => !e.includes(m));
  if (missing.length === 0) return {};
  return {
    updatePolicy: {
      ...updatePolicy,
      properties: { ...updatePolicy.properties, updateMode: { ...mode, enum: [...e, ...missing] } },
    },
  };
}

function stockRecommendationItem(): unknown {
  const status = (vpaSchema() as RootSchema).properties?.status;
  return (status?.properties?.recommendation?.properties?.containerRecommendations as SchemaNode | undefined)
    ?.items;
}

/**
 * Installs the variant: creates the CRD when absent, else adds what the installed one lacks (see
 * withScope); a CRD that has it all is left untouched. Raw JSON throughout: client-node's typed models
 * rename the x-kubernetes-* keys.
 */
export async function installScopedCrd(
  client: ClusterClient,
  shape?: StatusShape,
): Promise<'created' | 'updated' | 'unchanged'> {
  const raw = new RawReader(client);
  const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions`;
  let existing: CrdJson | undefined;
  try {
    existing = await raw.get<CrdJson>('get VPA CRD', `${path}/${VPA_CRD_NAME}`);
  } catch (err) {
    if (!(err instanceof ClusterAccessError && err.status === 404)) throw err;
  }
  if (!existing) {
    await raw.send('create VPA CRD', 'POST', path, scopedVpaCrd(shape));
    return 'created';
  }
  const next = withScope(existing, shape);
  if (isDeepStrictEqual(next.spec, existing.spec) && isDeepStrictEqual(next.metadata, existing.metadata))
    return 'unchanged';
  await raw.send('replace VPA CRD', 'PUT', `${path}/${VPA_CRD_NAME}`, next);
  return 'updated';
}

type Json = Record<string, unknown>;
interface SchemaNode extends Json {
  properties?: Record<string, SchemaNode>;
  items?: unknown;
  enum?: unknown[];
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
