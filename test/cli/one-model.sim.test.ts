/**
 * One set of numbers: for the same node-scoped DaemonSet at the same moment, `recommendations list`,
 * `recommendations get` and the report show the same per-node targets, the same DaemonSet-wide target
 * and the same requests today. Requests today are what the pods request now (a pod resized in place
 * counts at its new size), not what the DaemonSet's template says. Each view says as of when.
 *
 * The fleet runs three cycles, so that the stored fold lags the live state (log entries after the base)
 * and Auto mode has resized pods in place: both dangerous paths are asserted to have been hit.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoFleetSpecs, demoVpas } from '../../local/demo-fleet.js';
import { type Simulator, startSimulator } from '../../local/sim/index.js';
import { parseCpu, parseMemory } from '../../shared/kernel/quantity.js';
import { setNodeScopeClock } from '../../shared/nodescope/clock.js';
import type { ReportModel } from '../../shared/report/model.js';
import { runFleetscopeInProcess } from '../support/cli.js';

// biome-ignore lint/suspicious/noExplicitAny: CLI documents, read field by field
type Doc = any;

const C = 'demo-1';
const NS = 'monitoring';
const NAME = 'node-agent';
let sim: Simulator;
let dir: string;
let stateDir: string;

async function cli(...args: string[]): Promise<string> {
  const r = await runFleetscopeInProcess(args, { stateDir });
  expect(r.code, `${args.join(' ')}: ${r.err}`).toBe(0);
  return r.out;
}
const json = async (...args: string[]): Promise<Doc> => JSON.parse(await cli(...args, '-o', 'json'));

/** What each of the DaemonSet's pods requests now: status (what runs) if reported, else its spec. */
function podRequests(): Map<string, { cpu: number; memory: number }> {
  const out = new Map<string, { cpu: number; memory: number }>();
  for (const pod of sim.cluster(C).store.list('pods', NS) as Doc[]) {
    if (pod.metadata.ownerReferences?.[0]?.name !== NAME || !pod.spec.nodeName) continue;
    let cpu = 0;
    let memory = 0;
    for (const c of pod.spec.containers) {
      const status = pod.status?.containerStatuses?.find((s: Doc) => s.name === c.name);
      const req = status?.resources?.requests ?? c.resources?.requests ?? {};
      cpu += req.cpu ? parseCpu(req.cpu) : 0;
      memory += req.memory ? parseMemory(req.memory) : 0;
    }
    out.set(pod.spec.nodeName, { cpu, memory });
  }
  return out;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fleetscope-one-model-'));
  stateDir = join(dir, 'state');
  const kubeconfig = join(dir, 'kubeconfig.yaml');
  sim = await startSimulator({ clusters: demoFleetSpecs(1, 4) });
  setNodeScopeClock(() => sim.clock.now());
  for (const vpa of demoVpas(0)) sim.cluster(C).store.put('verticalpodautoscalers.autoscaling.k8s.io', vpa);
  await sim.writeKubeconfig(kubeconfig);
  await cli('cluster', 'register', '--name', C, '--kubeconfig', kubeconfig, '--context', C);
  const cycle = async () => {
    sim.clock.advance(5 * 60_000);
    await cli('run', '--once', '--capability', 'cycle');
  };
  for (let i = 0; i < 3; i++) await cycle();
  // A fold falls due once an hour at a phase of its own: when the last cycle folded, the next one (five
  // minutes on) appends a log entry, so the stored fold lags the live figures, the path that disagreed.
  const get = ['recommendations', 'get', '--cluster', C, '--daemonset', `${NS}/${NAME}`, '-o', 'json'];
  const stored = JSON.parse(await cli(...get, '--stored'));
  if (stored.asOf === JSON.parse(await cli(...get)).asOf) await cycle();
}, 180_000);
afterAll(async () => {
  setNodeScopeClock();
  await sim?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('one set of numbers for a node-scoped DaemonSet', () => {
  it('list, get and the report agree, and requests today are what the pods request now', async () => {
    const report = (await json('report')) as ReportModel;
    const ds = report.nodescope.daemonSets.find((d) => d.cluster === C && d.name === NAME);
    expect(ds).toBeDefined();
    const list = ((await json('recommendations', 'list', '--cluster', C)) as Doc[]).find(
      (h) => h.name === NAME,
    );
    const get = await json('recommendations', 'get', '--cluster', C, '--daemonset', `${NS}/${NAME}`);

    // The same moment: one "as of" for all three.
    expect(list.asOf).toBe(get.asOf);
    expect(ds?.asOf).toBe(get.asOf);

    // Per-node targets and the DaemonSet-wide target.
    const perNode = Object.values(get.nodes as Record<string, Doc>).reduce(
      (s, n) =>
        s +
        Object.values(n.containers as Record<string, Doc>).reduce((t, c) => t + c.target.cpuMillicores, 0),
      0,
    );
    expect(list.perNode.cpuMillicores).toBe(ds?.perNodeTotal.cpu);
    expect(perNode).toBe(ds?.perNodeTotal.cpu);
    expect(list.dsWide.cpuMillicores).toBe(ds?.dsWideTotal.cpu);
    expect(list.perNode.memoryBytes).toBe(ds?.perNodeTotal.memory);

    // Requests today: the pods' own requests, node by node, in every view.
    const pods = podRequests();
    expect(pods.size).toBeGreaterThan(0);
    const template = 200; // the demo DaemonSet's template asks for 200m
    const resized = [...pods.values()].filter((p) => p.cpu !== template);
    expect(
      resized.length,
      'no pod was resized in place: the test cannot tell pods from template',
    ).toBeGreaterThan(0);
    const podTotal = [...pods.values()].reduce((s, p) => s + p.cpu, 0);
    expect(ds?.requestsTotal.cpu).toBe(podTotal);
    expect(list.requestsNow.cpuMillicores).toBe(podTotal);
    for (const [node, p] of pods) {
      expect(get.nodes[node]?.requests?.cpuMillicores, node).toBe(p.cpu);
      expect(ds?.nodes.find((n) => n.node === node)?.requests.cpu, node).toBe(p.cpu);
    }
    const cluster = report.requests.clusters.find((c) => c.cluster === C);
    expect(cluster?.current.cpu).toBe(
      report.nodescope.daemonSets.filter((d) => d.cluster === C).reduce((s, d) => s + d.requestsTotal.cpu, 0),
    );
  });

  it('the tables say as of when, and the stored fold lags the live figures (the path that disagreed)', async () => {
    const get = await cli('recommendations', 'get', '--cluster', C, '--daemonset', `${NS}/${NAME}`);
    expect(get.split('\n')[0]).toMatch(/as of \d{4}-\d\d-\d\dT\S+Z \((.+ ago|in .+)\)/);
    const list = await cli('recommendations', 'list', '--cluster', C);
    expect(list).toMatch(/AS OF/);
    const stored = await json(
      'recommendations',
      'get',
      '--cluster',
      C,
      '--daemonset',
      `${NS}/${NAME}`,
      '--stored',
    );
    const live = await json('recommendations', 'get', '--cluster', C, '--daemonset', `${NS}/${NAME}`);
    expect(stored.mode).toBe('stored');
    expect(live.mode).toBe('live');
    expect(stored.asOf < live.asOf, 'the fold is as recent as the last cycle: nothing lagged').toBe(true);
  });
});
