/**
 * A declared (third-party) feature touches only objects it created (issue 34, defect 1), judged by a
 * real kube-apiserver: the hostile declarations of the adversarial pass, run through the very tasks the
 * reconciler performs. A selector that matches everything deletes nothing of anyone else's; an
 * existing object (cluster-admin, a user's ConfigMap) is never adopted by an apply; cluster-scoped,
 * admission and RBAC kinds are refused unless the operator allowed them at registration; the feature's
 * own objects are created with its ownership label and removed by it.
 */
import { expect, it } from 'vitest';
import { ObjectsApi } from '../../shared/features/objects.js';
import type { FeatureSpec, TaskContext } from '../../shared/features/spec.js';
import type { TaskSpec } from '../../shared/features/task-kinds.js';
import { runTask } from '../../shared/features/tasks.js';
import type { ClusterClient } from '../../shared/k8s/client.js';
import { realBackend } from '../support/backends.js';
import { describeRealApiserver } from '../support/real-apiserver.js';

const OWNER = 'features.fleetscope.io/owner';

/** A declared feature as a file (or an older fleetscope) stored it: no registration check in between. */
const declared = (tasks: TaskSpec[], allowKinds?: string[]): FeatureSpec => ({
  namespace: 'acme',
  name: 'widgets',
  description: '',
  default: 'off',
  enable: [],
  disable: tasks,
  components: [],
  usesWaitSeconds: 0,
  since: '0.1.0',
  origin: { file: 'hostile.yaml' },
  ...(allowKinds ? { allowKinds } : {}),
});

const contextOf = (client: ClusterClient): TaskContext =>
  ({ objects: async () => new ObjectsApi(client) }) as unknown as TaskContext;

/** Runs one task of a declared feature; its error message, or 'done'. */
async function run(client: ClusterClient, task: TaskSpec, allowKinds?: string[]): Promise<string> {
  try {
    const outcome = await runTask(declared([task], allowKinds), task, contextOf(client));
    return outcome.done ? 'done' : 'waiting';
  } catch (err) {
    return (err as Error).message;
  }
}

