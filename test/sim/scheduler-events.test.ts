/**
 * The scheduler's own Events, as the real kube-scheduler records them (found by `npm run fidelity`
 * against a real 1.36 cluster: the simulator recorded none): FailedScheduling with the FitError message
 * for a pod that fits nowhere, and for a preemptor before it binds; Preempted on each victim.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SimCluster, type Simulator, startSimulator } from '../../local/sim/index.js';
import { raw } from './helpers.js';

// biome-ignore lint/suspicious/noExplicitAny: Event objects as served
type Ev = any;

describe('scheduler Events', () => {
  let sim: Simulator;
  let c: SimCluster;
  const events = async (): Promise<Ev[]> =>
    (await raw(c, 'GET', '/api/v1/namespaces/apps/events')).json.items;
  const of = (evs: Ev[], pod: string) =>
    evs
      .filter((e) => e.involvedObject.name === pod && e.source.component === 'default-scheduler')
      .map((e) => `${e.type} ${e.reason}: ${e.message}`);
  const pod = (name: string, cpu: string, spec: Record<string, unknown> = {}) => ({
    metadata: { name },
    spec: {
      nodeSelector: { 'kubernetes.io/hostname': 'small' },
      containers: [{ name: 'c', image: 'pause', resources: { requests: { cpu } } }],
      ...spec,
    },
  });

  beforeAll(async () => {
    sim = await startSimulator({ clusters: [{ name: 'sched', nodes: 0 }] });
    c = sim.cluster('sched');
    c.addNode({ name: 'small', cpu: '1', memory: '2Gi' });
    await raw(c, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'apps' } } });
    for (const [name, value] of [
      ['low', 100],
      ['high', 1000],
    ] as const)
      await raw(c, 'POST', '/apis/scheduling.k8s.io/v1/priorityclasses', {
        body: { metadata: { name }, value },
      });
  });
  afterAll(async () => {
    await sim?.stop();
  });

  it('records FailedScheduling with the PodScheduled message for a pod that fits nowhere', async () => {
    await raw(c, 'POST', '/api/v1/namespaces/apps/pods', { body: pod('huge', '2') });
    const got = await raw(c, 'GET', '/api/v1/namespaces/apps/pods/huge');
    const cond = got.json.status.conditions.find((x: Ev) => x.type === 'PodScheduled');
    expect(of(await events(), 'huge')).toEqual([`Warning FailedScheduling: ${cond.message}`]);
    await raw(c, 'DELETE', '/api/v1/namespaces/apps/pods/huge');
  });

  it('1.34+: a node too small for the pod even empty is not a preemption candidate (kubernetes#131345)', async () => {
    const old = await startSimulator({ clusters: [{ name: 'old', nodes: 0, kubernetesVersion: '1.33.13' }] });
    try {
      const messages: string[] = [];
      for (const cl of [c, old.cluster('old')]) {
        if (cl !== c) cl.addNode({ name: 'small', cpu: '1', memory: '2Gi' });
        await raw(cl, 'POST', '/api/v1/namespaces/default/pods', { body: pod('huge', '2') });
        const got = await raw(cl, 'GET', '/api/v1/namespaces/default/pods/huge');
        messages.push(got.json.status.conditions.find((x: Ev) => x.type === 'PodScheduled').message);
        await raw(cl, 'DELETE', '/api/v1/namespaces/default/pods/huge');
      }
      expect(messages).toEqual([
        '0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.',
        '0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.',
      ]);
    } finally {
      await old.stop();
    }
  });

  it('records FailedScheduling on the preemptor and Preempted on the victim, naming the preemptor and node', async () => {
    await raw(c, 'POST', '/api/v1/namespaces/apps/pods', {
      body: pod('victim', '800m', { priorityClassName: 'low' }),
    });
    await raw(c, 'POST', '/api/v1/namespaces/apps/pods', {
      body: pod('preemptor', '800m', { priorityClassName: 'high' }),
    });
    const preemptor = (await raw(c, 'GET', '/api/v1/namespaces/apps/pods/preemptor')).json;
    expect(preemptor.spec.nodeName).toBe('small');
    const evs = await events();
    expect(of(evs, 'victim')).toEqual([
      'Normal Scheduled: Successfully assigned apps/victim to small',
      `Normal Preempted: Preempted by pod ${preemptor.metadata.uid} on node small`,
    ]);
    expect(of(evs, 'preemptor').map((l) => l.split(':')[0])).toEqual([
      'Warning FailedScheduling',
      'Normal Scheduled',
    ]);
  });
});
