/**
 * What a third party's declared tasks may not do, whatever their author meant (issue 16, finding 7):
 * a file runs with fleetscope's permissions in every cluster of the fleet, so each task is held to the
 * feature's own corner of it. Pure: every problem named by its field, nothing read or written.
 *
 *   deletions and field clears are scoped: the feature's own namespace, a name, or a selector
 *   nothing written in a kube-* namespace (kube-system, kube-public, kube-node-lease)
 *   no Namespace or CRD deleted (everything in them would go with them)
 *   no binding to a cluster-wide admin role, and no role that grants everything or escalation verbs
 *   stored state cleared only under the feature's own prefix "<namespace>/<name>#"
 *   no admission webhook or policy, RBAC object or cluster-scoped kind unless the operator allowed that
 *     kind at registration (`features register --allow-kind K`)
 *
 * Whatever a file says, its writes touch only objects the feature created (./owned.ts): each carries the
 * feature's ownership label, an existing object without it is never adopted, and deletes and clears
 * select by it. These rules refuse at registration what that would refuse at every pass anyway.
 */
import type { FeatureRef } from './model.js';
import type { TaskOf, TaskProblem, TaskSpec } from './task-kinds.js';

/** Kubernetes reserves kube-* for its own system namespaces. */
export const isSystemNamespace = (ns: string | undefined) => ns !== undefined && /^kube-/.test(ns);

/** Kinds whose deletion takes everything in them along (by resource plural and by kind). */
const UNDELETABLE: Record<string, { kind: string; resource: string }> = {
  v1: { kind: 'Namespace', resource: 'namespaces' },
  'apiextensions.k8s.io/v1': { kind: 'CustomResourceDefinition', resource: 'customresourcedefinitions' },
  'apiextensions.k8s.io/v1beta1': { kind: 'CustomResourceDefinition', resource: 'customresourcedefinitions' },
};

/** The default ClusterRoles that administer a cluster or a namespace (and system:*, Kubernetes' own). */
const ADMIN_ROLES = new Set(['cluster-admin', 'admin', 'edit']);
const ESCALATING_VERBS = ['*', 'escalate', 'bind', 'impersonate'];

/**
 * The label every object a declared feature creates carries: its value names the feature
 * ("<namespace>.<name>": both are RFC 1123 labels, so the dot cannot be part of either).
 */
export const OWNER_LABEL = 'features.fleetscope.io/owner';
export const ownerValue = (f: FeatureRef) => `${f.namespace}.${f.name}`;
/** A label value is at most 63 characters. */
export const OWNER_VALUE_MAX = 63;

/**
 * Kinds a declared feature may write only when the operator allowed them at registration: whoever
 * writes them decides for every request of the cluster (admission), grants permissions (RBAC), or
 * reaches past the feature's namespace (cluster-scoped kinds Kubernetes serves itself; a custom
 * cluster-scoped kind is refused when it is written, by discovery: ./owned.ts).
 */
export const GUARDED_KINDS: Record<string, string> = {
  ...Object.fromEntries(
    [
      'MutatingWebhookConfiguration',
      'ValidatingWebhookConfiguration',
      'MutatingAdmissionPolicy',
      'MutatingAdmissionPolicyBinding',
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding',
    ].map((k) => [k, 'admission: it decides on every request of the cluster']),
  ),
  ...Object.fromEntries(
    ['Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding'].map((k) => [
      k,
      'RBAC: it grants permissions',
    ]),
  ),
  ...Object.fromEntries(
    [
      'Namespace',
      'Node',
      'PersistentVolume',
      'StorageClass',
      'PriorityClass',
      'RuntimeClass',
      'IngressClass',
      'CSIDriver',
      'CSINode',
      'VolumeAttachment',
      'APIService',
      'CustomResourceDefinition',
      'CertificateSigningRequest',
      'FlowSchema',
      'PriorityLevelConfiguration',
      'DeviceClass',
    ].map((k) => [k, 'cluster-scoped: it reaches past the feature namespace']),
  ),
};

/** Why `kind` needs the operator's allowance, or undefined when it needs none (or was allowed). */
export function guardOf(
  kind: string | undefined,
  allowed: readonly string[] | undefined,
): string | undefined {
  if (!kind || allowed?.includes(kind)) return undefined;
  return GUARDED_KINDS[kind];
}

const notAllowed = (kind: string, why: string) =>
  `a declared feature writes no ${kind} (${why}) unless the operator allows it at registration: features register --allow-kind ${kind}`;

