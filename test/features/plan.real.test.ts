/**
 * `features plan` against a real kube-apiserver: the dry run (dryRun=All) is what the real server
 * checks and does not persist. A create it accepts is planned and not made; a delete it accepts is
 * planned and the object stays; a create into a namespace that does not exist is refused by the server
 * and shown so, as the real write would be.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { REPO_ROOT } from '../../local/runtime.js';
import { parseDeclarations } from '../../shared/features/declaration.js';
import { ObjectsApi } from '../../shared/features/objects.js';
import { planTransition } from '../../shared/features/plan.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import { describeRealApiserver } from '../support/real-apiserver.js';

const [widgets] = parseDeclarations(
  await readFile(join(REPO_ROOT, 'examples', 'widgets-feature.yaml'), 'utf8'),
  'examples/widgets-feature.yaml',
);

describeRealApiserver('features plan', (server) => {
  const client = () =>
    ClusterClient.fromKubeconfig(server.api().adminKubeconfig, { cluster: 'envtest', context: 'envtest' });
  const ports = (c: ClusterClient) => ({
    objects: new ObjectsApi(c),
    items: async () => [],
    keepState: false,
  });
  const names = async (c: ClusterClient) =>
    (await c.core.listNamespacedConfigMap({ namespace: 'widgets' })).items.map((m) => m.metadata!.name!);

  it('a missing namespace: the server refuses the dry-run create, as it would the real one', async () => {
    const c = client();
    const plan = await planTransition(widgets!, 'envtest', undefined, 'On', ports(c));
    expect(plan.steps[0]).toMatchObject({
      action: 'create',
      object: 'ConfigMap widgets/widget-agent-config',
      refused: expect.stringMatching(/404|not found/i),
    });
    await c.close();
  });

  it('on: the create is accepted and not made; off: the delete is accepted and the object stays', async () => {
    const c = client();
    await c.core.createNamespace({ body: { metadata: { name: 'widgets' } } });
    const on = await planTransition(widgets!, 'envtest', undefined, 'On', ports(c));
    expect(on.steps[0]).toEqual({
      task: 'apply ConfigMap widget-agent-config',
      action: 'create',
      object: 'ConfigMap widgets/widget-agent-config',
    });
    expect(await names(c)).not.toContain('widget-agent-config');

    await c.core.createNamespacedConfigMap({
      namespace: 'widgets',
      body: { metadata: { name: 'widget-agent-config' }, data: { stamping: 'disabled' } },
    });
    // A user's object of that name is not the feature's: never taken over (issue 34), nor deleted.
    const taken = await planTransition(widgets!, 'envtest', undefined, 'On', ports(c));
    expect(taken.steps[0]).toMatchObject({
      action: 'change',
      refused: expect.stringMatching(/exists and was not created by feature widgets\/widgets/),
    });
    const notOurs = await planTransition(widgets!, 'envtest', { state: 'On' } as never, 'Off', ports(c));
    expect(notOurs.steps.find((s) => s.action === 'delete')).toBeUndefined();
    await c.core.patchNamespacedConfigMap({
      name: 'widget-agent-config',
      namespace: 'widgets',
      body: [
        { op: 'add', path: '/metadata/labels', value: { 'features.fleetscope.io/owner': 'widgets.widgets' } },
      ],
    });
    const changed = await planTransition(widgets!, 'envtest', undefined, 'On', ports(c));
    expect(changed.steps[0]).toMatchObject({
      action: 'change',
      detail: expect.stringMatching(/data\.stamping/),
    });
    expect(changed.steps[0]!.refused).toBeUndefined();
    const off = await planTransition(widgets!, 'envtest', { state: 'On' } as never, 'Off', ports(c));
    expect(off.steps.find((s) => s.action === 'delete')).toEqual({
      task: 'delete ConfigMap widgets/widget-agent-config',
      action: 'delete',
      object: 'ConfigMap widgets/widget-agent-config',
    });
    expect(await names(c)).toContain('widget-agent-config');
    const live = await c.core.readNamespacedConfigMap({ name: 'widget-agent-config', namespace: 'widgets' });
    expect(live.data).toEqual({ stamping: 'disabled' }); // the dry-run patch changed nothing
    await c.close();
  });
});
