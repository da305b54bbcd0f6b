/**
 * RBAC beyond rule matching, as kube-apiserver does it: escalation prevention on role writes, the bind
 * check on binding writes, ClusterRole aggregation (admin, edit and view are built from the
 * aggregate-to-* roles, and a labelled role joins them), and impersonation. Messages are upstream's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SimCluster, type Simulator, startSimulator } from '../../local/sim/index.js';
import { raw } from './helpers.js';

const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const ALICE = 'alice-token-0123456789';
const CAROL = 'carol-token-0123456789';
let sim: Simulator;
let c: SimCluster;

const asAdmin = (method: string, path: string, body?: unknown) => raw(c, method, path, { body });
const asAlice = (method: string, path: string, body?: unknown, headers?: Record<string, string | string[]>) =>
  raw(c, method, path, { body, token: ALICE, headers });

const clusterRole = (name: string, rules: unknown[], labels?: Record<string, string>) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRole',
  metadata: { name, ...(labels ? { labels } : {}) },
  rules,
});
const bindAlice = (name: string, role: string) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRoleBinding',
  metadata: { name },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
  subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' }],
});
const PODS_READ = { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] };

beforeAll(async () => {
  sim = await startSimulator({
    clusters: [
      {
        name: 'rbac',
        nodes: 1,
        seed: 3,
        rbac: true,
        users: [
          { name: 'alice', token: ALICE, groups: ['devs'] },
          { name: 'carol', token: CAROL },
        ],
      },
    ],
  });
  c = sim.cluster('rbac');
  // alice may write roles and bindings, nothing else.
  await asAdmin(
    'POST',
    `${RBAC}/clusterroles`,
    clusterRole('rbac-writer', [
      {
        apiGroups: ['rbac.authorization.k8s.io'],
        resources: ['clusterroles', 'clusterrolebindings'],
        verbs: ['create', 'update', 'get'],
      },
    ]),
  );
  await asAdmin('POST', `${RBAC}/clusterrolebindings`, bindAlice('alice-rbac-writer', 'rbac-writer'));
  // carol too, and she never gets escalate (which lifts every check).
  const carol = bindAlice('carol-rbac-writer', 'rbac-writer');
  carol.subjects = [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'carol' }];
  await asAdmin('POST', `${RBAC}/clusterrolebindings`, carol);
});
afterAll(() => sim?.stop());

describe('escalation prevention', () => {
  it('refuses a role with permissions the writer does not hold, naming them as upstream does', async () => {
    const r = await asAlice('POST', `${RBAC}/clusterroles`, clusterRole('pod-reader', [PODS_READ]));
    expect(r.status).toBe(403);
    expect(r.json).toMatchObject({
      reason: 'Forbidden',
      details: { name: 'pod-reader', kind: 'clusterroles' },
    });
    expect(r.json.message).toBe(
      'clusterroles.rbac.authorization.k8s.io "pod-reader" is forbidden: user "alice" (groups=["devs" "system:authenticated"]) ' +
        'is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}',
    );
    expect((await asAdmin('GET', `${RBAC}/clusterroles/pod-reader`)).status).toBe(404);
  });

  it('accepts it once the writer holds the permissions, or holds escalate', async () => {
    await asAdmin('POST', `${RBAC}/clusterroles`, clusterRole('alice-pods', [PODS_READ]));
    await asAdmin('POST', `${RBAC}/clusterrolebindings`, bindAlice('alice-pods', 'alice-pods'));
    expect(
      (await asAlice('POST', `${RBAC}/clusterroles`, clusterRole('pod-reader', [PODS_READ]))).status,
    ).toBe(201);
    const secrets = clusterRole('secret-reader', [
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
    ]);
    expect((await asAlice('POST', `${RBAC}/clusterroles`, secrets)).status).toBe(403);
    await asAdmin(
      'POST',
      `${RBAC}/clusterroles`,
      clusterRole('escalator', [
        { apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['escalate'] },
      ]),
    );
    await asAdmin('POST', `${RBAC}/clusterrolebindings`, bindAlice('alice-escalator', 'escalator'));
    expect((await asAlice('POST', `${RBAC}/clusterroles`, secrets)).status).toBe(201);
  });

  it('refuses a binding to a role the writer does not hold, unless it may bind that role', async () => {
    const grab = bindAlice('alice-is-admin', 'cluster-admin');
    const r = await asAlice('POST', `${RBAC}/clusterrolebindings`, grab);
    expect(r.status).toBe(403);
    expect(r.json.message).toMatch(
      /^clusterrolebindings\.rbac\.authorization\.k8s\.io "alice-is-admin" is forbidden: user "alice" \(groups=\["devs" "system:authenticated"\]\) is attempting to grant RBAC permissions not currently held:\n/,
    );
    expect(r.json.message).toContain('{NonResourceURLs:["*"], Verbs:["*"]}');
    const missing = await asAlice(
      'POST',
      `${RBAC}/clusterrolebindings`,
      bindAlice('to-nothing', 'no-such-role'),
    );
    expect(missing.status).toBe(404);
    expect(missing.json.message).toBe('clusterrole.rbac.authorization.k8s.io "no-such-role" not found');
    // bind on one role by name lets alice hand out exactly that role.
    await asAdmin(
      'POST',
      `${RBAC}/clusterroles`,
      clusterRole('binder', [
        {
          apiGroups: ['rbac.authorization.k8s.io'],
          resources: ['clusterroles'],
          verbs: ['bind'],
          resourceNames: ['view'],
        },
      ]),
    );
    await asAdmin('POST', `${RBAC}/clusterrolebindings`, bindAlice('alice-binder', 'binder'));
    expect(
      (await asAlice('POST', `${RBAC}/clusterrolebindings`, bindAlice('alice-view', 'view'))).status,
    ).toBe(201);
    expect((await asAlice('POST', `${RBAC}/clusterrolebindings`, grab)).status).toBe(403);
  });

  it('lets system:masters write anything', async () => {
    const all = clusterRole('everything', [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }]);
    expect((await asAdmin('POST', `${RBAC}/clusterroles`, all)).status).toBe(201);
  });
});

describe('aggregation', () => {
  const rulesOf = async (name: string) => (await asAdmin('GET', `${RBAC}/clusterroles/${name}`)).json.rules;

  it('builds view, edit and admin from the aggregate-to roles, view into edit into admin', async () => {
    const view = await rulesOf('view');
    expect(view).toContainEqual(
      expect.objectContaining({ apiGroups: [''], resources: expect.arrayContaining(['pods']) }),
    );
    const edit = await rulesOf('edit');
    for (const rule of view) expect(edit).toContainEqual(rule);
    const admin = await rulesOf('admin');
    for (const rule of edit) expect(admin).toContainEqual(rule);
    expect(admin).toContainEqual(expect.objectContaining({ resources: ['rolebindings', 'roles'] }));
  });

  it('adds a labelled role to every role that aggregates it, and takes it away when it goes', async () => {
    const widgets = { apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get', 'list', 'watch'] };
    const label = { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' };
    expect(
      (await asAdmin('POST', `${RBAC}/clusterroles`, clusterRole('widget-viewer', [widgets], label))).status,
    ).toBe(201);
    for (const role of ['view', 'edit', 'admin']) expect(await rulesOf(role)).toContainEqual(widgets);
    await asAdmin('DELETE', `${RBAC}/clusterroles/widget-viewer`);
    for (const role of ['view', 'edit', 'admin']) expect(await rulesOf(role)).not.toContainEqual(widgets);
  });

  it('refuses an aggregationRule to a writer without every permission', async () => {
    const agg = {
      ...clusterRole('my-aggregate', []),
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { team: 'a' } }] },
    };
    const r = await raw(c, 'POST', `${RBAC}/clusterroles`, { body: agg, token: CAROL });
    expect(r.status).toBe(403);
    expect(r.json.message).toBe(
      'clusterroles.rbac.authorization.k8s.io "my-aggregate" is forbidden: must have cluster-admin privileges to use the aggregationRule',
    );
  });
});

describe('impersonation', () => {
  const whoami = (token: string | undefined, headers: Record<string, string | string[]>) =>
    raw(c, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
      token,
      headers,
    });

  it('refuses a user who may not impersonate, with the real message', async () => {
    const r = await whoami(ALICE, { 'Impersonate-User': 'bob' });
    expect(r.status).toBe(403);
    expect(r.json.message).toBe(
      'users "bob" is forbidden: User "alice" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
  });

  it('runs the request as the impersonated user and groups', async () => {
    const r = await whoami(undefined, { 'Impersonate-User': 'bob', 'Impersonate-Group': ['qa', 'ops'] });
    expect(r.status).toBe(201);
    expect(r.json.status.userInfo).toMatchObject({
      username: 'bob',
      groups: ['qa', 'ops', 'system:authenticated'],
    });
    const sa = await whoami(undefined, { 'Impersonate-User': 'system:serviceaccount:kube-system:default' });
    expect(sa.json.status.userInfo.groups).toEqual([
      'system:serviceaccounts',
      'system:serviceaccounts:kube-system',
      'system:authenticated',
    ]);
    // bob holds nothing: his request is judged as his.
    const pods = await raw(c, 'GET', '/api/v1/pods', { headers: { 'Impersonate-User': 'bob' } });
    expect(pods.status).toBe(403);
    expect(pods.json.message).toContain('User "bob" cannot list resource "pods"');
  });

  it('answers groups without a user with the filter error', async () => {
    const r = await whoami(undefined, { 'Impersonate-Group': 'system:masters' });
    expect(r.status).toBe(500);
    expect(r.json.message).toBe(
      'Internal error occurred: requested [{Group  system:masters    }] without impersonating a user',
    );
  });
});
