/**
 * CustomResourceDefinitions and the custom resources they serve: CRD validation (the protected-group
 * approval annotation of recorded 08a, one storage version, schemas required), establishment (status
 * conditions, the resource appears in discovery), and for custom objects structural-schema validation
 * (type, required, minLength/maxLength, pattern, enum, minimum/maximum, items) and pruning of unknown
 * fields with a `Warning: 299` header, as the apiextensions-apiserver does.
 */
import { validateRules } from './cel.js';
import { rfc3339 } from './clock.js';
import { compareKubeVersions } from './discovery.js';
import {
  badRequest,
  type FieldError,
  fieldInvalid,
  fieldNotSupported,
  fieldRequired,
  GoLiteral,
  invalid,
} from './errors.js';
import { clone, isObject, type Json, type JsonObject, orderKeys, sortKeysDeep } from './json.js';
import { orderTop } from './objects.js';
import type { ResourceDef } from './registry.js';
import type { Scope, SimState, Strategy } from './state.js';

export const APPROVAL_ANNOTATION = 'api-approved.kubernetes.io';

const SCHEMA_ORDER = [
  'id',
  '$schema',
  '$ref',
  'description',
  'type',
  'format',
  'title',
  'default',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'multipleOf',
  'enum',
  'maxProperties',
  'minProperties',
  'required',
  'items',
  'allOf',
  'oneOf',
  'anyOf',
  'not',
  'properties',
  'additionalProperties',
  'patternProperties',
  'dependencies',
  'additionalItems',
  'definitions',
  'externalDocs',
  'example',
  'nullable',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
];

function orderSchema(s: Json): Json {
  if (!isObject(s)) return s;
  const o = orderKeys(s, SCHEMA_ORDER);
  if (isObject(o.properties))
    o.properties = Object.fromEntries(Object.entries(o.properties).map(([k, v]) => [k, orderSchema(v)]));
  if (isObject(o.items)) o.items = orderSchema(o.items);
  if (isObject(o.additionalProperties)) o.additionalProperties = orderSchema(o.additionalProperties);
  return o;
}

const isProtectedGroup = (g: string): boolean =>
  g === 'k8s.io' || g.endsWith('.k8s.io') || g === 'kubernetes.io' || g.endsWith('.kubernetes.io');

function normalizeCrd(crd: JsonObject): JsonObject {
  const out = orderTop(crd);
  const spec = out.spec;
  if (isObject(spec)) {
    const s = orderKeys(spec, ['group', 'names', 'scope', 'versions', 'conversion', 'preserveUnknownFields']);
    if (isObject(s.names))
      s.names = orderKeys(s.names, ['plural', 'singular', 'shortNames', 'kind', 'listKind', 'categories']);
    if (Array.isArray(s.versions))
      s.versions = s.versions.map((v: Json) => {
        if (!isObject(v)) return v;
        const ov = orderKeys(v, [
          'name',
          'served',
          'storage',
          'deprecated',
          'deprecationWarning',
          'schema',
          'subresources',
          'additionalPrinterColumns',
          'selectableFields',
        ]);
        if (isObject(ov.schema?.openAPIV3Schema))
          ov.schema = { ...ov.schema, openAPIV3Schema: orderSchema(ov.schema.openAPIV3Schema) };
        if (Array.isArray(ov.additionalPrinterColumns))
          ov.additionalPrinterColumns = ov.additionalPrinterColumns.map((c: Json) =>
            isObject(c) ? orderKeys(c, ['name', 'type', 'format', 'description', 'priority', 'jsonPath']) : c,
          );
        return ov;
      });
    out.spec = s;
  }
  if (isObject(out.status))
    out.status = orderKeys(out.status, ['conditions', 'acceptedNames', 'storedVersions']);
  return out;
}

