/**
 * Kubernetes label selectors in their string form (`tier=web,zone in (a,b),!spot`), parsed into the
 * requirements `labels.Parse` produces, so that a selector given on the command line means here what it
 * means to kubectl, and can be written into a node affinity term for the DaemonSet controller.
 */

export type SelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

export interface Requirement {
  key: string;
  operator: SelectorOperator;
  values: string[];
}

export class SelectorError extends Error {
  override name = 'SelectorError';
}

// Qualified name (optional DNS-subdomain prefix) and label value, as apimachinery's validation defines them.
const NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$/;
const PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function checkKey(key: string, selector: string): string {
  const slash = key.lastIndexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  const ok =
    name.length > 0 &&
    name.length <= 63 &&
    NAME.test(name) &&
    (prefix === undefined || (prefix.length <= 253 && PREFIX.test(prefix)));
  if (!ok) throw new SelectorError(`label selector "${selector}": "${key}" is not a valid label key`);
  return key;
}

function checkValue(value: string, selector: string): string {
  if (value.length > 63 || !VALUE.test(value))
    throw new SelectorError(`label selector "${selector}": "${value}" is not a valid label value`);
  return value;
}

/** Splits at commas outside parentheses. */
function terms(selector: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      out.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  out.push(selector.slice(start));
  return out.map((t) => t.trim());
}

function parseTerm(term: string, selector: string): Requirement {
  const set = /^(\S+)\s+(in|notin)\s*\(([^()]*)\)$/.exec(term);
  if (set) {
    const [, key = '', op, list = ''] = set;
    const values = list
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v !== '');
    if (values.length === 0)
      throw new SelectorError(`label selector "${selector}": "${term}" lists no values`);
    return {
      key: checkKey(key, selector),
      operator: op === 'in' ? 'In' : 'NotIn',
      values: values.map((v) => checkValue(v, selector)),
    };
  }
  const cmp = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(term);
  if (cmp) {
    const [, key = '', op, value = ''] = cmp;
    return {
      key: checkKey(key, selector),
      operator: op === '!=' ? 'NotIn' : 'In',
      values: [checkValue(value, selector)],
    };
  }
  if (term.startsWith('!'))
    return { key: checkKey(term.slice(1).trim(), selector), operator: 'DoesNotExist', values: [] };
  if (/^\S+$/.test(term)) return { key: checkKey(term, selector), operator: 'Exists', values: [] };
  throw new SelectorError(`label selector "${selector}": cannot parse "${term}"`);
}

/** Parses a selector; the empty selector selects everything. Throws SelectorError naming the bad part. */
export function parseLabelSelector(selector: string): Requirement[] {
  if (selector.trim() === '') return [];
  return terms(selector).map((t) => {
    if (t === '') throw new SelectorError(`label selector "${selector}": empty requirement`);
    return parseTerm(t, selector);
  });
}

export function matchesLabels(
  reqs: readonly Requirement[],
  labels: Readonly<Record<string, string>>,
): boolean {
  return reqs.every((r) => {
    const v = labels[r.key];
    switch (r.operator) {
      case 'Exists':
        return v !== undefined;
      case 'DoesNotExist':
        return v === undefined;
      case 'In':
        return v !== undefined && r.values.includes(v);
      case 'NotIn':
        return v === undefined || !r.values.includes(v);
      default:
        return false;
    }
  });
}

/** The requirements as one node affinity term's matchExpressions (NodeSelectorRequirement). */
export function toMatchExpressions(reqs: readonly Requirement[]) {
  return reqs.map((r) => ({
    key: r.key,
    operator: r.operator,
    ...(r.values.length ? { values: [...r.values] } : {}),
  }));
}
