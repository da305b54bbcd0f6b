/**
 * Third-party declarations that could do harm are refused whole, each problem named by its field
 * (issue 16, finding 7): a deletion of every object of a kind, anything in kube-system, a Namespace or
 * CRD deletion, a binding to a cluster-wide admin role, a clear-state outside the feature's own prefix,
 * and the requirements (`requires`) that name nothing or go round in a cycle.
 */
import { describe, expect, it } from 'vitest';
import { builtinFeatures, FeatureCatalog } from '../../shared/features/catalog.js';
import { checkRequires, DeclarationError, parseDeclarations } from '../../shared/features/declaration.js';
import { orderOf } from '../../shared/features/desired.js';
import { blank } from '../../shared/features/machine.js';
import { type FeatureSpec, tasksOf } from '../../shared/features/spec.js';
import { detailLines, featureJson } from '../../shared/features/views.js';

/** The fields a file is refused for (none when it is accepted). */
function refusedFields(features: unknown[], allowKinds?: string[]): string[] {
  try {
    parseDeclarations(JSON.stringify({ features }), 'f.yaml', allowKinds ? { allowKinds } : {});
    return [];
  } catch (err) {
    if (!(err instanceof DeclarationError)) throw err;
    return err.problems.map((p) => p.path);
  }
}

const feature = (disable: unknown[], extra: Record<string, unknown> = {}) => ({
  namespace: 'acme',
  name: 'widgets',
  disable,
  ...extra,
});
const del = (o: Record<string, unknown>) => ({ task: 'delete-objects', apiVersion: 'v1', ...o });
const apply = (...manifests: unknown[]) => ({ task: 'apply-manifests', manifests });
const binding = (kind: string, role: string, ns?: string) => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind,
  metadata: { name: 'widgets-admin', ...(ns ? { namespace: ns } : {}) },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
  subjects: [{ kind: 'ServiceAccount', name: 'widget-agent', namespace: 'acme' }],
});

