/**
 * The kubelet's refusal to lower a memory limit below the container's usage (1.34+), reproduced by the
 * simulator's kubelet: the resize stays PodResizeInProgress with reason Error and the real kubelet's
 * message; the resize mechanism reads it as an actuation error in people's units, keeps the raw message
 * (the usage the kubelet saw) and never sends the same request again; once the limit asked for is above
 * the usage, the kubelet actuates it. Node scope does not ask for it in the first place.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CycleResult } from '../../shared/nodescope/cycle.js';
import { clusterResizeApi, memoryLimitRefusals, type PodLike, Resizer } from '../../shared/resize/index.js';
import {
  agentDaemonSet,
  cycle,
  type Env,
  MINUTE,
  startEnv,
  VPA_RESOURCE,
  vpaObject,
} from '../nodescope/helpers.js';

const MI = 2 ** 20;

describe('a memory limit lowered below usage', () => {
  let env: Env;
  beforeAll(async () => {
    env = await startEnv([
      {
        name: 'mem',
        nodes: 1,
        seed: 41,
        daemonSets: [
          agentDaemonSet({
            containers: [
              { name: 'collector', requests: { cpu: '100m', memory: '256Mi' }, limits: { memory: '512Mi' } },
            ],
            load: { cpu: 100, memory: '200Mi', noise: 0.01 },
          }),
        ],
      },
    ]);
  });
  afterAll(async () => {
    await env?.stop();
  });

  it('is refused by the kubelet with its message, read and not sent again', async () => {
    const client = env.clients.get('mem')!;
    const pod = env.sim.cluster('mem').store.list('pods', 'monitoring')[0];
    const read = async () =>
      (await client.core.readNamespacedPod({ name: pod.metadata.name, namespace: 'monitoring' })) as PodLike;
    const now = () => env.sim.clock.now();
    const resizer = new Resizer(clusterResizeApi(client), { now });
    const below = { collector: { requests: { memory: 64 * MI }, limits: { memory: 128 * MI } } };
    const sent = await resizer.resize({ pod: await read(), desired: below }, undefined);
    expect(sent.report).toMatchObject({ kind: 'resized', outcome: 'Requested' });
    env.sim.clock.advance(MINUTE);
    const refused = await read();
    const cond = refused.status?.conditions?.find((c) => c.type === 'PodResizeInProgress');
    expect(cond).toMatchObject({ status: 'True', reason: 'Error' });
    expect(cond?.message).toMatch(
      /^cannot decrease memory limits: attempting to set container "collector" memory limit \(134217728\) below current usage \(\d+\)$/,
    );
    const [r] = memoryLimitRefusals(cond?.message);
    expect(r?.container).toBe('collector');
    expect(r?.usage).toBeGreaterThan(190 * MI);
    // Not actuated: the runtime still has the old limit.
    const running = refused.status?.containerStatuses?.[0]?.resources?.limits?.memory;
    expect(running).toBe('512Mi');

    const seen = resizer.observe(refused, sent.record);
    expect(seen.report).toMatchObject({ kind: 'refused', refusal: 'ActuationError' });
    expect(seen.report?.kind === 'refused' && seen.report.message).toMatch(
      /^the kubelet refused to lower the memory limit below usage \(container "collector": limit 128Mi below 2\d\dMi in use\)/,
    );
    expect(seen.record).toMatchObject({ state: 'rejected', message: cond?.message });
    // The same request is never sent again, even after the back-off.
    env.sim.clock.advance(25 * 60 * MINUTE);
    expect(resizer.mayRequest(refused, below, seen.record)).toMatchObject({ ok: false });

    // A limit above the usage, after the back-off: sent and actuated.
    const above = { collector: { requests: { memory: 240 * MI }, limits: { memory: 480 * MI } } };
    expect(resizer.mayRequest(await read(), above, seen.record)).toMatchObject({ ok: true });
    const again = await resizer.resize({ pod: await read(), desired: above }, seen.record);
    expect(again.report).toMatchObject({ kind: 'resized', outcome: 'Requested' });
    env.sim.clock.advance(MINUTE);
    const done = await read();
    expect(done.status?.conditions?.find((c) => c.type === 'PodResizeInProgress')).toBeUndefined();
    expect(done.status?.containerStatuses?.[0]?.resources?.limits?.memory).toBe('480Mi');
  });
});

describe('node scope keeps a lowered memory limit above usage', () => {
  let env: Env;
  const results: CycleResult[] = [];
  beforeAll(async () => {
    env = await startEnv([
      {
        name: 'cap',
        nodes: 3,
        seed: 43,
        vpaCrd: true,
        daemonSets: [
          agentDaemonSet({
            containers: [
              { name: 'collector', requests: { cpu: '100m', memory: '512Mi' }, limits: { memory: '512Mi' } },
            ],
            load: { cpu: 300, memory: '200Mi', noise: 0.02 },
          }),
        ],
      },
    ]);
    // maxAllowed caps the memory target (and its proportional limit) at 128Mi, below the 200Mi in use:
    // asked for as such, the kubelet would refuse it and leave every pod mid-resize.
    const policies = [{ containerName: 'collector', maxAllowed: { memory: '128Mi' } }];
    env.sim.cluster('cap').store.put(VPA_RESOURCE, vpaObject({ mode: 'InPlace', policies }));
    for (let i = 0; i < 8; i++) results.push(await cycle(env, 'cap', 15 * MINUTE));
  }, 120_000);
  afterAll(async () => {
    await env?.stop();
  });

  it('resizes CPU only, never asks the kubelet for a limit below usage, and counts what it held', () => {
    const reports = results.flatMap((r) => r.resizeReports).map((x) => x.report);
    expect(reports.filter((r) => r.kind === 'refused')).toEqual([]);
    expect(reports.some((r) => r.kind === 'resized' && r.outcome === 'Completed')).toBe(true);
    const held = results.flatMap((r) => r.daemonSets).reduce((n, d) => n + (d.resizes.memoryHeld ?? 0), 0);
    expect(held).toBeGreaterThan(0);
    const pods = env.sim.cluster('cap').store.list('pods', 'monitoring');
    expect(pods.length).toBeGreaterThan(0);
    for (const p of pods) {
      const c = p.spec.containers[0];
      expect(c.resources.limits.memory).toBe('512Mi');
      expect(c.resources.requests.cpu).not.toBe('100m');
      const conds = (p.status.conditions ?? []).map((x: { type: string }) => x.type);
      expect(conds).not.toContain('PodResizeInProgress');
    }
  });
});
