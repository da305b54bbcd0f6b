/**
 * Canary first and revert on harm, over the simulator (issue 30, parts 1, 2 and 5): a downsize goes to
 * the canary share of a DaemonSet's pods first, the rest waits for the soak on the cycle's clock; an
 * OOM kill after a downsize reverts that node's pod to its previous size in place, holds the
 * DaemonSet's downsizes for the back-off, and is said on the VPA (condition, Event).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalRuntime } from '../../local/runtime.js';
import { startSimulator } from '../../local/sim/index.js';
import { resetClusterConnector } from '../../shared/fleet/cluster-access.js';
import { ClusterClient } from '../../shared/k8s/client.js';
import type { CycleResult } from '../../shared/nodescope/cycle.js';
import {
  CANARY_ANNOTATION,
  CANARY_SOAK_ANNOTATION,
  REVERT_WINDOW_ANNOTATION,
} from '../../shared/nodescope/rollout-policy.js';
import { REVERT_CONDITION, REVERT_EVENT_REASON } from '../../shared/nodescope/rollout-publish.js';
import { DynamoNodeScopeStore } from '../../shared/nodescope/store-dynamo.js';
import { runFleetscopeInProcess } from '../support/cli.js';
import {
  agentDaemonSet,
  cycle,
  type Env,
  HOUR,
  MINUTE,
  registerFileCluster,
  START,
  startEnv,
  VPA_RESOURCE,
  vpaObject,
} from './helpers.js';

const NODES = 10;
/** Usage far below the template's requests on every node: every pod is due for a downsize. */
const LOW_LOAD = { cpu: 20, memory: '40Mi', perNode: 'uniform' as const, noise: 0.02 };

function vpaWith(name: string, annotations: Record<string, string>) {
  const v = vpaObject({
    name,
    mode: 'InPlace',
    target: { apiVersion: 'apps/v1', kind: 'DaemonSet', name },
  }) as { metadata: { annotations: Record<string, string> } };
  v.metadata.annotations = { ...v.metadata.annotations, ...annotations };
  return v;
}

const outcomeOf = (r: CycleResult, ds: string) => r.daemonSets.find((o) => o.name === ds);
const downsizedNodes = (r: CycleResult, ds: string) =>
  r.resizeReports
    .filter((x) => x.owner.name === ds && x.report.kind === 'resized' && x.report.outcome === 'Requested')
    .map((x) => x.report.node ?? '')
    .sort();

describe('canary first', () => {
  let env: Env;
  const results: CycleResult[] = [];
  beforeAll(async () => {
    env = await startEnv([
      {
        name: 'canary',
        nodes: NODES,
        seed: 4,
        vpaCrd: true,
        daemonSets: [agentDaemonSet({ name: 'agent', load: LOW_LOAD })],
      },
    ]);
    env.sim
      .cluster('canary')
      .store.put(
        VPA_RESOURCE,
        vpaWith('agent', { [CANARY_ANNOTATION]: '10%', [CANARY_SOAK_ANNOTATION]: '30m' }),
      );
  }, 60_000);
  afterAll(async () => env?.stop());

  it('sends the first downsize to one node in ten, holds the rest through the soak, then sends it', async () => {
    let first = -1;
    for (let i = 0; i < 40 && first < 0; i++) {
      const r = await cycle(env, 'canary');
      results.push(r);
      if (downsizedNodes(r, 'agent').length > 0) first = results.length - 1;
    }
    expect(first).toBeGreaterThanOrEqual(0);
    const wave = results[first] as CycleResult;
    const canaries = downsizedNodes(wave, 'agent');
    expect(canaries).toHaveLength(1);
    expect(outcomeOf(wave, 'agent')?.rollout?.canariesSent).toBe(1);
    const held = outcomeOf(wave, 'agent')?.rollout?.heldForCanary ?? 0;
    expect(held).toBeGreaterThan(NODES / 2);
    // Five more cycles (25 minutes): still within the soak, nothing else is downsized.
    for (let i = 0; i < 5; i++) {
      const r = await cycle(env, 'canary');
      expect(downsizedNodes(r, 'agent')).toEqual([]);
      expect(outcomeOf(r, 'agent')?.rollout?.heldForSoak).toBeGreaterThanOrEqual(held);
      expect(outcomeOf(r, 'agent')?.rollout?.paths).toContain('soak-waited');
    }
    // 30 minutes after the canary: the rest.
    const rest = await cycle(env, 'canary');
    expect(outcomeOf(rest, 'agent')?.rollout?.paths).toContain('rest-after-soak');
    const sent = downsizedNodes(rest, 'agent');
    expect(sent.length).toBeGreaterThanOrEqual(held);
    expect(sent).not.toContain(canaries[0]);
  }, 240_000);
});

