/**
 * Registering and unregistering third-party features with the CLI over the simulator (issue 34,
 * defects 1 and 8): a file is registered whole or not at all, and an oversize declaration (whose record
 * would pass DynamoDB's 400 KB item limit and stop every later pass) is refused naming its size; a kind
 * that needs the operator's allowance is refused until --allow-kind names it; a feature is unregistered
 * only once it is Off in every cluster, and then its record and its Feature object go with it.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import { runFleetscopeInProcess } from '../support/cli.js';

let sim: Simulator;
let dir: string;
let client: ClusterClient;
const run = (...args: string[]) => runFleetscopeInProcess(args, { stateDir: join(dir, 'state') });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function file(name: string, features: unknown[]): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, JSON.stringify({ features }));
  return path;
}
const configMap = (name: string, data: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'widgets' },
  data,
});
const state = async () =>
  JSON.parse(
    (await run('features', 'get', '--cluster', 'tp', '--feature', 'widgets/widgets', '-o', 'json')).out,
  ).state as string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fleetscope-features-register-'));
  sim = await startSimulator({ clusters: [{ name: 'tp', nodes: 1, seed: 12 }] });
  await sim.writeKubeconfig(join(dir, 'kubeconfig.yaml'));
  client = ClusterClient.fromKubeconfig(sim.kubeconfig(), { cluster: 'tp', context: 'tp' });
  await client.core.createNamespace({ body: { metadata: { name: 'widgets' } } });
});
afterAll(async () => {
  await client?.close();
  await sim?.stop();
  await rm(dir, { recursive: true, force: true });
});

it('a file registers whole or not at all; an oversize declaration is refused naming its size', async () => {
  const big = await file('big.yaml', [
    { namespace: 'widgets', name: 'small' },
    {
      namespace: 'widgets',
      name: 'huge',
      enable: [{ task: 'apply-manifests', manifests: [configMap('blob', { blob: 'x'.repeat(265_000) })] }],
    },
  ]);
  const refused = await run('features', 'register', '--file', big);
  expect(refused.code).toBe(2);
  expect(refused.err).toMatch(/features\[1\]: 260 KiB declared: at most 64 KiB/);
  for (const name of ['widgets/small', 'widgets/huge'])
    expect((await run('features', 'list', '--feature', name)).err).toMatch(/unknown feature/);
});

it('a ClusterRole is refused until the operator allows the kind at registration', async () => {
  const role = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'widgets-reader' },
    rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }],
  };
  const path = await file('rbac.yaml', [
    { namespace: 'widgets', name: 'reader', enable: [{ task: 'apply-manifests', manifests: [role] }] },
  ]);
  const refused = await run('features', 'register', '--file', path);
  expect(refused.code).toBe(2);
  expect(refused.err).toMatch(/features\[0\]\.enable\[0\]\.manifests\[0\]\.kind: .*--allow-kind ClusterRole/);
  const allowed = await run('features', 'register', '--file', path, '--allow-kind', 'ClusterRole');
  expect(allowed.out, allowed.err).toMatch(/registered widgets\/reader .*may write ClusterRole/);
  expect((await run('features', 'unregister', '--feature', 'widgets/reader')).code).toBe(0);
});

it('unregister: refused while a cluster has it on; once Off everywhere, the record and Feature object go', {
  timeout: 120_000,
}, async () => {
  const path = await file('widgets.yaml', [
    {
      namespace: 'widgets',
      name: 'widgets',
      usesWaitSeconds: 1,
      enable: [{ task: 'apply-manifests', manifests: [configMap('widget-agent-config', { on: 'yes' })] }],
      disable: [
        {
          task: 'delete-objects',
          apiVersion: 'v1',
          kind: 'ConfigMap',
          namespace: 'widgets',
          name: 'widget-agent-config',
        },
      ],
    },
  ]);
  const registered = await run('features', 'register', '--file', path);
  expect(registered.code, registered.err).toBe(0);
  expect(
    (await run('cluster', 'register', '--name', 'tp', '--kubeconfig', join(dir, 'kubeconfig.yaml'))).code,
  ).toBe(0);
  expect(
    (await run('features', 'set', '--cluster', 'tp', '--feature', 'widgets/widgets', '--desired', 'on')).code,
  ).toBe(0);
  for (let i = 0; i < 20 && (await state()) !== 'On'; i++) {
    await sleep(600);
    await run('features', 'reconcile', '--cluster', 'tp');
  }
  expect(await state()).toBe('On');

  const held = await run('features', 'unregister', '--feature', 'widgets/widgets');
  expect(held.code, 'a refused change is 1 (cli/exit-codes.ts)').toBe(1);
  expect(held.err).toMatch(/cluster tp: On: turn it off there first/);
  expect((await run('features', 'list', '--feature', 'widgets/widgets')).code).toBe(0);

  await run('features', 'set', '--cluster', 'tp', '--feature', 'widgets/widgets', '--desired', 'off');
  for (let i = 0; i < 20 && (await state()) !== 'Off'; i++) {
    await sleep(600);
    await run('features', 'reconcile', '--cluster', 'tp');
  }
  expect(await state()).toBe('Off');
  const done = await run('features', 'unregister', '--feature', 'widgets/widgets');
  expect(done.out).toMatch(/unregistered widgets\/widgets: forgotten in 1 cluster/);
  expect(done.code).toBe(0);
  expect((await run('features', 'list', '--feature', 'widgets/widgets')).err).toMatch(/unknown feature/);
  const objects = (await client.custom.listNamespacedCustomObject({
    group: 'fleetscope.io',
    version: 'v1alpha1',
    plural: 'features',
    namespace: 'widgets',
  })) as { items: unknown[] };
  expect(objects.items).toEqual([]);
  // A reconcile after it announces nothing again.
  await run('features', 'reconcile', '--cluster', 'tp');
  expect((await run('features', 'list', '--cluster', 'tp', '-o', 'json')).out).not.toMatch(
    /widgets\/widgets/,
  );
});

it('a pass whose task fails exits 1 naming it; unregistering a name never registered exits 1', {
  timeout: 120_000,
}, async () => {
  // A user's own ConfigMap where the feature would create one: apply refuses to adopt it, the task fails.
  await client.core.createNamespacedConfigMap({ namespace: 'widgets', body: configMap('users-own') });
  const path = await file('clash.yaml', [
    {
      namespace: 'widgets',
      name: 'clash',
      enable: [{ task: 'apply-manifests', manifests: [configMap('users-own', { mine: 'no' })] }],
    },
  ]);
  expect((await run('features', 'register', '--file', path)).code).toBe(0);
  await run('cluster', 'register', '--name', 'tp', '--kubeconfig', join(dir, 'kubeconfig.yaml'));
  expect(
    (await run('features', 'set', '--cluster', 'tp', '--feature', 'widgets/clash', '--desired', 'on')).code,
  ).toBe(0);
  const pass = await run('features', 'reconcile', '--cluster', 'tp');
  expect(pass.out).toMatch(/tp widgets\/clash: TurningOn \(failing: .*users-own/);
  expect(pass.err).toMatch(/tp widgets\/clash: .*users-own/);
  expect(pass.code, 'a pass with a failing task is 1, as a cron job must see it').toBe(1);
  expect((await client.core.readNamespacedConfigMap({ name: 'users-own', namespace: 'widgets' })).data).toBe(
    undefined,
  );

  const unknown = await run('features', 'unregister', '--feature', 'widgets/never');
  expect(unknown.err).toMatch(/widgets\/never is not a registered feature/);
  expect(unknown.err).not.toMatch(/--help/);
  expect(unknown.code, 'a name that does not exist is 1').toBe(1);
});
