/** `fleetscope rbac`: the manifests it prints for the catalogue, and what it refuses. */
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { CAPABILITIES } from '../../shared/capabilities.js';
import { permissionProblem } from '../../shared/platform/kube-permissions.js';
import { rbacManifests } from '../../shared/platform/rbac-manifests.js';
import { runFleetscopeInProcess } from '../support/cli.js';

// biome-ignore lint/suspicious/noExplicitAny: manifests are arbitrary JSON
type Obj = any;

describe('fleetscope rbac', () => {
  it('prints one ClusterRole and binding per capability, with no wildcard and no secrets', async () => {
    const r = await runFleetscopeInProcess(['rbac', '--group', 'fleetscope-eks', '-o', 'json']);
    expect(r.code).toBe(0);
    const items: Obj[] = JSON.parse(r.out).items;
    const names = items.map((i) => `${i.kind} ${i.metadata.name} ${i.metadata.namespace ?? '*'}`);
    // One ClusterRole per capability that acts in clusters (the report reads the table only) and, for
    // balloons' writes in kube-system and node scope's look for upstream VPA there, a Role there.
    expect(CAPABILITIES.filter((c) => c.kubernetes.length === 0).map((c) => c.id)).toEqual(['report']);
    expect(names).toEqual(
      CAPABILITIES.filter((c) => c.kubernetes.length > 0).flatMap((c) => [
        `ClusterRole fleetscope:${c.id} *`,
        `ClusterRoleBinding fleetscope:${c.id} *`,
        ...(c.id === 'balloons' || c.id === 'nodescope'
          ? [`Role fleetscope:${c.id} kube-system`, `RoleBinding fleetscope:${c.id} kube-system`]
          : []),
      ]),
    );
    const rules: Obj[] = items.flatMap((i) => i.rules ?? []);
    expect(JSON.stringify(rules)).not.toContain('*');
    expect(rules.flatMap((x) => x.resources)).not.toContain('secrets');
    // Write verbs only where a capability writes: pods (annotation), pods/resize, VPA status, claims,
    // CRDs, the balloons' DaemonSet, PriorityClass and Events; the Feature objects and their namespace;
    // and, turning node scope off, a VPA's spec.scope; the owner lease of the cluster (fleet).
    const writes = rules
      .filter((x) => x.verbs.some((v: string) => ['create', 'update', 'patch', 'delete'].includes(v)))
      .map((x) => `${x.apiGroups[0]}/${x.resources.join(',')}`)
      .sort();
    expect([...new Set(writes)]).toEqual([
      '/events',
      '/namespaces',
      '/pods',
      '/pods/resize',
      'about.k8s.io/clusterproperties',
      'apiextensions.k8s.io/customresourcedefinitions',
      'apps/daemonsets',
      'autoscaling.k8s.io/verticalpodautoscalers',
      'autoscaling.k8s.io/verticalpodautoscalers/status',
      'cluster.open-cluster-management.io/clusterclaims',
      'coordination.k8s.io/leases',
      'fleetscope.io/features',
      'fleetscope.io/features/status',
      'scheduling.k8s.io/priorityclasses',
    ]);
    const balloonRole = items.find((i) => i.kind === 'Role' && i.metadata.name === 'fleetscope:balloons');
    const nodescopeRole = items.find((i) => i.kind === 'Role' && i.metadata.name === 'fleetscope:nodescope');
    // Node scope only reads kube-system's Deployments, to find upstream VPA's components.
    expect(nodescopeRole.rules).toEqual([
      expect.objectContaining({ apiGroups: ['apps'], resources: ['deployments'], verbs: ['list'] }),
    ]);
    expect(balloonRole.rules.flatMap((x: Obj) => x.resources).sort()).toEqual([
      'daemonsets',
      'daemonsets',
      'events',
      'limitranges',
      'pods',
      'pods/resize',
      'resourcequotas',
    ]);
    expect(items[1].subjects).toEqual([
      { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'fleetscope-eks' },
    ]);
  });

  it('limits itself to the capabilities asked for, plus optional features, as YAML with reasons', async () => {
    const r = await runFleetscopeInProcess([
      'rbac',
      '--service-account',
      'fleetscope/agent',
      '--capability',
      'nodescope',
      '--with',
      'install-crd',
    ]);
    expect(r.code).toBe(0);
    const docs: Obj[] = parseAllDocuments(r.out).map((d) => d.toJSON());
    // Node scope runs in the cluster cycle: the cycle's snapshot reads come with it.
    expect(docs.map((d) => `${d.kind} ${d.metadata.name}`)).toEqual([
      'ServiceAccount agent',
      'ClusterRole fleetscope:fleet',
      'ClusterRoleBinding fleetscope:fleet',
      'ClusterRole fleetscope:nodescope',
      'ClusterRoleBinding fleetscope:nodescope',
      'Role fleetscope:nodescope',
      'RoleBinding fleetscope:nodescope',
      'ClusterRole fleetscope:cycle',
      'ClusterRoleBinding fleetscope:cycle',
    ]);
    expect(r.out).toContain('# in-place resize of DaemonSet pods');
    expect(docs[3].rules).toContainEqual({
      apiGroups: ['apiextensions.k8s.io'],
      resources: ['customresourcedefinitions'],
      verbs: ['update'],
      resourceNames: ['verticalpodautoscalers.autoscaling.k8s.io'],
    });
  });

  it('patch on nodes only with --with resize-preemption-opt-out (KEP-5836), and nothing else of nodes', async () => {
    const nodeWrites = async (...extra: string[]) => {
      const r = await runFleetscopeInProcess([
        'rbac',
        '--user',
        'u',
        '--capability',
        'balloons',
        '-o',
        'json',
        ...extra,
      ]);
      expect(r.code, r.err).toBe(0);
      return (JSON.parse(r.out).items as Obj[])
        .flatMap((i) => (i.rules ?? []).map((x: Obj) => ({ role: `${i.kind} ${i.metadata.name}`, ...x })))
        .filter((x) => x.apiGroups[0] === '' && x.resources.some((r: string) => r.startsWith('nodes')))
        .filter((x) => x.verbs.some((v: string) => !['get', 'list', 'watch'].includes(v)));
    };
    expect(await nodeWrites()).toEqual([]);
    expect(await nodeWrites('--with', 'resize-preemption-opt-out')).toEqual([
      { role: 'ClusterRole fleetscope:balloons', apiGroups: [''], resources: ['nodes'], verbs: ['patch'] },
    ]);
    const help = await runFleetscopeInProcess(['rbac', '--help']);
    expect(help.out + help.err).toContain('resize-preemption-opt-out: off by default');
  });

  it('names what is wrong with its arguments', async () => {
    const none = await runFleetscopeInProcess(['rbac']);
    expect(none.code).toBe(2);
    expect(none.err).toContain('name the identity to bind');
    const unknown = await runFleetscopeInProcess(['rbac', '--user', 'u', '--capability', 'nope']);
    expect(unknown.err).toContain('unknown capability "nope"');
    const feature = await runFleetscopeInProcess(['rbac', '--user', 'u', '--with', 'everything']);
    expect(feature.err).toContain('unknown feature "everything"');
  });

  it('refuses a declaration that is not least privilege', () => {
    const bad = { group: '', resources: ['secrets'], verbs: ['get' as const], why: 'x' };
    expect(permissionProblem(bad)).toBe('grants access to secrets');
    expect(permissionProblem({ ...bad, resources: ['*'] })).toBe('uses a wildcard');
    expect(() =>
      rbacManifests([{ id: 'x', kubernetes: [bad] }], { subjects: [{ kind: 'User', name: 'u' }] }),
    ).toThrow('capability x: the rule for secrets grants access to secrets');
  });
});
