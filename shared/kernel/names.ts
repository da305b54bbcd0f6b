/**
 * Kubernetes name rules (apimachinery validation), used wherever a name enters fleetscope.
 * Each validator returns null when the name is valid, else a message that names the rule broken.
 */
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function rfc1123LabelProblem(value: string, what = 'name'): string | null {
  if (value.length === 0) return `${what} must not be empty`;
  if (value.length > 63)
    return `${what} "${value.slice(0, 70)}" is ${value.length} characters; an RFC 1123 label has at most 63`;
  if (!DNS1123_LABEL.test(value))
    return `${what} "${value}" is not an RFC 1123 label: lower-case alphanumerics and '-' only, starting and ending with an alphanumeric`;
  return null;
}

export function rfc1123SubdomainProblem(value: string, what = 'name'): string | null {
  if (value.length === 0) return `${what} must not be empty`;
  if (value.length > 253)
    return `${what} is ${value.length} characters; an RFC 1123 subdomain has at most 253`;
  if (!DNS1123_SUBDOMAIN.test(value))
    return `${what} "${value}" is not an RFC 1123 subdomain: lower-case alphanumerics, '-' and '.', each part starting and ending with an alphanumeric`;
  return null;
}