describe('a third-party declaration cannot do harm', () => {
  it('refuses a deletion of every object of a kind, naming the task', () => {
    expect(refusedFields([feature([del({ kind: 'Pod' })])])).toEqual(['features[0].disable[0].namespace']);
    // Another namespace is not the feature's own: every pod there is still too much.
    expect(refusedFields([feature([del({ kind: 'Pod', namespace: 'payments' })])])).toEqual([
      'features[0].disable[0].namespace',
    ]);
  });

  it('accepts deletions scoped to the feature namespace, a name, or a selector', () => {
    expect(refusedFields([feature([del({ kind: 'ConfigMap', namespace: 'acme' })])])).toEqual([]);
    expect(refusedFields([feature([del({ kind: 'ConfigMap', namespace: 'payments', name: 'w' })])])).toEqual(
      [],
    );
    expect(refusedFields([feature([del({ kind: 'Pod', selector: 'app=widgets' })])])).toEqual([]);
  });

  it('refuses a Namespace or CRD deletion, even by name', () => {
    expect(refusedFields([feature([del({ kind: 'Namespace', name: 'acme' })])])).toEqual([
      'features[0].disable[0].kind',
    ]);
    expect(refusedFields([feature([del({ resource: 'namespaces', selector: 'a=b' })])])).toEqual([
      'features[0].disable[0].resource',
    ]);
    expect(
      refusedFields([
        feature([
          {
            task: 'delete-objects',
            apiVersion: 'apiextensions.k8s.io/v1',
            kind: 'CustomResourceDefinition',
            name: 'widgets.example.com',
          },
        ]),
      ]),
    ).toEqual(['features[0].disable[0].kind']);
  });

  it('refuses kube-system as the feature namespace and anything in it', () => {
    expect(refusedFields([feature([], { namespace: 'kube-system' })])).toEqual(['features[0].namespace']);
    expect(
      refusedFields([feature([del({ kind: 'ConfigMap', namespace: 'kube-system', name: 'coredns' })])]),
    ).toEqual(['features[0].disable[0].namespace']);
    expect(
      refusedFields([
        feature([
          {
            task: 'clear-field',
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            namespace: 'kube-system',
            field: 'spec.paused',
          },
        ]),
      ]),
    ).toEqual(['features[0].disable[0].namespace']);
    expect(
      refusedFields([
        feature([], {
          enable: [
            apply({
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name: 'w', namespace: 'kube-system' },
            }),
          ],
        }),
      ]),
    ).toEqual(['features[0].enable[0].manifests[0].metadata.namespace']);
  });

  it("refuses a clear-state of any prefix but the feature's own", () => {
    const clear = (...prefixes: string[]) => ({ task: 'clear-state', prefixes });
    expect(refusedFields([feature([clear('ID')])])).toEqual(['features[0].disable[0].prefixes[0]']);
    expect(refusedFields([feature([clear('acme/widgets#x', 'cycle#')])])).toEqual([
      'features[0].disable[0].prefixes[1]',
    ]);
    expect(refusedFields([feature([clear('acme/widgets#')])])).toEqual([]);
    // Another third party's prefix is not this one's either.
    expect(refusedFields([feature([clear('acme/gadgets#')])])).toEqual([
      'features[0].disable[0].prefixes[0]',
    ]);
  });

  it('refuses a binding to a cluster-wide admin role, and a role that grants everything', () => {
    // RBAC kinds allowed at registration: what such a grant may still not be.
    const RBAC = ['ClusterRole', 'ClusterRoleBinding', 'RoleBinding'];
    for (const role of ['cluster-admin', 'admin', 'edit', 'system:masters'])
      expect(
        refusedFields([feature([], { enable: [apply(binding('ClusterRoleBinding', role))] })], RBAC),
        role,
      ).toEqual(['features[0].enable[0].manifests[0].roleRef.name']);
    expect(
      refusedFields(
        [feature([], { enable: [apply(binding('RoleBinding', 'cluster-admin', 'acme'))] })],
        RBAC,
      ),
    ).toEqual(['features[0].enable[0].manifests[0].roleRef.name']);
    const everything = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'widgets-all' },
      rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }],
    };
    expect(refusedFields([feature([], { enable: [apply(everything)] })], RBAC)).toEqual([
      'features[0].enable[0].manifests[0].rules[0]',
    ]);
    // A narrow role of its own is fine, once the operator allowed RBAC at registration; not before.
    const narrow = feature([], {
      enable: [
        apply(
          {
            ...everything,
            metadata: { name: 'widgets-reader' },
            rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }],
          },
          binding('ClusterRoleBinding', 'widgets-reader'),
        ),
      ],
    });
    expect(refusedFields([narrow], RBAC)).toEqual([]);
    expect(refusedFields([narrow])).toEqual([
      'features[0].enable[0].manifests[0].kind',
      'features[0].enable[0].manifests[1].kind',
    ]);
  });

  it('names every problem of a hostile file at once', () => {
    const fields = refusedFields([
      feature([del({ kind: 'Namespace' }), { task: 'clear-state', prefixes: ['cycle#'] }], {
        namespace: 'kube-system',
        enable: [apply(binding('ClusterRoleBinding', 'cluster-admin'))],
      }),
    ]);
    expect(fields).toEqual(
      expect.arrayContaining([
        'features[0].namespace',
        'features[0].disable[0].kind',
        'features[0].disable[1].prefixes[0]',
        'features[0].enable[0].manifests[0].roleRef.name',
      ]),
    );
  });
});

describe("a feature's own task deadline", () => {
  it('is kept when given, absent otherwise, and refused outside 1 minute to 7 days naming the field', () => {
    const [own, dflt] = parseDeclarations(
      JSON.stringify({
        features: [feature([], { name: 'slow', taskDeadlineMinutes: 2880 }), feature([], { name: 'plain' })],
      }),
      'f.yaml',
    );
    expect(own!.taskDeadlineMinutes).toBe(2880);
    expect(dflt!.taskDeadlineMinutes).toBeUndefined();
    expect(refusedFields([feature([], { taskDeadlineMinutes: 0 })])).toEqual([
      'features[0].taskDeadlineMinutes',
    ]);
    expect(refusedFields([feature([], { taskDeadlineMinutes: 7 * 24 * 60 + 1 })])).toEqual([
      'features[0].taskDeadlineMinutes',
    ]);
  });
});