describeRealApiserver('a declared feature touches only what it created', (server) => {
  const b = () => realBackend(server);
  const ok = async (method: string, path: string, body?: unknown) => {
    const r = await b().raw(method, path, body ? { body } : {});
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
    return r.json;
  };
  const exists = async (path: string) => (await b().raw('GET', path)).status === 200;

  it('a selector that matches everything deletes only the objects the feature created', async () => {
    const backend = b();
    const client = await backend.client();
    for (const ns of ['acme', 'payments']) await ok('POST', '/api/v1/namespaces', { metadata: { name: ns } });
    const cm = (ns: string, name: string, labels?: Record<string, string>) =>
      ok('POST', `/api/v1/namespaces/${ns}/configmaps`, {
        metadata: { name, ...(labels ? { labels } : {}) },
      });
    await cm('payments', 'users-config');
    await cm('kube-system', 'cluster-config');
    await cm('acme', 'acme-by-hand');
    await cm('acme', 'widgets-own', { [OWNER]: 'acme.widgets' });
    await cm('acme', 'other-feature', { [OWNER]: 'acme.gadgets' });

    for (const selector of [' ', '!nonexistent.example.com/x'])
      expect(
        await run(client, { task: 'delete-objects', apiVersion: 'v1', kind: 'ConfigMap', selector }),
      ).toBe('done');
    expect(await exists('/api/v1/namespaces/payments/configmaps/users-config')).toBe(true);
    expect(await exists('/api/v1/namespaces/kube-system/configmaps/cluster-config')).toBe(true);
    expect(await exists('/api/v1/namespaces/acme/configmaps/acme-by-hand')).toBe(true);
    expect(await exists('/api/v1/namespaces/acme/configmaps/other-feature')).toBe(true);
    expect(await exists('/api/v1/namespaces/acme/configmaps/widgets-own')).toBe(false);

    // By name too: a user's object of that name is not the feature's.
    expect(
      await run(client, {
        task: 'delete-objects',
        apiVersion: 'v1',
        kind: 'ConfigMap',
        namespace: 'payments',
        name: 'users-config',
      }),
    ).toBe('done');
    expect(await exists('/api/v1/namespaces/payments/configmaps/users-config')).toBe(true);
    // A clear of a field: only on the feature's own objects.
    await ok('PUT', '/api/v1/namespaces/payments/configmaps/users-config', {
      metadata: { name: 'users-config', namespace: 'payments' },
      data: { keep: 'this' },
    });
    const clear = {
      task: 'clear-field',
      apiVersion: 'v1',
      kind: 'ConfigMap',
      selector: ' ',
      field: ['data'],
    };
    expect(await run(client, clear as TaskSpec)).toBe('done');
    expect((await ok('GET', '/api/v1/namespaces/payments/configmaps/users-config')).data).toEqual({
      keep: 'this',
    });
    await client.close();
    await backend.stop();
  });

  it('an apply never takes over an existing object: cluster-admin keeps its rules, a user keeps a ConfigMap', async () => {
    const backend = b();
    const client = await backend.client();
    const before = await ok('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/cluster-admin');
    const emptied = {
      task: 'apply-manifests',
      manifests: [
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'ClusterRole',
          metadata: { name: 'cluster-admin' },
          rules: [],
        },
      ],
    } as TaskSpec;
    // Even with ClusterRole allowed at registration, the existing one is not the feature's.
    expect(await run(client, emptied, ['ClusterRole'])).toMatch(
      /ClusterRole cluster-admin exists and was not created by feature acme\/widgets/,
    );
    const after = await ok('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/cluster-admin');
    expect(after.rules).toEqual(before.rules);
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);

    await ok('POST', '/api/v1/namespaces/acme/configmaps', {
      metadata: { name: 'shared-settings' },
      data: { owner: 'a user' },
    });
    const overwrite = {
      task: 'apply-manifests',
      manifests: [
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'shared-settings', namespace: 'acme' },
          data: { owner: 'widgets' },
        },
      ],
    } as TaskSpec;
    expect(await run(client, overwrite)).toMatch(
      /ConfigMap acme\/shared-settings exists and was not created/,
    );
    expect((await ok('GET', '/api/v1/namespaces/acme/configmaps/shared-settings')).data).toEqual({
      owner: 'a user',
    });

    // Its own: created with the label, then unchanged, then updated (it is the feature's).
    const own = (data: Record<string, string>) =>
      ({
        task: 'apply-manifests',
        manifests: [
          {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: 'widgets-agent', namespace: 'acme' },
            data,
          },
        ],
      }) as TaskSpec;
    expect(await run(client, own({ a: '1' }))).toBe('done');
    expect(await run(client, own({ a: '2' }))).toBe('done');
    const live = await ok('GET', '/api/v1/namespaces/acme/configmaps/widgets-agent');
    expect(live.metadata.labels).toEqual({ [OWNER]: 'acme.widgets' });
    expect(live.data).toEqual({ a: '2' });
    await client.close();
    await backend.stop();
  });

  it('cluster-scoped, admission and RBAC kinds are refused at a pass unless allowed at registration', async () => {
    const backend = b();
    const client = await backend.client();
    await ok('POST', '/api/v1/nodes', { metadata: { name: 'node-a', labels: { pool: 'a' } } });
    const nodes = { task: 'delete-objects', apiVersion: 'v1', kind: 'Node', selector: 'pool=a' } as TaskSpec;
    expect(await run(client, nodes)).toMatch(/writes no Node \(cluster-scoped/);
    expect(await exists('/api/v1/nodes/node-a')).toBe(true);
    // By its plural: discovery says what it is.
    const byResource = {
      task: 'delete-objects',
      apiVersion: 'v1',
      resource: 'nodes',
      name: 'node-a',
    } as TaskSpec;
    expect(await run(client, byResource)).toMatch(/writes no Node/);

    const adminByName = {
      task: 'delete-objects',
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      name: 'cluster-admin',
    } as TaskSpec;
    expect(await run(client, adminByName)).toMatch(/writes no ClusterRole \(RBAC/);
    // Allowed, it still deletes only a ClusterRole the feature created.
    expect(await run(client, adminByName, ['ClusterRole'])).toBe('done');
    expect(await exists('/apis/rbac.authorization.k8s.io/v1/clusterroles/cluster-admin')).toBe(true);

    const webhook = {
      task: 'apply-manifests',
      manifests: [
        {
          apiVersion: 'admissionregistration.k8s.io/v1',
          kind: 'MutatingWebhookConfiguration',
          metadata: { name: 'widgets' },
          webhooks: [
            {
              name: 'widgets.acme.example.com',
              failurePolicy: 'Fail',
              sideEffects: 'None',
              admissionReviewVersions: ['v1'],
              clientConfig: { url: 'https://widgets.example.com/mutate' },
              rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'] }],
            },
          ],
        },
      ],
    } as TaskSpec;
    expect(await run(client, webhook)).toMatch(/writes no MutatingWebhookConfiguration \(admission/);
    expect(await exists('/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/widgets')).toBe(
      false,
    );
    await client.close();
    await backend.stop();
  });
});
