/**
 * Label selectors (=, ==, !=, in, notin, exists, !exists, gt, lt) and field selectors (=, ==, !=) with
 * the per-resource field sets of the real apiserver.
 */
import { badRequest } from './errors.js';
import { getPath, type Json } from './json.js';

type Op = 'in' | 'notin' | 'exists' | '!exists' | 'gt' | 'lt';
interface Requirement {
  key: string;
  op: Op;
  values: string[];
}

export type Matcher = (labels: Record<string, string> | undefined) => boolean;

const matchAll: Matcher = () => true;

/** Parses a label selector string (labels.Parse). An empty selector matches everything. */
export function parseLabelSelector(s: string | undefined): Matcher {
  if (s === undefined || s.trim() === '') return matchAll;
  const reqs = splitTopLevel(s).map(parseRequirement);
  return (labels) => reqs.every((r) => matches(r, labels ?? {}));
}

function splitTopLevel(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out.map((p) => p.trim()).filter((p) => p !== '');
}

const KEY_RE =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const VALUE_RE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function checkKey(key: string, whole: string): string {
  if (!KEY_RE.test(key))
    throw badRequest(`unable to parse requirement: invalid label key "${key}" in "${whole}"`);
  return key;
}

function checkValue(v: string, whole: string): string {
  if (v.length > 63 || !VALUE_RE.test(v))
    throw badRequest(`unable to parse requirement: invalid label value: "${v}" in "${whole}"`);
  return v;
}

function parseRequirement(p: string): Requirement {
  let m = /^!\s*([^\s=!<>(),]+)$/.exec(p);
  if (m) return { key: checkKey(m[1] as string, p), op: '!exists', values: [] };
  m = /^([^\s=!<>(),]+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(p);
  if (m) {
    const values = (m[3] as string)
      .split(',')
      .map((v) => v.trim())
      .filter((v, _i, a) => v !== '' || a.length === 1)
      .map((v) => checkValue(v, p));
    return { key: checkKey(m[1] as string, p), op: m[2] as Op, values };
  }
  m = /^([^\s=!<>(),]+)\s*(==|=|!=|>|<)\s*([^\s=!<>(),]*)$/.exec(p);
  if (m) {
    const key = checkKey(m[1] as string, p);
    const v = m[3] as string;
    switch (m[2]) {
      case '!=':
        return { key, op: 'notin', values: [checkValue(v, p)] };
      case '>':
      case '<':
        if (!/^-?\d+$/.test(v))
          throw badRequest(
            `unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer`,
          );
        return { key, op: m[2] === '>' ? 'gt' : 'lt', values: [v] };
      default:
        return { key, op: 'in', values: [checkValue(v, p)] };
    }
  }
  m = /^([^\s=!<>(),]+)$/.exec(p);
  if (m) return { key: checkKey(m[1] as string, p), op: 'exists', values: [] };
  throw badRequest(`unable to parse requirement: found '${p}', expected: in, notin, =, ==, !=, gt, lt`);
}

function matches(r: Requirement, labels: Record<string, string>): boolean {
  const has = Object.hasOwn(labels, r.key);
  const v = labels[r.key];
  switch (r.op) {
    case 'exists':
      return has;
    case '!exists':
      return !has;
    case 'in':
      return has && r.values.includes(v as string);
    case 'notin':
      return !has || !r.values.includes(v as string);
    case 'gt':
      return has && /^-?\d+$/.test(v as string) && Number(v) > Number(r.values[0]);
    case 'lt':
      return has && /^-?\d+$/.test(v as string) && Number(v) < Number(r.values[0]);
  }
}

/** A matchLabels/matchExpressions LabelSelector object (DaemonSet selectors, node selectors). */
export function labelSelectorObjectMatches(sel: Json, labels: Record<string, string> | undefined): boolean {
  if (!sel) return false;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const e of sel.matchExpressions ?? []) {
    const has = Object.hasOwn(l, e.key);
    const vals: string[] = e.values ?? [];
    switch (e.operator) {
      case 'In':
        if (!has || !vals.includes(l[e.key] as string)) return false;
        break;
      case 'NotIn':
        if (has && vals.includes(l[e.key] as string)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/** Field paths each resource accepts in fieldSelector (the conversion funcs of pkg/apis/core/v1 etc.). */
const FIELDS: Record<string, Record<string, (o: Json) => unknown>> = {
  pods: {
    'spec.nodeName': (o) => o.spec?.nodeName ?? '',
    'spec.restartPolicy': (o) => o.spec?.restartPolicy ?? '',
    'spec.schedulerName': (o) => o.spec?.schedulerName ?? '',
    'spec.serviceAccountName': (o) => o.spec?.serviceAccountName ?? '',
    'spec.hostNetwork': (o) => String(o.spec?.hostNetwork ?? false),
    'status.phase': (o) => o.status?.phase ?? '',
    'status.podIP': (o) => o.status?.podIP ?? '',
    'status.nominatedNodeName': (o) => o.status?.nominatedNodeName ?? '',
  },
  nodes: { 'spec.unschedulable': (o) => String(o.spec?.unschedulable ?? false) },
  namespaces: { 'status.phase': (o) => o.status?.phase ?? '' },
  events: {
    'involvedObject.kind': (o) => o.involvedObject?.kind ?? '',
    'involvedObject.name': (o) => o.involvedObject?.name ?? '',
    'involvedObject.namespace': (o) => o.involvedObject?.namespace ?? '',
    'involvedObject.uid': (o) => o.involvedObject?.uid ?? '',
    reason: (o) => o.reason ?? '',
    type: (o) => o.type ?? '',
  },
  secrets: { type: (o) => o.type ?? '' },
};

export type ObjectMatcher = (obj: Json) => boolean;

/**
 * Parses a field selector for one resource. `style` picks the error text: built-in resources use their
 * conversion func's "field label not supported", the others (CRs, metrics) DefaultMetaV1FieldSelectorConversion's.
 */
export function parseFieldSelector(
  s: string | undefined,
  resource: string,
  style: 'builtin' | 'meta' = 'builtin',
  extra: Record<string, string> = {},
): { match: ObjectMatcher; nodeName?: string } {
  if (s === undefined || s.trim() === '') return { match: () => true };
  const terms = s
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  const tests: ObjectMatcher[] = [];
  let nodeName: string | undefined;
  for (const t of terms) {
    const m = /^([^=!]+)(==|=|!=)(.*)$/.exec(t);
    if (!m) throw badRequest(`invalid selector: '${s}'; can't understand '${t}'`);
    const field = (m[1] as string).trim();
    const neg = m[2] === '!=';
    const value = (m[3] as string).trim();
    let get: ((o: Json) => unknown) | undefined;
    if (field === 'metadata.name') get = (o) => o.metadata?.name ?? '';
    else if (field === 'metadata.namespace') get = (o) => o.metadata?.namespace ?? '';
    else if (FIELDS[resource]?.[field] && style === 'builtin') get = FIELDS[resource]?.[field];
    else if (extra[field]) {
      const path = extra[field] as string;
      get = (o) => {
        const v = getPath(o, path);
        return v === undefined || v === null ? '' : String(v);
      };
    }
    if (!get) {
      throw badRequest(
        style === 'builtin'
          ? `field label not supported: ${field}`
          : `"${field}" is not a known field selector: only "metadata.name", "metadata.namespace"`,
      );
    }
    const g = get;
    tests.push(neg ? (o) => g(o) !== value : (o) => g(o) === value);
    if (resource === 'pods' && field === 'spec.nodeName' && !neg) nodeName = value;
  }
  return { match: (o) => tests.every((f) => f(o)), nodeName };
}
