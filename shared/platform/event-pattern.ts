/**
 * EventBridge event-pattern matching, for the local bus. It covers the pattern syntax fleetscope's rules
 * may use: arrays of exact values, `prefix`, `anything-but`, `exists`, and nesting; the same pattern
 * objects are what the CDK stack deploys, so a rule behaves the same on a laptop and in AWS.
 */
export function matches(pattern: Record<string, unknown>, event: Record<string, unknown>): boolean {
  return Object.entries(pattern).every(([key, rule]) => matchField(rule, event[key], key in event));
}

function matchField(rule: unknown, value: unknown, present: boolean): boolean {
  if (Array.isArray(rule)) {
    const values = Array.isArray(value) ? value : [value];
    return rule.some((r) => matchOne(r, values, present));
  }
  if (rule && typeof rule === 'object') {
    if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
    return matches(rule as Record<string, unknown>, value as Record<string, unknown>);
  }
  throw new Error(`invalid event pattern: a leaf must be an array, got ${JSON.stringify(rule)}`);
}

function matchOne(rule: unknown, values: unknown[], present: boolean): boolean {
  if (rule === null || typeof rule !== 'object') return present && values.some((v) => v === rule);
  const r = rule as Record<string, unknown>;
  if ('exists' in r) return r.exists ? present : !present;
  if (!present) return false;
  if ('prefix' in r) return values.some((v) => typeof v === 'string' && v.startsWith(String(r.prefix)));
  if ('anything-but' in r) {
    const but = r['anything-but'];
    const excluded = Array.isArray(but) ? but : [but];
    return values.every((v) => !excluded.includes(v));
  }
  throw new Error(`unsupported event pattern operator ${JSON.stringify(rule)}`);
}
