/**
 * The features CLI end to end over the simulator and the local runtime, as an operator runs it: a third
 * party's feature registered from a file (examples/widgets-feature.yaml) whose in-cluster component
 * reports its uses through the Feature object's status, turned on and off with `features set` (the bus
 * delivers FeatureDesiredChanged to the features function), shown by list/get/history, dangling when a
 * component still uses it after it is Off, and what check-upgrade says about it. Bad input is refused
 * naming the field, with nothing written.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../local/runtime.js';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import { FEATURE_CRD } from '../../shared/features/crd.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import { runFleetscopeInProcess } from '../support/cli.js';

let sim: Simulator;
let dir: string;
let client: ClusterClient;
const run = (...args: string[]) => runFleetscopeInProcess(args, { stateDir: join(dir, 'state') });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The widget agent: reports a value into its key of the Feature status, as kubectl patch would, echoing
 * the uses epoch it read there (a use counts in a wait only with the current one).
 */
async function agentReports(value: 'on' | 'off') {
  const feature = (await client.custom.getNamespacedCustomObject({
    group: FEATURE_CRD.group,
    version: FEATURE_CRD.version,
    plural: FEATURE_CRD.plural,
    namespace: 'widgets',
    name: 'widgets',
  })) as { status?: { usesEpoch?: number } };
  const epoch = feature.status?.usesEpoch;
  await client.patch('agent reports its use', 'merge', (o) =>
    client.custom.patchNamespacedCustomObjectStatus(
      {
        group: FEATURE_CRD.group,
        version: FEATURE_CRD.version,
        plural: FEATURE_CRD.plural,
        namespace: 'widgets',
        name: 'widgets',
        body: { status: { uses: { 'widget-agent': { value, time: new Date().toISOString(), epoch } } } },
      },
      o,
    ),
  );
}

