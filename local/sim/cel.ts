/**
 * CRD validation rules (`x-kubernetes-validations`), evaluated on create and update with the
 * maintained CEL evaluator @bufbuild/cel, and reported as the apiextensions-apiserver does
 * (apiextensions-apiserver pkg/apiserver/schema/cel/validation.go): `<path>: Invalid value: "<schema
 * type>": <message, or "failed rule: <rule>">`, the rule's reason and fieldPath honoured. Transition
 * rules (those using oldSelf) run only on update, where the old value exists.
 */
import { type CelInput, celEnv, isCelError, parse, plan } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { type FieldError, fieldForbidden, fieldInvalid, fieldRequired } from './errors.js';
import { isObject, type Json } from './json.js';

const env = celEnv({ funcs: strings });
type Program = ReturnType<typeof plan>;
const programs = new Map<string, Program | Error>();

function compiled(rule: string): Program | Error {
  let p = programs.get(rule);
  if (!p) {
    try {
      p = plan(env, parse(rule));
    } catch (err) {
      p = err instanceof Error ? err : new Error(String(err));
    }
    programs.set(rule, p);
  }
  return p;
}

/** JSON as CEL sees it: objects are maps, integers int (the structural schema's integer), numbers double. */
function toCel(v: Json, schema: Json): CelInput {
  if (Array.isArray(v)) return v.map((x) => toCel(x, schema?.items));
  if (isObject(v))
    return new Map(
      Object.entries(v).map(([k, x]) => [
        k,
        toCel(x, schema?.properties?.[k] ?? schema?.additionalProperties),
      ]),
    );
  if (
    typeof v === 'number' &&
    (schema?.type === 'integer' || (schema?.type !== 'number' && Number.isInteger(v)))
  )
    return BigInt(v);
  return v as CelInput;
}

interface Rule {
  rule: string;
  message?: string;
  reason?: string;
  fieldPath?: string;
}

const ruleText = (r: Rule) => (r.message?.trim() ? r.message.trim() : r.rule.trim());

function failure(r: Rule, path: string, type: string): FieldError {
  const at = r.fieldPath
    ? `${path}${r.fieldPath.startsWith('.') ? '' : '.'}${r.fieldPath}`.replace(/^\./, '')
    : path;
  const detail = r.message?.trim() ? r.message.trim() : `failed rule: ${ruleText(r)}`;
  if (r.reason === 'FieldValueForbidden') return fieldForbidden(at, detail);
  if (r.reason === 'FieldValueRequired') return fieldRequired(at, detail);
  return fieldInvalid(at, type, detail);
}

function evaluate(
  rules: Rule[],
  schema: Json,
  value: Json,
  old: Json,
  path: string,
  errs: FieldError[],
): void {
  const type = String(schema.type ?? '');
  for (const r of rules) {
    const usesOld = /\boldSelf\b/.test(r.rule);
    if (usesOld && old === undefined) continue;
    const program = compiled(r.rule);
    if (program instanceof Error) {
      errs.push(fieldInvalid(path, type, `compilation failed: ${program.message} for rule: ${ruleText(r)}`));
      continue;
    }
    const bindings: Record<string, CelInput> = { self: toCel(value, schema) };
    if (usesOld) bindings.oldSelf = toCel(old, schema);
    const result = program(bindings as never);
    if (isCelError(result)) {
      // cel-go's wording for a missing field: "no such key: <name>".
      const msg = result.message.replace(/^field not found: /, 'no such key: ');
      errs.push(fieldInvalid(path, type, `${msg} evaluating rule: ${ruleText(r)}`));
    } else if (result !== true) {
      errs.push(failure(r, path, type));
    }
  }
}

/** Every validation rule of `schema` on `value` (and `old`, on update), depth first. */
export function validateRules(schema: Json, value: Json, old: Json, path: string, errs: FieldError[]): void {
  if (!isObject(schema) || value === undefined || value === null) return;
  const rules = schema['x-kubernetes-validations'];
  if (Array.isArray(rules) && rules.length) evaluate(rules, schema, value, old, path || '<nil>', errs);
  const child = (p: string) => (path ? `${path}.${p}` : p);
  if (isObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      const s =
        schema.properties?.[k] ??
        (isObject(schema.additionalProperties) ? schema.additionalProperties : undefined);
      validateRules(s, v, isObject(old) ? old[k] : undefined, child(k), errs);
    }
  } else if (Array.isArray(value) && isObject(schema.items)) {
    // Old items are correlated by position only for atomic lists in this approximation.
    value.forEach((v, i) => {
      validateRules(schema.items, v, undefined, `${path}[${i}]`, errs);
    });
  }
}