describe('requires: the order features turn on and off in', () => {
  const file = (features: unknown[]) => parseDeclarations(JSON.stringify({ features }), 'f.yaml');
  const decl = (name: string, requires: string[] = []) => ({ namespace: 'acme', name, requires });
  const problems = (declared: FeatureSpec[], known: FeatureSpec[] = builtinFeatures()) => {
    try {
      checkRequires(declared, known, 'f.yaml');
      return [];
    } catch (err) {
      if (!(err instanceof DeclarationError)) throw err;
      return err.problems.map((p) => `${p.path}: ${p.message}`);
    }
  };

  it('refuses an unknown requirement and a cycle, naming the field', () => {
    expect(problems(file([decl('app', ['acme/nope'])]))).toEqual([
      expect.stringMatching(/^features\[0\]\.requires\[0\]: unknown feature "acme\/nope" \(known: /),
    ]);
    expect(problems(file([decl('a', ['acme/b']), decl('b', ['balloons', 'acme/a'])]))).toEqual([
      'features[0].requires[0]: a cycle: acme/a -> acme/b -> acme/a',
      'features[1].requires[1]: a cycle: acme/b -> acme/a -> acme/b',
    ]);
    expect(problems(file([decl('self', ['acme/self'])]))).toEqual([
      'features[0].requires[0]: a cycle: acme/self -> acme/self',
    ]);
    expect(problems(file([decl('app', ['acme/base', 'balloons']), decl('base')]))).toEqual([]);
    expect(refusedFields([{ ...decl('app'), requires: ['Not A Name'] }])).toEqual([
      'features[0].requires[0]',
    ]);
    // The wait is derived from requires, never declared by hand.
    expect(
      refusedFields([feature([{ task: 'wait-for-features', features: ['acme/x'], state: 'Off' }])]),
    ).toEqual(['features[0].disable[0].task']);
  });

  it('waits for requirements first when turning on and for dependants first when turning off; get shows both orders', () => {
    const catalog = new FeatureCatalog([
      ...file([decl('app', ['acme/base']), decl('base', ['balloons'])]),
      ...builtinFeatures(),
    ]);
    const app = catalog.need({ namespace: 'acme', name: 'app' });
    const base = catalog.need({ namespace: 'acme', name: 'base' });
    expect(tasksOf(app, 'On')[0]).toEqual({
      task: 'wait-for-features',
      features: ['acme/base'],
      state: 'On',
    });
    expect(tasksOf(base, 'Off')[0]).toEqual({
      task: 'wait-for-features',
      features: ['acme/app'],
      state: 'Off',
    });
    expect(tasksOf(app, 'Off')[0]).toEqual({ task: 'wait-for-uses' }); // nothing requires app
    expect(orderOf(catalog, app)).toEqual({
      on: ['fleetscope-system/balloons', 'acme/base', 'acme/app'],
      off: ['acme/app'],
    });
    // features get shows them.
    const lines = detailLines({ ...featureJson(blank('c', app, 0), []), order: orderOf(catalog, app)! });
    expect(lines).toContain('order on:  fleetscope-system/balloons -> acme/base -> acme/app');
    expect(lines).toContain('order off: acme/app');
    expect(orderOf(catalog, catalog.need({ namespace: 'fleetscope-system', name: 'balloons' }))!.off).toEqual(
      ['acme/app', 'acme/base', 'fleetscope-system/balloons'],
    );
  });
});

describe('a declaration writes only what the operator allowed (issue 34)', () => {
  it('registration refuses what a pass would refuse: guarded kinds, default as the namespace', () => {
    const file = (features: unknown[]) => JSON.stringify({ features });
    const hostile = [
      {
        namespace: 'default',
        name: 'secrets',
        disable: [{ task: 'delete-objects', apiVersion: 'v1', kind: 'Secret', namespace: 'default' }],
      },
      {
        namespace: 'acme',
        name: 'open',
        enable: [
          {
            task: 'apply-manifests',
            manifests: [
              {
                apiVersion: 'rbac.authorization.k8s.io/v1',
                kind: 'ClusterRoleBinding',
                metadata: { name: 'open-secrets' },
                roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'secrets-rw' },
                subjects: [{ kind: 'Group', name: 'system:unauthenticated' }],
              },
            ],
          },
        ],
        disable: [{ task: 'delete-objects', apiVersion: 'v1', kind: 'Node', selector: 'x' }],
      },
    ];
    expect(() => parseDeclarations(file(hostile), 'f.yaml')).toThrow(
      /features\[0\]\.namespace: default is everyone's namespace.*features\[1\]\.enable\[0\]\.manifests\[0\]\.kind: a declared feature writes no ClusterRoleBinding.*features\[1\]\.disable\[0\]\.kind: a declared feature writes no Node/,
    );
    // The operator's allowance, at registration, is kept with the declaration.
    const [open] = parseDeclarations(file([hostile[1]]), 'f.yaml', {
      allowKinds: ['ClusterRoleBinding', 'Node'],
    });
    expect(open!.allowKinds).toEqual(['ClusterRoleBinding', 'Node']);
  });
});