/** The state prefix a feature owns: a clear-state may name it or anything under it. */
export const ownStatePrefix = (f: FeatureRef) => `${f.namespace}/${f.name}#`;

export function harmOf(
  feature: FeatureRef,
  task: TaskSpec,
  at: string,
  allowed: readonly string[] = [],
): TaskProblem[] {
  switch (task.task) {
    case 'delete-objects': {
      const never = undeletable(task, at);
      return [
        ...never,
        ...outOfBounds(feature, task, at, 'deletes'),
        ...(never.length ? [] : guarded(task.kind, allowed, `${at}.kind`)),
      ];
    }
    case 'clear-field':
      return [
        ...outOfBounds(feature, task, at, 'clears a field of'),
        ...guarded(task.kind, allowed, `${at}.kind`),
      ];
    case 'apply-manifests':
      return task.manifests.flatMap((m, k) => [
        ...manifestHarm(m as Manifest, `${at}.manifests[${k}]`),
        ...guarded(m.kind, allowed, `${at}.manifests[${k}].kind`),
      ]);
    case 'clear-state':
      return task.prefixes.flatMap((p, k) =>
        p.startsWith(ownStatePrefix(feature))
          ? []
          : [
              {
                path: `${at}.prefixes[${k}]`,
                message: `"${p}" is not this feature's state: a declared feature clears only under "${ownStatePrefix(feature)}"`,
              },
            ],
      );
    default:
      return [];
  }
}

function guarded(kind: string | undefined, allowed: readonly string[], path: string): TaskProblem[] {
  const why = guardOf(kind, allowed);
  return why ? [{ path, message: notAllowed(kind!, why) }] : [];
}

/** The message a write of a guarded or cluster-scoped kind is refused with, at a pass (./owned.ts). */
export const refusedKindMessage = notAllowed;

function systemNamespace(ns: string | undefined, path: string): TaskProblem[] {
  return isSystemNamespace(ns)
    ? [{ path, message: `${ns} is the cluster's own: a declared feature writes nothing there` }]
    : [];
}

function undeletable(t: TaskOf<'delete-objects'>, at: string): TaskProblem[] {
  const no = UNDELETABLE[t.apiVersion];
  if (!no) return [];
  const field = t.kind === no.kind ? 'kind' : t.resource === no.resource ? 'resource' : undefined;
  if (!field) return [];
  return [
    {
      path: `${at}.${field}`,
      message: `a declared feature never deletes a ${no.kind}: everything in it would go too`,
    },
  ];
}

/** A write in a system namespace, or to every object of a kind (not the feature's namespace, no name, no selector). */
function outOfBounds(
  feature: FeatureRef,
  t: TaskOf<'delete-objects'> | TaskOf<'clear-field'>,
  at: string,
  verb: string,
): TaskProblem[] {
  const system = systemNamespace(t.namespace, `${at}.namespace`);
  if (system.length) return system;
  if (t.name || t.selector || t.namespace === feature.namespace) return [];
  const what = t.kind ?? t.resource;
  return [
    {
      path: `${at}.namespace`,
      message: `${verb} every ${what} ${t.namespace ? `in ${t.namespace}` : 'in the cluster'}: scope it to ${feature.namespace} (the feature's namespace), a name or a selector`,
    },
  ];
}

interface Manifest {
  kind: string;
  metadata: { name: string; namespace?: string };
  roleRef?: { kind?: string; name?: string };
  rules?: { verbs?: string[]; resources?: string[] }[];
}

function manifestHarm(m: Manifest, at: string): TaskProblem[] {
  const problems = systemNamespace(m.metadata.namespace, `${at}.metadata.namespace`);
  if (m.kind === 'Namespace') problems.push(...systemNamespace(m.metadata.name, `${at}.metadata.name`));
  if (m.kind === 'ClusterRoleBinding' || m.kind === 'RoleBinding') {
    const role = m.roleRef?.name ?? '';
    if (m.roleRef?.kind === 'ClusterRole' && (ADMIN_ROLES.has(role) || role.startsWith('system:')))
      problems.push({
        path: `${at}.roleRef.name`,
        message: `${role} administers the cluster: a declared feature binds only roles of its own`,
      });
  }
  if (m.kind === 'ClusterRole' || m.kind === 'Role')
    (m.rules ?? []).forEach((r, i) => {
      const escalating = (r.verbs ?? []).filter((v) => ESCALATING_VERBS.includes(v));
      if (escalating.length)
        problems.push({
          path: `${at}.rules[${i}]`,
          message: `verbs ${escalating.join(', ')} grant more than the rule names: list the verbs the feature needs`,
        });
    });
  return problems;
}
