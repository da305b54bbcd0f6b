/**
 * Required node affinity as the scheduler's NodeAffinity plugin and the DaemonSet controller read it
 * (component-helpers nodeaffinity): a term matches when every expression (on labels) and every field
 * (only metadata.name exists) matches; an empty term matches nothing; terms are ORed by the caller.
 */
export interface SelectorRequirement {
  key?: string;
  operator?: string;
  values?: readonly string[];
}

export interface SelectorTerm {
  matchExpressions?: readonly SelectorRequirement[];
  matchFields?: readonly SelectorRequirement[];
}

export function requirementMatches(r: SelectorRequirement, value: string | undefined): boolean {
  const values = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return value !== undefined && values.includes(value);
    case 'NotIn':
      return value === undefined || !values.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt': {
      if (value === undefined || values.length !== 1) return false;
      const a = Number.parseInt(value, 10);
      const b = Number.parseInt(values[0] as string, 10);
      if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
      return r.operator === 'Gt' ? a > b : a < b;
    }
    default:
      return false;
  }
}

export function termMatches(
  term: SelectorTerm,
  node: { name: string; labels: Readonly<Record<string, string>> },
): boolean {
  const exprs = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return false;
  for (const r of exprs)
    if (!requirementMatches(r, r.key === undefined ? undefined : node.labels[r.key])) return false;
  for (const r of fields) if (r.key !== 'metadata.name' || !requirementMatches(r, node.name)) return false;
  return true;
}
