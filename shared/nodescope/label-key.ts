/**
 * Label keys, as Kubernetes validates them (apimachinery validation.IsQualifiedName): an optional DNS
 * subdomain prefix (at most 253 characters) and `/`, then a name of at most 63 characters, alphanumeric
 * at both ends, with `-`, `_` and `.` inside. spec.scope (AEP-10031) is one.
 */

const NAME = '[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?';
const DNS_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
/** The OpenAPI pattern of the CRD (the prefix's length is checked by labelKeyProblem, not the pattern). */
export const LABEL_KEY_PATTERN = `^(${DNS_LABEL}(\\.${DNS_LABEL})*/)?${NAME}$`;
export const LABEL_KEY_MAX_LENGTH = 253 + 1 + 63;
const PATTERN = new RegExp(LABEL_KEY_PATTERN);

/** Why `key` is not a valid label key, or undefined when it is. */
export function labelKeyProblem(key: string): string | undefined {
  const slash = key.indexOf('/');
  const prefix = slash < 0 ? '' : key.slice(0, slash);
  const name = slash < 0 ? key : key.slice(slash + 1);
  if (name.length === 0) return 'the name part is empty';
  if (name.length > 63) return `the name part "${name}" is longer than 63 characters`;
  if (prefix.length > 253) return 'the prefix is longer than 253 characters';
  if (slash >= 0 && prefix.length === 0) return 'the prefix before "/" is empty';
  if (!PATTERN.test(key))
    return 'a label key is an optional DNS subdomain prefix and "/", then a name of alphanumerics, "-", "_" and "." that starts and ends alphanumeric';
  return undefined;
}