const configMaps = async () =>
  (await client.core.listNamespacedConfigMap({ namespace: 'widgets' })).items
    .map((c) => c.metadata!.name!)
    .sort();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fleetscope-features-cli-'));
  sim = await startSimulator({ clusters: [{ name: 'tp', nodes: 1, seed: 11 }] });
  await sim.writeKubeconfig(join(dir, 'kubeconfig.yaml'));
  client = ClusterClient.fromKubeconfig(sim.kubeconfig(), { cluster: 'tp', context: 'tp' });
  await client.core.createNamespace({ body: { metadata: { name: 'widgets' } } }); // the third party's install
});
afterAll(async () => {
  await client?.close();
  await sim?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('fleetscope features', () => {
  it('a third-party feature from a file: on, used by its in-cluster component, off once its objects are removed', {
    timeout: 120_000,
  }, async () => {
    // Quick waits for the test; the file is the published sample otherwise.
    const sample = (await readFile(join(REPO_ROOT, 'examples', 'widgets-feature.yaml'), 'utf8')).replace(
      /Seconds: 60/g,
      'Seconds: 1',
    );
    const file = join(dir, 'widgets.yaml');
    await writeFile(file, sample);

    // Bad input first: refused naming the field, nothing written.
    const bad = join(dir, 'bad.yaml');
    await writeFile(
      bad,
      sample
        .replace('task: wait-for-no-objects', 'task: wait-for-nothing')
        .replace('selector: widgets.example.com/stamped=true', 'selector: "a in ("'),
    );
    const refused = await run('features', 'register', '--file', bad);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/features\[0\]\.disable\[1\]\.task: unknown task kind "wait-for-nothing"/);
    // A requirement that names no feature is refused before anything is stored.
    const requiring = join(dir, 'requires.yaml');
    await writeFile(requiring, 'features:\n  - namespace: acme\n    name: app\n    requires: [acme/nope]\n');
    const unknown = await run('features', 'register', '--file', requiring);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/features\[0\]\.requires\[0\]: unknown feature "acme\/nope"/);
    // A file whose second feature could do harm is refused whole: its first, harmless one is not stored.
    const harmful = join(dir, 'harmful.yaml');
    await writeFile(
      harmful,
      [
        'features:',
        '  - namespace: acme',
        '    name: fine',
        '  - namespace: acme',
        '    name: wiper',
        '    disable:',
        '      - task: delete-objects',
        '        apiVersion: v1',
        '        kind: Pod',
        '',
      ].join('\n'),
    );
    const wiper = await run('features', 'register', '--file', harmful);
    expect(wiper.code).toBe(2);
    expect(wiper.err).toMatch(/features\[1\]\.disable\[0\]/);
    for (const name of ['acme/app', 'acme/fine', 'acme/wiper'])
      expect((await run('features', 'list', '--feature', name)).err, name).toMatch(
        new RegExp(`--feature: unknown feature "${name}"`),
      );
    expect((await run('features', 'list', '--feature', 'widgets/widgets')).err).toMatch(
      /--feature: unknown feature "widgets\/widgets"/,
    );

    expect((await run('features', 'register', '--file', file)).out).toMatch(
      /registered widgets\/widgets \(default off/,
    );
    expect(
      (await run('cluster', 'register', '--name', 'tp', '--kubeconfig', join(dir, 'kubeconfig.yaml'))).code,
    ).toBe(0);
    for (const [args, message] of [
      [
        ['--cluster', 'nope', '--feature', 'balloons', '--desired', 'off'],
        /cluster "nope" is not registered/,
      ],
      [
        ['--cluster', 'tp', '--feature', 'ballons', '--desired', 'off'],
        /--feature: unknown feature "fleetscope-system\/ballons"/,
      ],
      [
        ['--cluster', 'tp', '--feature', 'balloons', '--desired', 'maybe'],
        /--desired: "maybe" is not one of on, off, default/,
      ],
    ] as const) {
      const r = await run('features', 'set', ...args);
      expect(r.code).not.toBe(0);
      expect(r.err).toMatch(message);
    }
    // The operator verbs on a stuck transition name what is wrong, and write nothing.
    for (const [args, message] of [
      [
        ['retry', '--cluster', 'nope', '--feature', 'balloons', '--reason', 'r'],
        /cluster "nope" is not registered/,
      ],
      [
        ['skip', '--cluster', 'tp', '--feature', 'ballons', '--reason', 'r'],
        /unknown feature "fleetscope-system\/ballons"/,
      ],
      [['abandon', '--cluster', 'tp', '--feature', 'balloons'], /abandon needs --reason/],
      [
        ['skip', '--cluster', 'tp', '--feature', 'balloons', '--task', 'x', '--reason', 'r'],
        /--task "x": no such task in the transition of fleetscope-system\/balloons in cluster tp \(its tasks: "wait for uses"\)/,
      ],
    ] as const) {
      const r = await run('features', ...args);
      expect(r.code, r.out).not.toBe(0);
      expect(r.err).toMatch(message);
    }
    const balloons = JSON.parse(
      (await run('features', 'get', '--cluster', 'tp', '--feature', 'balloons', '-o', 'json')).out,
    );
    expect(balloons.desired).toBe('default'); // nothing written by the refused sets
    expect(balloons.desiredBy).toBeUndefined();
    const announced = JSON.parse((await run('features', 'list', '--cluster', 'tp', '-o', 'json')).out);
    expect(
      announced.features.map((f: { feature: string; state: string }) => `${f.feature}=${f.state}`).sort(),
    ).toEqual([
      'fleetscope-system/balloons=TurningOn',
      'fleetscope-system/claims=TurningOn',
      'fleetscope-system/nodescope=TurningOn',
      'widgets/widgets=Off',
    ]);
    expect(announced.features.every((f: { desired: string }) => f.desired === 'default')).toBe(true);

    // Plan first: what on would write, each write checked by the server as a dry run; nothing written.
    const plan = async (desired: string, ...more: string[]) =>
      run(
        'features',
        'plan',
        '--cluster',
        'tp',
        '--feature',
        'widgets/widgets',
        '--desired',
        desired,
        ...more,
      );
    expect((await plan('maybe')).err).toMatch(/plan needs --desired on\|off \("maybe" is neither\)/);
    const onPlan = JSON.parse((await plan('on', '-o', 'json')).out);
    expect(onPlan).toMatchObject({ feature: 'widgets/widgets', state: 'Off', to: 'On' });
    expect(onPlan.steps).toEqual([
      {
        task: 'apply ConfigMap widget-agent-config',
        action: 'create',
        object: 'ConfigMap widgets/widget-agent-config',
      },
      expect.objectContaining({ task: 'wait for uses', action: 'wait', object: 'uses' }),
    ]);
    expect(await configMaps()).toEqual(['kube-root-ca.crt']);
    // The server's refusal of the dry run is the real write's refusal, shown with the step.
    const forbidden = sim.faults.inject({
      cluster: 'tp',
      match: { method: 'POST', pathIncludes: '/configmaps' },
      fault: { type: 'status', code: 403 },
    });
    expect((await plan('on')).out).toMatch(
      /create REFUSED\s+ConfigMap widgets\/widget-agent-config\s+the server refused: .*403/,
    );
    sim.faults.clear(forbidden);

    // On: the manifests are applied, and the transition waits for the agent to use it.
    const on = await run(
      'features',
      'set',
      '--cluster',
      'tp',
      '--feature',
      'widgets/widgets',
      '--desired',
      'on',
    );
    expect(on.out).toMatch(/widgets\/widgets in tp: desired on, now TurningOn/);
    expect(await configMaps()).toContain('widget-agent-config');
    await agentReports('on');
    await sleep(1100);
    await run('features', 'reconcile', '--cluster', 'tp');
    const got = JSON.parse(
      (await run('features', 'get', '--cluster', 'tp', '--feature', 'widgets/widgets', '-o', 'json')).out,
    );
    expect(got).toMatchObject({ state: 'On', desired: 'on', default: 'off' });
    expect(got.uses).toContainEqual(
      expect.objectContaining({ component: 'widget-agent', value: 'on', source: 'cluster' }),
    );

    // Off: the agent still uses it, so the wait for uses starts over; a stamped widget holds the transition.
    await client.core.createNamespacedConfigMap({
      namespace: 'widgets',
      body: { metadata: { name: 'widget-1', labels: { 'widgets.example.com/stamped': 'true' } } },
    });
    const offPlan = JSON.parse((await plan('off', '-o', 'json')).out);
    expect(offPlan.steps.map((p: { action: string; object: string }) => `${p.action} ${p.object}`)).toEqual([
      'wait uses',
      'wait ConfigMap in widgets (widgets.example.com/stamped=true)',
      'delete ConfigMap widgets/widget-agent-config',
    ]);
    expect(offPlan.steps[1].detail).toBe('1 left: widgets/widget-1');
    expect(await configMaps()).toEqual(['kube-root-ca.crt', 'widget-1', 'widget-agent-config']); // none deleted
    expect((await plan('on')).out).toMatch(/already On: no transition/);
    await run('features', 'set', '--cluster', 'tp', '--feature', 'widgets/widgets', '--desired', 'off');
    await agentReports('on');
    await sleep(1100);
    await run('features', 'reconcile', '--cluster', 'tp');
    let f = JSON.parse(
      (await run('features', 'get', '--cluster', 'tp', '--feature', 'widgets/widgets', '-o', 'json')).out,
    );
    expect(f.tasks[0]).toMatchObject({
      task: 'wait-for-uses',
      waitingFor: expect.stringMatching(/still reporting "on": widget-agent/),
    });
    await agentReports('off');
    await sleep(1100);
    await run('features', 'reconcile', '--cluster', 'tp');
    const table = (
      await run('features', 'list', '--cluster', 'tp', '--feature', 'widgets/widgets', '-o', 'wide')
    ).out;
    expect(table).toMatch(
      /tp\s+widgets\/widgets\s+TurningOff\s+off\s+off\s+2\s+wait for no ConfigMap in widgets \(widgets.example.com\/stamped=true\)\s+1 ConfigMap in widgets \(widgets.example.com\/stamped=true\) left: widgets\/widget-1/,
    );
    const blocked = await run('features', 'check-upgrade', '--cluster', 'tp');
    expect(blocked.code).toBe(1);
    expect(blocked.out).toMatch(/tp\s+widgets\/widgets\s+TurningOff in progress at "wait for no ConfigMap/);
    expect(await configMaps()).toContain('widget-1'); // never deleted by fleetscope

    await client.core.deleteNamespacedConfigMap({ name: 'widget-1', namespace: 'widgets' });
    await run('features', 'reconcile', '--cluster', 'tp');
    f = JSON.parse(
      (await run('features', 'get', '--cluster', 'tp', '--feature', 'widgets/widgets', '-o', 'json')).out,
    );
    expect(f).toMatchObject({ state: 'Off', dangling: [] });
    expect(await configMaps()).not.toContain('widget-agent-config');
    const history = (await run('features', 'history', '--cluster', 'tp', '--feature', 'widgets/widgets')).out;
    expect(history).toMatch(/On\s+completed.*desired on \(set by operator\)/);
    expect(history).toMatch(/Off\s+completed.*desired off \(set by operator\)/);

    // A component that did not get the message: Off, yet used. Shown as dangling, and it blocks upgrades.
    await agentReports('on');
    const dangling = (await run('features', 'get', '--cluster', 'tp', '--feature', 'widgets/widgets')).out;
    expect(dangling).toMatch(/dangling:\n {2}- use: widget-agent reports on/);
    expect((await run('features', 'list', '--cluster', 'tp', '--feature', 'widgets/widgets')).out).toMatch(
      /DANGLING: use: widget-agent reports on/,
    );
    const check = await run('features', 'check-upgrade', '--kubernetes', '1.32');
    expect(check.code).toBe(1);
    expect(check.out).toMatch(/balloons\s+Kubernetes 1.32 cannot serve it \(it needs >= 1.33/);
    await agentReports('off');
    expect((await run('features', 'get', '--cluster', 'tp', '--feature', 'widgets/widgets')).out).toMatch(
      /dangling: nothing/,
    );
  });

  it('rollout: waves checked before anything is written, then started, shown, halted and resumed', async () => {
    for (const [args, message] of [
      [['--waves', '1,50%'], /--waves: the last wave must be 100%/],
      [['--waves', '1,100%', '--to', 'maybe'], /--to: give on or off, not "maybe"/],
      [['--waves', '1,100%', '--pause', 'soon'], /--pause "soon": a duration such as 90s, 10m or 2h/],
      [['--waves', '1,100%', '--selector', 'env in ('], /label selector "env in \("/],
    ] as const) {
      const r = await run('features', 'rollout', '--feature', 'widgets/widgets', '--to', 'on', ...args);
      expect(r.code, r.err).toBe(2);
      expect(r.err).toMatch(message);
    }
    expect((await run('features', 'rollout', 'status')).out).toBe('no rollouts');

    const started = await run(
      'features',
      'rollout',
      '--feature',
      'widgets/widgets',
      '--to',
      'on',
      '--waves',
      '1,100%',
      '--pause',
      '10m',
    );
    expect(started.out).toMatch(
      /^rollout (widgets-on-\S+): widgets on over 1 cluster\(s\)\n {2}wave 1 \(canary\): tp$/,
    );
    const id = /^rollout (\S+):/.exec(started.out)![1]!;
    // The first wave started at once (the features function took the event): tp is turning on.
    const status = JSON.parse((await run('features', 'rollout', 'status', '--id', id, '-o', 'json')).out);
    expect(status.rollouts[0]).toMatchObject({ id, status: 'running', wave: 1, waves: [['tp']] });
    expect(
      JSON.parse(
        (await run('features', 'get', '--cluster', 'tp', '--feature', 'widgets/widgets', '-o', 'json')).out,
      ),
    ).toMatchObject({
      desired: 'on',
      desiredBy: `rollout/${id}`,
    });
    expect(
      (await run('features', 'rollout', '--feature', 'widgets/widgets', '--to', 'on', '--waves', '1,100%'))
        .err,
    ).toMatch(new RegExp(`rollout ${id} of widgets/widgets is running: halt it first`));
    expect((await run('features', 'rollout', 'halt', '--id', id)).out).toMatch(
      `rollout ${id}: halted (halted by operator), wave 1 of 1`,
    );
    expect((await run('features', 'rollout', 'status')).out).toMatch(
      new RegExp(`${id}\\s+widgets/widgets\\s+on\\s+halted\\s+1/1\\s+1\\s+halted by operator`),
    );
    expect((await run('features', 'rollout', 'resume', '--id', id)).out).toMatch(
      `rollout ${id}: running, wave 1 of 1`,
    );
    for (const verb of ['halt', 'resume', 'approve', 'status']) {
      const r = await run('features', 'rollout', verb, '--id', 'nope');
      expect(r.code, verb).toBe(1); // not found, as an unknown cluster: not a usage error (2)
      expect(r.err, verb).toMatch(/no rollout "nope"/);
    }
    expect((await run('features', 'rollout', 'approve', '--id', id)).err).toMatch(
      `rollout ${id} was started without approval gates`,
    );
  });
});
