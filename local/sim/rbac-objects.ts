/**
 * rbac.authorization.k8s.io objects: their defaulting, validation and field order (kubernetes
 * pkg/apis/rbac/validation and v1 defaults), and the bootstrap policy every real cluster starts with
 * (plugin/pkg/auth/authorizer/rbac/bootstrappolicy): cluster-admin for system:masters, discovery,
 * public info and self reviews for every authenticated user.
 */
import { RBAC_GROUP } from './authz.js';
import { rfc3339 } from './clock.js';
import {
  type FieldError,
  fieldInvalid,
  fieldNotSupported,
  fieldRequired,
  GoLiteral,
  goValue,
} from './errors.js';
import { isObject, type Json, type JsonObject, orderKeys } from './json.js';
import { orderTop } from './objects.js';
import { checkBindingWrite, checkRoleWrite, type RbacWrite } from './rbac-escalation.js';
import type { Scope, SimState, Strategy } from './state.js';

const RULE_ORDER = ['verbs', 'apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'];

/** ValidateRBACName is path.IsValidPathSegmentName: any name but "." and "..", without "/" or "%". */
function validateRbacName(name: unknown): FieldError[] {
  if (typeof name !== 'string' || name === '')
    return [fieldRequired('metadata.name', 'name or generateName is required')];
  if (name === '.' || name === '..') return [fieldInvalid('metadata.name', name, `may not be '${name}'`)];
  for (const c of ['/', '%'])
    if (name.includes(c)) return [fieldInvalid('metadata.name', name, `may not contain '${c}'`)];
  return [];
}

function validateRules(rules: Json, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  (Array.isArray(rules) ? rules : []).forEach((r: Json, i: number) => {
    const at = `rules[${i}]`;
    if (!r?.verbs?.length) errs.push(fieldRequired(`${at}.verbs`, 'verbs must contain at least one value'));
    const urls: string[] = r?.nonResourceURLs ?? [];
    if (urls.length && namespaced)
      errs.push(
        fieldInvalid(
          `${at}.nonResourceURLs`,
          new GoLiteral(`[]string{${urls.map((u) => goValue(u)).join(', ')}}`),
          'namespaced rules cannot apply to non-resource URLs',
        ),
      );
    if (urls.length && (r?.apiGroups?.length || r?.resources?.length || r?.resourceNames?.length))
      errs.push(
        fieldInvalid(
          `${at}.nonResourceURLs`,
          new GoLiteral(`[]string{${urls.map((u) => goValue(u)).join(', ')}}`),
          'rules cannot apply to both regular resources and non-resource URLs',
        ),
      );
    if (urls.length) return;
    if (!r?.apiGroups?.length)
      errs.push(fieldRequired(`${at}.apiGroups`, 'resource rules must supply at least one api group'));
    if (!r?.resources?.length)
      errs.push(fieldRequired(`${at}.resources`, 'resource rules must supply at least one resource'));
  });
  return errs;
}

function validateBinding(b: Json, cluster: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const ref = b.roleRef ?? {};
  if (ref.apiGroup !== RBAC_GROUP)
    errs.push(fieldNotSupported('roleRef.apiGroup', ref.apiGroup ?? '', [RBAC_GROUP]));
  const kinds = cluster ? ['ClusterRole'] : ['Role', 'ClusterRole'];
  if (!kinds.includes(ref.kind)) errs.push(fieldNotSupported('roleRef.kind', ref.kind ?? '', kinds));
  if (!ref.name) errs.push(fieldRequired('roleRef.name'));
  (Array.isArray(b.subjects) ? b.subjects : []).forEach((s: Json, i: number) => {
    const at = `subjects[${i}]`;
    if (!s?.name) errs.push(fieldRequired(`${at}.name`));
    if (s?.kind === 'ServiceAccount') {
      if (s.apiGroup) errs.push(fieldNotSupported(`${at}.apiGroup`, s.apiGroup, ['']));
      if (cluster && !s.namespace) errs.push(fieldRequired(`${at}.namespace`));
    } else if (s?.kind === 'User' || s?.kind === 'Group') {
      if (s.apiGroup !== RBAC_GROUP) errs.push(fieldNotSupported(`${at}.apiGroup`, s.apiGroup, [RBAC_GROUP]));
    } else {
      errs.push(fieldNotSupported(`${at}.kind`, s?.kind ?? '', ['ServiceAccount', 'User', 'Group']));
    }
  });
  return errs;
}