describe('revert on harm', () => {
  let env: Env;
  let dir: string;
  // The OOM kill comes on every node; only the canary was downsized, so only it is reverted.
  const OOM_AT = START + 3 * HOUR + 2 * MINUTE;
  beforeAll(async () => {
    // On a state directory, so that `recommendations list` reads what the cycles stored.
    dir = await mkdtemp(join(tmpdir(), 'fleetscope-revert-'));
    const sim = await startSimulator({
      clusters: [
        {
          name: 'revert',
          nodes: NODES,
          seed: 5,
          vpaCrd: true,
          daemonSets: [
            agentDaemonSet({
              name: 'agent',
              load: { ...LOW_LOAD, oomKills: [{ atMs: OOM_AT, containers: ['collector'] }] },
            }),
          ],
        },
      ],
      now: START,
    });
    const kubeconfig = join(dir, 'kubeconfig.yaml');
    await sim.writeKubeconfig(kubeconfig);
    const runtime = await startLocalRuntime({ stateDir: dir });
    await registerFileCluster(runtime, 'revert', kubeconfig, new Date(START));
    const client = ClusterClient.fromKubeconfig(sim.kubeconfig(), { cluster: 'revert', context: 'revert' });
    env = {
      sim,
      runtime,
      store: new DynamoNodeScopeStore(runtime.db, runtime.table),
      clients: new Map([['revert', client]]),
      async stop() {
        await client.close();
        await runtime.stop();
      },
    };
    sim.cluster('revert').store.put(
      VPA_RESOURCE,
      vpaWith('agent', {
        [CANARY_ANNOTATION]: '10%',
        [CANARY_SOAK_ANNOTATION]: '6h',
        [REVERT_WINDOW_ANNOTATION]: '4h',
      }),
    );
  }, 60_000);
  afterAll(async () => {
    await resetClusterConnector();
    await env?.sim.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const podOn = (node: string) =>
    env.sim
      .cluster('revert')
      .store.list('pods', 'monitoring')
      .find((p) => p.spec.nodeName === node);
  const collector = (p: { spec: { containers: { name: string; resources: unknown }[] } }) =>
    p.spec.containers.find((c) => c.name === 'collector')?.resources;

  it('reverts the OOM-killed canary in place, holds downsizes, and says so on the VPA', async () => {
    let canary = '';
    let before: unknown;
    let uid = '';
    while (env.sim.clock.now() < OOM_AT - 5 * MINUTE) {
      const r = await cycle(env, 'revert');
      const sent = downsizedNodes(r, 'agent');
      if (sent.length > 0 && !canary) {
        expect(sent).toHaveLength(1);
        canary = sent[0] as string;
        const report = r.resizeReports.find((x) => x.report.node === canary)?.report;
        before = report?.kind === 'resized' ? report.containers : undefined;
        uid = podOn(canary)?.metadata.uid;
      }
    }
    expect(canary).not.toBe('');
    const downsized = collector(podOn(canary));
    let revert: CycleResult | undefined;
    for (let i = 0; i < 4 && !revert; i++) {
      const r = await cycle(env, 'revert');
      if ((outcomeOf(r, 'agent')?.rollout?.reverts.length ?? 0) > 0) revert = r;
    }
    expect(revert).toBeDefined();
    const o = outcomeOf(revert as CycleResult, 'agent')?.rollout;
    expect(o?.reverts).toHaveLength(1);
    expect(o?.reverts[0]).toMatchObject({ node: canary, reason: 'OOMKilled', sent: true });
    expect(o?.paths).toContain('revert-OOMKilled');
    expect(o?.hold).toMatchObject({ consecutive: 1, node: canary });
    // In place: the same pod, back at the size it had before the downsize.
    const pod = podOn(canary);
    expect(pod.metadata.uid).toBe(uid);
    const was = (before as { name: string; before: { requests?: { memory?: number } } }[]).find(
      (c) => c.name === 'collector',
    )?.before;
    expect(collector(pod)).not.toEqual(downsized);
    expect(pod.spec.containers[0].resources.requests.memory).toBe(
      `${(was?.requests?.memory ?? 0) / 2 ** 20}Mi`,
    );
    const vpa = env.sim.cluster('revert').store.get(VPA_RESOURCE, 'agent', 'monitoring');
    const cond = vpa.status.conditions.find((c: { type: string }) => c.type === REVERT_CONDITION);
    expect(cond).toMatchObject({ status: 'True', reason: 'RevertedOnHarm' });
    // The recommendation condition is still there beside it.
    expect(vpa.status.conditions.map((c: { type: string }) => c.type)).toContain('RecommendationProvided');
    const events = env.sim
      .cluster('revert')
      .store.list('events', 'monitoring')
      .filter((e) => e.reason === REVERT_EVENT_REASON);
    expect(events).toHaveLength(1);
    expect(events[0].message).toContain(`node ${canary}: OOMKilled`);
    expect(events[0].message).toMatch(/request \d+Mi → \d+Mi/);
    // The node's history says it was a revert, and why (`recommendations history`).
    const history = (await env.store.listHistory('revert', 'monitoring/agent')).find(
      (h) => h.node === canary,
    );
    expect(history?.entries.map((e) => e.outcome)).toContain('reverted');
    expect(history?.entries.find((e) => e.outcome === 'reverted')?.reason).toMatch(/^OOMKilled: /);

    // The hold: an hour of no downsize at all, the other nodes still at the template's size.
    for (let t = 0; t < 55 * MINUTE; t += 5 * MINUTE) {
      const r = await cycle(env, 'revert');
      expect(downsizedNodes(r, 'agent')).toEqual([]);
      expect(outcomeOf(r, 'agent')?.rollout?.paths).toContain('held-on-backoff');
    }
    // After it: a new wave (canaries again); the reverted node never goes back to the size it left.
    let wave: CycleResult | undefined;
    for (let i = 0; i < 4 && !wave; i++) {
      const r = await cycle(env, 'revert');
      if (outcomeOf(r, 'agent')?.rollout?.paths.includes('canary-sent')) wave = r;
    }
    expect(wave).toBeDefined();
    expect(collector(podOn(canary))).not.toEqual(downsized);
    const after = env.sim.cluster('revert').store.get(VPA_RESOURCE, 'agent', 'monitoring');
    expect(after.status.conditions.find((c: { type: string }) => c.type === REVERT_CONDITION)).toMatchObject({
      status: 'False',
      reason: 'NotHeld',
    });

    // recommendations list: the ROLLOUT column, and the revert with why in -o json.
    await env.stop();
    const table = await runFleetscopeInProcess(['recommendations', 'list', '--state-dir', dir]);
    expect(table.code).toBe(0);
    expect(table.out).toMatch(/ROLLOUT/);
    expect(table.out).toMatch(/canary 1 node, started \S+ ago, 1 revert/);
    const json = await runFleetscopeInProcess(['recommendations', 'list', '-o', 'json', '--state-dir', dir]);
    const listed = JSON.parse(json.out);
    const items = Array.isArray(listed) ? listed : listed.items;
    expect(items[0].rollout.reverts).toEqual([
      expect.objectContaining({ node: canary, reason: 'OOMKilled', sizeChange: expect.stringMatching(/→/) }),
    ]);
  }, 300_000);
});
