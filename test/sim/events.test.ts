/** Events the simulated controllers and kubelets record for pod creation, deletion and resize outcomes. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SimCluster, type Simulator, startSimulator } from '../../local/sim/index.js';
import { raw } from './helpers.js';

// biome-ignore lint/suspicious/noExplicitAny: Event objects as served
type Ev = any;

describe('Events', () => {
  let sim: Simulator;
  let c: SimCluster;
  const events = async (): Promise<Ev[]> =>
    (await raw(c, 'GET', '/api/v1/namespaces/apps/events')).json.items;
  const lines = (evs: Ev[]) =>
    evs.map((e) => `${e.type} ${e.reason} ${e.involvedObject.kind}/${e.involvedObject.name}: ${e.message}`);
  let pods: string[] = [];

  beforeAll(async () => {
    sim = await startSimulator({ clusters: [{ name: 'ev', nodes: 2, seed: 5 }] });
    c = sim.cluster('ev');
    await raw(c, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'apps' } } });
    const ds = {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'agent' },
      spec: {
        selector: { matchLabels: { app: 'agent' } },
        template: {
          metadata: { labels: { app: 'agent' } },
          spec: {
            containers: [
              {
                name: 'a',
                image: 'busybox:1',
                resources: { requests: { cpu: '100m' }, limits: { cpu: '100m' } },
              },
            ],
          },
        },
      },
    };
    expect((await raw(c, 'POST', '/apis/apps/v1/namespaces/apps/daemonsets', { body: ds })).status).toBe(201);
    pods = c.store
      .list('pods', 'apps')
      .map((p) => p.metadata.name)
      .sort();
  });
  afterAll(async () => {
    await sim?.stop();
  });

  it('records pod creation: the DaemonSet controller, the scheduler and the kubelet', async () => {
    expect(pods).toHaveLength(2);
    const got = lines(await events());
    for (const p of pods) {
      const node = c.store.get('pods', p, 'apps').spec.nodeName;
      expect(got).toEqual(
        expect.arrayContaining([
          `Normal SuccessfulCreate DaemonSet/agent: Created pod: ${p}`,
          `Normal Scheduled Pod/${p}: Successfully assigned apps/${p} to ${node}`,
          `Normal Pulled Pod/${p}: Container image "busybox:1" already present on machine`,
          `Normal Created Pod/${p}: Created container: a`,
          `Normal Started Pod/${p}: Started container a`,
        ]),
      );
    }
    const started = (await events()).find((e) => e.reason === 'Started');
    expect(started).toMatchObject({
      involvedObject: { kind: 'Pod', namespace: 'apps', apiVersion: 'v1', fieldPath: 'spec.containers{a}' },
      source: { component: 'kubelet' },
      count: 1,
      reportingComponent: 'kubelet',
    });
    expect(started.metadata.name).toMatch(new RegExp(`^${started.involvedObject.name}\\.[0-9a-f]+$`));
  });

  it('records deletion (the kubelet stops the containers) and the replacement pod', async () => {
    const victim = pods[0] as string;
    expect((await raw(c, 'DELETE', `/api/v1/namespaces/apps/pods/${victim}`)).status).toBe(200);
    const got = lines(await events());
    expect(got).toContain(`Normal Killing Pod/${victim}: Stopping container a`);
    const replacement = c.store
      .list('pods', 'apps')
      .map((p) => p.metadata.name)
      .find((n) => !pods.includes(n));
    expect(got).toContain(`Normal SuccessfulCreate DaemonSet/agent: Created pod: ${replacement}`);
  });

  it('records resize outcomes: started and completed, or infeasible with the reason', async () => {
    const pod = c.store.list('pods', 'apps')[0].metadata.name;
    const resize = (cpu: string) =>
      raw(c, 'PATCH', `/api/v1/namespaces/apps/pods/${pod}/resize`, {
        body: { spec: { containers: [{ name: 'a', resources: { requests: { cpu }, limits: { cpu } } }] } },
        contentType: 'application/strategic-merge-patch+json',
      });
    expect((await resize('200m')).status).toBe(200);
    sim.clock.advance(1000);
    await raw(c, 'GET', `/api/v1/namespaces/apps/pods/${pod}`);
    const summary = (cpu: string, gen: number) =>
      `{"containers":[{"name":"a","resources":{"limits":{"cpu":"${cpu}"},"requests":{"cpu":"${cpu}"}}}],"generation":${gen}`;
    const mine = (evs: Ev[]) =>
      lines(evs.filter((e) => e.involvedObject.name === pod && e.reason.startsWith('Resize')));
    expect(mine(await events())).toEqual([
      `Normal ResizeStarted Pod/${pod}: Pod resize started: ${summary('200m', 2)}}`,
      `Normal ResizeCompleted Pod/${pod}: Pod resize completed: ${summary('200m', 2)}}`,
    ]);
    expect((await resize('500')).status).toBe(200);
    const infeasible = (await events()).find(
      (e) => e.reason === 'ResizeInfeasible' && e.involvedObject.name === pod,
    );
    expect(infeasible.type).toBe('Warning');
    expect(infeasible.message).toMatch(
      /^Pod resize Infeasible: \{"containers":.*"generation":3,"error":"Node didn't have enough capacity: cpu, requested: 500000, capacity: \d+"\}$/,
    );
  });
});