function normalizeRole(o: JsonObject): JsonObject {
  const out = orderTop(o, ['rules', 'aggregationRule']);
  if (Array.isArray(out.rules))
    out.rules = out.rules.map((r: Json) => (isObject(r) ? orderKeys(r, RULE_ORDER) : r));
  return out;
}

function normalizeBinding(o: JsonObject): JsonObject {
  const out = orderTop(o, ['subjects', 'roleRef']);
  if (Array.isArray(out.subjects))
    out.subjects = out.subjects.map((s: Json) => {
      if (!isObject(s)) return s;
      // SetDefaults_Subject: users and groups are in the RBAC group, ServiceAccounts in the core group.
      const withGroup = { ...s, apiGroup: s.apiGroup ?? (s.kind === 'ServiceAccount' ? '' : RBAC_GROUP) };
      if (withGroup.apiGroup === '' && s.kind === 'ServiceAccount') delete withGroup.apiGroup;
      return orderKeys(withGroup, ['kind', 'apiGroup', 'name', 'namespace']);
    });
  if (isObject(out.roleRef)) out.roleRef = orderKeys(out.roleRef, ['apiGroup', 'kind', 'name']);
  return out;
}

const roleRefLiteral = (r: Json) =>
  new GoLiteral(
    `rbac.RoleRef{APIGroup:${goValue(r?.apiGroup ?? '')}, Kind:${goValue(r?.kind ?? '')}, Name:${goValue(r?.name ?? '')}}`,
  );

/** Who is writing, when RBAC's escalation checks apply (RBAC on, a user's request). */
function writer(scope: Scope): RbacWrite | undefined {
  if (!scope.cluster.spec.rbac || !scope.user || scope.internal) return undefined;
  return { cluster: scope.cluster, user: scope.user, namespace: scope.namespace ?? '' };
}

export function roleStrategy(namespaced: boolean): Strategy {
  return {
    nameRule: 'none',
    prepareCreate(o, scope) {
      const w = writer(scope);
      if (w) checkRoleWrite(w, o);
    },
    prepareUpdate(o, old, scope) {
      const w = writer(scope);
      if (w) checkRoleWrite(w, o, old);
    },
    validateCreate: (o) => [...validateRbacName(o.metadata.name), ...validateRules(o.rules, namespaced)],
    validateUpdate: (o) => validateRules(o.rules, namespaced),
    normalize: normalizeRole,
  };
}

export function bindingStrategy(cluster: boolean): Strategy {
  return {
    nameRule: 'none',
    prepareCreate(o, scope) {
      const w = writer(scope);
      if (w) checkBindingWrite(w, o, false);
      Object.assign(o, normalizeBinding(o));
    },
    validateCreate: (o) => [...validateRbacName(o.metadata.name), ...validateBinding(o, cluster)],
    prepareUpdate(o, _old, scope) {
      const w = writer(scope);
      if (w) checkBindingWrite(w, o, true);
      Object.assign(o, normalizeBinding(o));
    },
    validateUpdate(o, old) {
      const errs = validateBinding(o, cluster);
      if (JSON.stringify(o.roleRef) !== JSON.stringify(old.roleRef))
        errs.push(fieldInvalid('roleRef', roleRefLiteral(o.roleRef), 'cannot change roleRef'));
      return errs;
    },
    normalize: normalizeBinding,
  };
}

