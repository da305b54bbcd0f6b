/**
 * Where a registered cluster's kubeconfig lives. fleetscope stores this reference, never the
 * kubeconfig itself: a Secrets Manager secret (in AWS) or a file (local runs and tests). `assumeRole`
 * is the role in the cluster's account whose credentials mint its EKS tokens (set at registration;
 * it overrides the kubeconfig's own `--role-arn`).
 */
import { type AssumeRoleSpec, assumeRoleProblem, describeRole } from './role.js';

export type KubeconfigRef =
  | { kind: 'secret'; secretId: string; context?: string; assumeRole?: AssumeRoleSpec }
  | { kind: 'file'; path: string; context?: string; assumeRole?: AssumeRoleSpec };

const SECRET_NAME = /^[A-Za-z0-9/_+=.@-]{1,512}$/;
const SECRET_ARN = /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:(.+)$/;

/** The secret's name: the id itself, or the name part of an ARN (with its 6-character suffix). */
export function secretNameOf(secretId: string): string {
  const m = SECRET_ARN.exec(secretId);
  return m ? m[1]! : secretId;
}

/**
 * Returns null when the reference is usable, else a message naming what is wrong. A secret must be
 * named under `secretPrefix` (the Lambda's IAM policy allows nothing else, so anything outside it
 * would fail later with an opaque AccessDenied).
 */
export function kubeconfigRefProblem(ref: unknown, secretPrefix: string): string | null {
  if (!ref || typeof ref !== 'object') return 'kubeconfig reference must be an object with a "kind"';
  const r = ref as Record<string, unknown>;
  if (r.context !== undefined) {
    if (typeof r.context !== 'string' || r.context.length === 0 || r.context.length > 253)
      return 'kubeconfig context must be a non-empty string of at most 253 characters';
  }
  if (r.assumeRole !== undefined) {
    const problem = assumeRoleProblem(r.assumeRole);
    if (problem) return problem;
  }
  switch (r.kind) {
    case 'secret': {
      if (typeof r.secretId !== 'string' || r.secretId.length === 0)
        return 'kubeconfig secret reference needs a non-empty "secretId"';
      const name = secretNameOf(r.secretId);
      if (!SECRET_NAME.test(name))
        return `secret id "${r.secretId.slice(0, 80)}" has characters Secrets Manager does not allow`;
      if (!name.startsWith(secretPrefix))
        return `secret "${name}" is not under the configured prefix "${secretPrefix}"; fleetscope may only read kubeconfig secrets named "${secretPrefix}<cluster>"`;
      return null;
    }
    case 'file': {
      if (typeof r.path !== 'string' || r.path.length === 0)
        return 'kubeconfig file reference needs a non-empty "path"';
      if (r.path.includes('\0')) return 'kubeconfig file path contains a NUL character';
      return null;
    }
    default:
      return `kubeconfig reference kind must be "secret" or "file", not ${JSON.stringify(r.kind)?.slice(0, 40)}`;
  }
}

/** Validates and narrows; throws an Error naming the problem. */
export function parseKubeconfigRef(ref: unknown, secretPrefix: string): KubeconfigRef {
  const problem = kubeconfigRefProblem(ref, secretPrefix);
  if (problem) throw new Error(problem);
  const r = ref as KubeconfigRef;
  const extra = {
    ...(r.context ? { context: r.context } : {}),
    ...(r.assumeRole
      ? {
          assumeRole: {
            roleArn: r.assumeRole.roleArn,
            ...(r.assumeRole.externalId ? { externalId: r.assumeRole.externalId } : {}),
          },
        }
      : {}),
  };
  return r.kind === 'secret'
    ? { kind: 'secret', secretId: r.secretId, ...extra }
    : { kind: 'file', path: r.path, ...extra };
}

/** A short, credential-free description for messages and logs. */
export function describeKubeconfigRef(ref: KubeconfigRef): string {
  const ctx = ref.context ? ` (context "${ref.context}")` : '';
  const role = ref.assumeRole ? ` through ${describeRole(ref.assumeRole)}` : '';
  return `${ref.kind === 'secret' ? `secret "${ref.secretId}"` : `file "${ref.path}"`}${ctx}${role}`;
}

/** A stable key for caches (a changed role or external ID is a different client). */
export function kubeconfigRefKey(ref: KubeconfigRef): string {
  const where = ref.kind === 'secret' ? `secret:${ref.secretId}` : `file:${ref.path}`;
  const role = ref.assumeRole ? `#${ref.assumeRole.roleArn}#${ref.assumeRole.externalId ?? ''}` : '';
  return `${where}#${ref.context ?? ''}${role}`;
}