function validateCrd(crd: Json): FieldError[] {
  const errs: FieldError[] = [];
  const spec = crd.spec ?? {};
  const group = spec.group as string | undefined;
  const plural = spec.names?.plural as string | undefined;
  if (!group) errs.push(fieldRequired('spec.group'));
  if (!plural) errs.push(fieldRequired('spec.names.plural'));
  if (!spec.names?.kind) errs.push(fieldRequired('spec.names.kind'));
  if (group && plural && crd.metadata.name !== `${plural}.${group}`)
    errs.push(fieldInvalid('metadata.name', crd.metadata.name, 'must be spec.names.plural+"."+spec.group'));
  if (spec.scope !== 'Namespaced' && spec.scope !== 'Cluster')
    errs.push(fieldNotSupported('spec.scope', spec.scope ?? '', ['Cluster', 'Namespaced']));
  const versions: Json[] = Array.isArray(spec.versions) ? spec.versions : [];
  if (versions.length === 0)
    errs.push(fieldRequired('spec.versions', 'must have exactly one version marked as storage version'));
  else if (versions.filter((v) => v?.storage).length !== 1)
    errs.push(
      fieldInvalid(
        'spec.versions',
        versions.map((v) => v?.name),
        'must have exactly one version marked as storage version',
      ),
    );
  versions.forEach((v, i) => {
    if (!isObject(v?.schema?.openAPIV3Schema))
      errs.push(fieldRequired(`spec.versions[${i}].schema.openAPIV3Schema`, 'schemas are required'));
  });
  if (group && isProtectedGroup(group)) {
    const a = crd.metadata.annotations?.[APPROVAL_ANNOTATION];
    if (a === undefined)
      errs.push(
        fieldRequired(
          `metadata.annotations[${APPROVAL_ANNOTATION}]`,
          `protected groups must have approval annotation "${APPROVAL_ANNOTATION}", see https://github.com/kubernetes/enhancements/pull/1111`,
        ),
      );
    else if (!/^https?:\/\//.test(a) && !a.startsWith('unapproved'))
      errs.push(
        fieldInvalid(
          `metadata.annotations[${APPROVAL_ANNOTATION}]`,
          a,
          'protected groups must have approval annotation "api-approved.kubernetes.io" with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111',
        ),
      );
  }
  return errs;
}

export function crdStrategy(): Strategy {
  return {
    nameRule: 'subdomain',
    prepareCreate(crd) {
      const spec: JsonObject = isObject(crd.spec) ? { ...crd.spec } : {};
      if (isObject(spec.names)) {
        const n = { ...spec.names };
        n.singular ??= String(n.kind ?? '').toLowerCase();
        n.listKind ??= `${n.kind}List`;
        spec.names = n;
      }
      spec.conversion ??= { strategy: 'None' };
      crd.spec = spec;
      const storage = (spec.versions ?? []).find((v: Json) => v?.storage)?.name;
      crd.status = {
        conditions: null,
        acceptedNames: { plural: '', kind: '' },
        storedVersions: storage ? [storage] : [],
      };
    },
    validateCreate: validateCrd,
    prepareUpdate(crd, old) {
      crd.status = clone(old.status);
      if (isObject(crd.spec)) crd.spec.conversion ??= { strategy: 'None' };
    },
    validateUpdate(crd, old, scope) {
      if (scope.subresource === 'status') return [];
      const errs = validateCrd(crd);
      if (crd.spec?.scope !== old.spec?.scope)
        errs.push(fieldInvalid('spec.scope', crd.spec?.scope, 'field is immutable'));
      return errs;
    },
    normalize: normalizeCrd,
  };
}

/** The status the apiextensions controllers give an accepted CRD (names accepted, established). */
export function establishedStatus(crd: Json, now: number): JsonObject {
  const t = rfc3339(now);
  const prev: Json[] = crd.status?.conditions ?? [];
  const since = (type: string) => prev.find((c) => c.type === type)?.lastTransitionTime ?? t;
  const conditions: JsonObject[] = [];
  const approval = crd.metadata.annotations?.[APPROVAL_ANNOTATION];
  if (isProtectedGroup(crd.spec.group)) {
    const ok = typeof approval === 'string' && !approval.startsWith('unapproved');
    conditions.push({
      type: 'KubernetesAPIApprovalPolicyConformant',
      status: ok ? 'True' : 'False',
      lastTransitionTime: since('KubernetesAPIApprovalPolicyConformant'),
      reason: ok ? 'ApprovedAnnotation' : 'UnapprovedAnnotation',
      message: ok ? `approved in ${approval}` : `not approved: "${approval}"`,
    });
  }
  conditions.push({
    type: 'NamesAccepted',
    status: 'True',
    lastTransitionTime: since('NamesAccepted'),
    reason: 'NoConflicts',
    message: 'no conflicts found',
  });
  conditions.push({
    type: 'Established',
    status: 'True',
    lastTransitionTime: since('Established'),
    reason: 'InitialNamesAccepted',
    message: 'the initial names have been accepted',
  });
  const storage = (crd.spec.versions ?? []).find((v: Json) => v.storage)?.name;
  const stored: string[] = [...(crd.status?.storedVersions ?? [])];
  if (storage && !stored.includes(storage)) stored.push(storage);
  return {
    conditions,
    acceptedNames: orderKeys(clone(crd.spec.names), [
      'plural',
      'singular',
      'shortNames',
      'kind',
      'listKind',
      'categories',
    ]),
    storedVersions: stored,
  };
}

/** The ResourceDef a CRD serves. */
export function resourceFromCrd(crd: Json): ResourceDef {
  const spec = crd.spec;
  const served: Json[] = (spec.versions ?? []).filter((v: Json) => v.served);
  const versions: ResourceDef['custom'] = { crdName: crd.metadata.name, versions: {} };
  for (const v of served) {
    (versions as NonNullable<ResourceDef['custom']>).versions[v.name] = {
      schema: v.schema?.openAPIV3Schema ?? {},
      columns: v.additionalPrinterColumns ?? [],
      status: isObject(v.subresources?.status),
      selectableFields: (v.selectableFields ?? []).map((f: Json) => f.jsonPath),
    };
  }
  const anyStatus = served.some((v) => isObject(v.subresources?.status));
  return {
    group: spec.group,
    versions: served.map((v) => v.name).sort(compareKubeVersions),
    storageVersion: (spec.versions ?? []).find((v: Json) => v.storage)?.name ?? served[0]?.name,
    resource: spec.names.plural,
    singular: spec.names.singular ?? String(spec.names.kind).toLowerCase(),
    kind: spec.names.kind,
    listKind: spec.names.listKind ?? `${spec.names.kind}List`,
    namespaced: spec.scope === 'Namespaced',
    verbs: ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch'],
    shortNames: spec.names.shortNames,
    categories: spec.names.categories,
    subresources: anyStatus
      ? [{ name: 'status', kind: spec.names.kind, verbs: ['get', 'patch', 'update'] }]
      : [],
    hasGeneration: true,
    // A custom resource's delete answers a Success Status, not the object (npm run fidelity).
    returnDeletedObject: false,
    allowUnconditionalUpdate: false,
    allowCreateOnUpdate: false,
    custom: versions,
  };
}

const jsonType = (v: unknown): string => {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
};

/** Validates a value against a structural schema; errors carry kube-openapi's messages. */
export function validateSchema(schema: Json, value: Json, path: string, errs: FieldError[]): void {
  if (!isObject(schema)) return;
  if (value === null) {
    if (!schema.nullable && schema.type)
      errs.push({
        type: 'FieldValueTypeInvalid',
        field: path,
        value: 'null',
        detail: `${path} in body must be of type ${schema.type}: "null"`,
      });
    return;
  }
  if (!checkType(schema, value, path, errs)) return;
  if (
    Array.isArray(schema.enum) &&
    !schema.enum.some((e: Json) => JSON.stringify(e) === JSON.stringify(value))
  )
    errs.push(
      fieldNotSupported(
        path,
        value,
        schema.enum.map((e: Json) => (typeof e === 'string' ? e : JSON.stringify(e))),
      ),
    );
  if (typeof value === 'string') checkString(schema, value, path, errs);
  if (typeof value === 'number') checkNumber(schema, value, path, errs);
  if (Array.isArray(value)) checkArray(schema, value, path, errs);
  if (isObject(value)) checkObject(schema, value, path, errs);
}

/** The value's JSON type against the schema's; false when it is wrong (nothing else is checked then). */
function checkType(schema: JsonObject, value: Json, path: string, errs: FieldError[]): boolean {
  const t = jsonType(value);
  const want = schema.type as string | undefined;
  if (schema['x-kubernetes-int-or-string']) {
    // Reported, and its other constraints still checked.
    if (t !== 'integer' && t !== 'string')
      errs.push({
        type: 'FieldValueTypeInvalid',
        field: path,
        value: t,
        detail: `${path} in body must be of type integer,string: "${t}"`,
      });
    return true;
  }
  if (!want || want === t || (want === 'number' && t === 'integer')) return true;
  errs.push({
    type: 'FieldValueTypeInvalid',
    field: path,
    value: t,
    detail: `${path} in body must be of type ${want}: "${t}"`,
  });
  return false;
}

function checkString(schema: JsonObject, value: string, path: string, errs: FieldError[]): void {
  const len = [...value].length;
  if (typeof schema.maxLength === 'number' && len > schema.maxLength)
    errs.push({
      type: 'FieldValueTooLong',
      field: path,
      detail: `may not be more than ${schema.maxLength} bytes`,
    });
  if (typeof schema.minLength === 'number' && len < schema.minLength)
    errs.push(fieldInvalid(path, value, `${path} in body should be at least ${schema.minLength} chars long`));
  if (typeof schema.pattern === 'string') {
    let re: RegExp | undefined;
    try {
      re = new RegExp(schema.pattern, 'u');
    } catch {
      re = undefined;
    }
    if (re && !re.test(value))
      errs.push(fieldInvalid(path, value, `${path} in body should match '${schema.pattern}'`));
  }
}

function checkNumber(schema: JsonObject, value: number, path: string, errs: FieldError[]): void {
  if (typeof schema.minimum === 'number') {
    if (schema.exclusiveMinimum ? value <= schema.minimum : value < schema.minimum)
      errs.push(
        fieldInvalid(
          path,
          value,
          `${path} in body should be greater than ${schema.exclusiveMinimum ? '' : 'or equal to '}${schema.minimum}`,
        ),
      );
  }
  if (typeof schema.maximum === 'number') {
    if (schema.exclusiveMaximum ? value >= schema.maximum : value > schema.maximum)
      errs.push(
        fieldInvalid(
          path,
          value,
          `${path} in body should be less than ${schema.exclusiveMaximum ? '' : 'or equal to '}${schema.maximum}`,
        ),
      );
  }
}

function checkArray(schema: JsonObject, value: Json[], path: string, errs: FieldError[]): void {
  if (typeof schema.maxItems === 'number' && value.length > schema.maxItems)
    errs.push({
      type: 'FieldValueTooMany',
      field: path,
      detail: `must have at most ${schema.maxItems} items`,
    });
  if (typeof schema.minItems === 'number' && value.length < schema.minItems)
    errs.push(
      fieldInvalid(path, value.length, `${path} in body should have at least ${schema.minItems} items`),
    );
  if (isObject(schema.items))
    value.forEach((x, i) => {
      validateSchema(schema.items, x, `${path}[${i}]`, errs);
    });
}

/** Required fields, then each field against its property's schema (or additionalProperties). */
function checkObject(schema: JsonObject, value: JsonObject, path: string, errs: FieldError[]): void {
  for (const r of schema.required ?? [])
    if (value[r] === undefined) errs.push(fieldRequired(path ? `${path}.${r}` : r));
  const props = isObject(schema.properties) ? schema.properties : {};
  for (const [k, v] of Object.entries(value)) {
    const child = path ? `${path}.${k}` : k;
    if (props[k]) validateSchema(props[k], v, child, errs);
    else if (isObject(schema.additionalProperties))
      validateSchema(schema.additionalProperties, v, child, errs);
  }
}

/** Removes fields the schema does not declare; returns the paths removed (for warnings). */
export function prune(schema: Json, value: Json, path: string, removed: string[]): Json {
  if (!isObject(schema) || (schema['x-kubernetes-preserve-unknown-fields'] === true && !schema.properties))
    return value;
  if (Array.isArray(value))
    return isObject(schema.items)
      ? value.map((x, i) => prune(schema.items, x, `${path}[${i}]`, removed))
      : value;
  if (!isObject(value)) return value;
  const props = isObject(schema.properties) ? schema.properties : undefined;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(value)) {
    const child = path ? `${path}.${k}` : k;
    if (props?.[k]) out[k] = prune(props[k], v, child, removed);
    else if (isObject(schema.additionalProperties))
      out[k] = prune(schema.additionalProperties, v, child, removed);
    else if (schema.additionalProperties === true || schema['x-kubernetes-preserve-unknown-fields'] === true)
      out[k] = v;
    else removed.push(child);
  }
  return out;
}