/** Registers the four strategies on a cluster. */
export function installRbacStrategies(set: (collection: string, s: Strategy) => void): void {
  set(`clusterroles.${RBAC_GROUP}`, roleStrategy(false));
  set(`roles.${RBAC_GROUP}`, roleStrategy(true));
  set(`clusterrolebindings.${RBAC_GROUP}`, bindingStrategy(true));
  set(`rolebindings.${RBAC_GROUP}`, bindingStrategy(false));
}

const DISCOVERY_URLS = [
  '/api',
  '/api/*',
  '/apis',
  '/apis/*',
  '/healthz',
  '/livez',
  '/openapi',
  '/openapi/*',
  '/readyz',
  '/version',
  '/version/',
];
const PUBLIC_URLS = ['/healthz', '/livez', '/readyz', '/version', '/version/'];

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];
const AGGREGATE = 'rbac.authorization.k8s.io/aggregate-to-';

interface BootstrapRole {
  name: string;
  rules: JsonObject[];
  labels?: Record<string, string>;
  aggregationRule?: JsonObject;
}

/** The user-facing roles (admin, edit, view), aggregated from the aggregate-to-* roles as upstream does. */
function userFacingRoles(): BootstrapRole[] {
  const aggregated = (name: string, labels: Record<string, string> = {}): BootstrapRole => ({
    name,
    rules: [],
    labels,
    aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [`${AGGREGATE}${name}`]: 'true' } }] },
  });
  const to = (what: string) => ({ [`${AGGREGATE}${what}`]: 'true' });
  return [
    aggregated('admin'),
    aggregated('edit', to('admin')),
    aggregated('view', to('edit')),
    {
      name: 'system:aggregate-to-admin',
      labels: to('admin'),
      rules: [
        { verbs: [...READ, ...WRITE], apiGroups: [RBAC_GROUP], resources: ['rolebindings', 'roles'] },
        { verbs: ['create'], apiGroups: ['authorization.k8s.io'], resources: ['localsubjectaccessreviews'] },
      ],
    },
    {
      name: 'system:aggregate-to-edit',
      labels: to('edit'),
      rules: [
        {
          verbs: ['create', 'delete', 'deletecollection', 'patch', 'update'],
          apiGroups: [''],
          resources: ['pods', 'pods/attach', 'pods/exec', 'pods/portforward', 'pods/proxy'],
        },
        {
          verbs: [...WRITE],
          apiGroups: [''],
          resources: [
            'configmaps',
            'events',
            'persistentvolumeclaims',
            'replicationcontrollers',
            'replicationcontrollers/scale',
            'secrets',
            'serviceaccounts',
            'services',
            'services/proxy',
          ],
        },
        {
          verbs: [...WRITE],
          apiGroups: ['apps'],
          resources: [
            'daemonsets',
            'deployments',
            'deployments/rollback',
            'deployments/scale',
            'replicasets',
            'replicasets/scale',
            'statefulsets',
            'statefulsets/scale',
          ],
        },
        { verbs: [...WRITE], apiGroups: ['autoscaling'], resources: ['horizontalpodautoscalers'] },
        { verbs: [...WRITE], apiGroups: ['batch'], resources: ['cronjobs', 'jobs'] },
        { verbs: [...WRITE], apiGroups: ['policy'], resources: ['poddisruptionbudgets'] },
      ],
    },
    {
      name: 'system:aggregate-to-view',
      labels: to('view'),
      rules: [
        {
          verbs: READ,
          apiGroups: [''],
          resources: [
            'configmaps',
            'endpoints',
            'persistentvolumeclaims',
            'persistentvolumeclaims/status',
            'pods',
            'replicationcontrollers',
            'replicationcontrollers/scale',
            'serviceaccounts',
            'services',
            'services/status',
          ],
        },
        {
          verbs: READ,
          apiGroups: [''],
          resources: [
            'bindings',
            'events',
            'limitranges',
            'namespaces/status',
            'pods/log',
            'pods/status',
            'replicationcontrollers/status',
            'resourcequotas',
            'resourcequotas/status',
          ],
        },
        { verbs: READ, apiGroups: [''], resources: ['namespaces'] },
        { verbs: READ, apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'] },
        {
          verbs: READ,
          apiGroups: ['apps'],
          resources: [
            'controllerrevisions',
            'daemonsets',
            'daemonsets/status',
            'deployments',
            'deployments/scale',
            'deployments/status',
            'replicasets',
            'replicasets/scale',
            'replicasets/status',
            'statefulsets',
            'statefulsets/scale',
            'statefulsets/status',
          ],
        },
        {
          verbs: READ,
          apiGroups: ['autoscaling'],
          resources: ['horizontalpodautoscalers', 'horizontalpodautoscalers/status'],
        },
        {
          verbs: READ,
          apiGroups: ['batch'],
          resources: ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status'],
        },
        {
          verbs: READ,
          apiGroups: ['policy'],
          resources: ['poddisruptionbudgets', 'poddisruptionbudgets/status'],
        },
        {
          verbs: READ,
          apiGroups: ['networking.k8s.io'],
          resources: ['ingresses', 'ingresses/status', 'networkpolicies'],
        },
      ],
    },
  ];
}