/** Whether a schema has any x-kubernetes-validations rule (the apiserver then builds a CEL validator). */
function hasRules(schema: Json): boolean {
  if (!isObject(schema)) return false;
  if (Array.isArray(schema['x-kubernetes-validations']) && schema['x-kubernetes-validations'].length)
    return true;
  const children = [
    ...Object.values(isObject(schema.properties) ? schema.properties : {}),
    schema.items,
    schema.additionalProperties,
  ];
  return children.some((c) => hasRules(c as Json));
}

export function customResourceStrategy(def: ResourceDef): Strategy {
  return {
    nameRule: 'subdomain',
    admit(obj: JsonObject, scope: Scope, old?: Json) {
      const version = scope.version;
      const schema = def.custom?.versions[version]?.schema ?? {};
      const { apiVersion, kind, metadata, ...rest } = obj;
      const removed: string[] = [];
      const props = isObject(schema.properties) ? schema.properties : {};
      const body: JsonObject = {};
      for (const [k, v] of Object.entries(rest)) {
        if (props[k]) body[k] = prune(props[k], v, k, removed);
        else if (schema['x-kubernetes-preserve-unknown-fields'] === true) body[k] = v;
        else removed.push(k);
      }
      if (removed.length && scope.fieldValidation === 'Strict')
        throw badRequest(
          `${def.kind} in version "${version}" cannot be handled as a ${def.kind}: strict decoding error: ${removed.map((r) => `unknown field "${r}"`).join(', ')}`,
        );
      if (scope.fieldValidation !== 'Ignore')
        for (const r of removed) scope.warnings.push(`unknown field "${r}"`);
      const errs: FieldError[] = [];
      const rootSchema = {
        ...schema,
        properties: { ...props, apiVersion: undefined, kind: undefined, metadata: undefined },
      };
      validateSchema(rootSchema, body, '', errs);
      // As the apiextensions strategy: where the schema has validation rules, type and enum errors
      // block them (hasBlockingErr) and say so. The nil value prints as "null" on 1.33.13 and as a bare
      // null on 1.36.2 (both seen on real servers; 1.34 and 1.35 are unverified and kept as before).
      const blocking = errs.some(
        (e) => e.type === 'FieldValueTypeInvalid' || e.type === 'FieldValueNotSupported',
      );
      if (blocking && hasRules(schema))
        errs.push({
          type: 'FieldValueInvalid',
          field: '<nil>',
          value: scope.cluster.version.minor >= 36 ? new GoLiteral('null') : 'null',
          detail:
            'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
        });
      else if (!blocking) validateRules(schema, { apiVersion, kind, metadata, ...body }, old, '', errs);
      if (errs.length) throw invalid(def.kind, def.group, metadata?.name ?? '', errs);
      return { apiVersion: `${def.group}/${def.storageVersion}`, kind, metadata, ...body };
    },
    prepareUpdate(obj, old, scope) {
      if (def.custom?.versions[scope.version]?.status) {
        obj.status = clone(old.status);
        if (obj.status === undefined) delete obj.status;
      }
    },
    normalize: (obj) => sortKeysDeep(obj),
  };
}

/** Registers the resource of an established CRD and updates the CRD status (the apiextensions controllers). */
export function establish(cluster: SimState, crdName: string): void {
  const crd = cluster.store.get('customresourcedefinitions.apiextensions.k8s.io', crdName);
  if (!crd) return;
  cluster.registerCustomResource(resourceFromCrd(crd));
  const status = establishedStatus(crd, cluster.clock.now());
  if (JSON.stringify(status) === JSON.stringify(crd.status)) return;
  cluster.internalWrite(
    'customresourcedefinitions.apiextensions.k8s.io',
    crdName,
    normalizeCrd({ ...crd, status }),
  );
}