/**
 * The bootstrap ClusterRoles and their bindings: a subset of the real server's (the aggregate-to-*
 * roles carry the core of upstream's rules, not every group), enough for fleetscope and for binding
 * admin, edit or view.
 */
function bootstrapPolicy(): { roles: BootstrapRole[]; bindings: JsonObject[] } {
  const role = (name: string, rules: JsonObject[]): BootstrapRole => ({ name, rules });
  const roles = [
    role('cluster-admin', [
      { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
      { verbs: ['*'], nonResourceURLs: ['*'] },
    ]),
    role('system:basic-user', [
      {
        verbs: ['create'],
        apiGroups: ['authorization.k8s.io'],
        resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'],
      },
      { verbs: ['create'], apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'] },
    ]),
    role('system:discovery', [{ verbs: ['get'], nonResourceURLs: DISCOVERY_URLS }]),
    role('system:public-info-viewer', [{ verbs: ['get'], nonResourceURLs: PUBLIC_URLS }]),
    ...userFacingRoles(),
  ];
  const group = (name: string) => ({ kind: 'Group', apiGroup: RBAC_GROUP, name });
  const bindings = [
    { name: 'cluster-admin', subjects: [group('system:masters')] },
    { name: 'system:basic-user', subjects: [group('system:authenticated')] },
    { name: 'system:discovery', subjects: [group('system:authenticated')] },
    {
      name: 'system:public-info-viewer',
      subjects: [group('system:authenticated'), group('system:unauthenticated')],
    },
  ];
  return {
    roles,
    bindings: bindings.map((b) => ({
      ...b,
      roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: b.name },
    })),
  };
}

/** The bootstrap objects as store entries for start-up. */
export function bootstrapRbac(
  cluster: SimState,
  born: number,
): { roles: [string, Json][]; bindings: [string, Json][] } {
  const t = rfc3339(born);
  const meta = (kind: string, name: string, labels: Record<string, string> = {}) => ({
    name,
    uid: cluster.uid(kind, name),
    creationTimestamp: t,
    labels: { ...labels, 'kubernetes.io/bootstrapping': 'rbac-defaults' },
    annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' },
  });
  const p = bootstrapPolicy();
  return {
    roles: p.roles.map((r) => [
      r.name,
      normalizeRole({
        kind: 'ClusterRole',
        apiVersion: `${RBAC_GROUP}/v1`,
        metadata: meta('clusterroles', r.name, r.labels),
        rules: r.rules,
        ...(r.aggregationRule ? { aggregationRule: r.aggregationRule } : {}),
      }),
    ]),
    bindings: p.bindings.map((b) => [
      b.name,
      normalizeBinding({
        kind: 'ClusterRoleBinding',
        apiVersion: `${RBAC_GROUP}/v1`,
        metadata: meta('clusterrolebindings', b.name),
        subjects: b.subjects,
        roleRef: b.roleRef,
      }),
    ]),
  };
}
