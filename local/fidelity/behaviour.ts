/**
 * The simulator's kubelet, scheduler and DaemonSet controller measured against the real ones: every
 * scenario of scenarios.ts runs on a simulator and on a whole real cluster (local/envtest/cluster.ts:
 * real scheduler, controller-manager and kubemark hollow nodes), with the same nodes, and their
 * decision snapshots are compared. A divergence is either fixed in the simulator or listed in EXCUSED
 * with its reason; the report prints both, per scenario.
 */
import { request } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import type { KubeAssets } from '../envtest/assets.js';
import { type HollowNode, startRealCluster } from '../envtest/cluster.js';
import { startSimulator } from '../sim/index.js';
import type { SimNodeSpec } from '../sim/types.js';
import { type Decisions, decisionsIn, differences } from './decisions.js';
import { type Driver, SCENARIOS, type Scenario } from './scenarios.js';

/** Divergences known and accepted, each with why (matched against `scenario: difference`). */
export const EXCUSED: readonly { match: RegExp; why: string }[] = [
  {
    match: /: events kubelet /,
    why: 'kubemark’s hollow kubelet records no container or resize events (its runtime is fake); a real kubelet records Pulled, Created, Started, Killing and Resize*, as the simulator does',
  },
  {
    match:
      /^init containers and sidecars in the fit: placed: pod fits\.(phase|allocated|running|conditions\.(Initialized|Ready|ContainersReady)):/,
    why: 'a hollow node’s fake runtime never ends a container, so a regular init container never completes there; a real kubelet runs it to completion and starts the pod, as the simulator does',
  },
  {
    match: /^graceful deletion: just deleted: pod p: simulator absent/,
    why: 'graceful deletion is not simulated: a deleted pod goes at once (local/sim/README.md); a real one stays Terminating until its kubelet confirms',
  },
];

export interface ScenarioResult {
  scenario: string;
  snapshots: number;
  divergences: string[];
  excused: { divergence: string; why: string }[];
  error?: string;
}

export async function runBehaviour(assets: KubeAssets, only?: string[]): Promise<ScenarioResult[]> {
  const scenarios = SCENARIOS.filter((s) => !only?.length || only.some((o) => s.name.includes(o)));
  const nodes = scenarios.flatMap((s) => s.nodes);
  const real = await startRealCluster(assets, { nodes, metrics: false });
  const sim = await startSimulator({
    clusters: [{ name: 'fidelity', nodes: 0, kubernetesVersion: real.version.replace(/^v/, '') }],
  });
  try {
    for (const n of nodes) sim.cluster('fidelity').addNode(simNode(n));
    const realRaw = rawVia(real.adminKubeconfig);
    const simRaw = rawVia(sim.kubeconfig(), 'fidelity');
    const results: ScenarioResult[] = [];
    for (const [i, s] of scenarios.entries()) {
      const ns = `fidelity-${i}`;
      const [a, b] = await Promise.all([
        side(s, ns, simRaw, async () => {
          sim.clock.advance(1000);
          await sleep(5);
        }),
        side(s, ns, realRaw, () => sleep(500)),
      ]);
      results.push(compare(s, a, b));
    }
    return results;
  } finally {
    await sim.stop();
    await real.stop();
  }
}

type Snapshots = { snaps: Map<string, Decisions>; error?: string };

async function side(
  s: Scenario,
  ns: string,
  raw: Driver['raw'],
  settle: () => Promise<void>,
): Promise<Snapshots> {
  const snaps = new Map<string, Decisions>();
  try {
    await raw('POST', '/api/v1/namespaces', { metadata: { name: ns } });
    for (let i = 0; i < 100; i++) {
      if ((await raw('GET', `/api/v1/namespaces/${ns}/serviceaccounts/default`)).status === 200) break;
      await settle();
    }
    const driver: Driver = {
      raw,
      settle,
      async snapshot(label, extra = {}) {
        snaps.set(label, { ...(await decisionsIn(raw, ns)), ...extra });
      },
    };
    await s.run(driver, ns);
    return { snaps };
  } catch (e) {
    return { snaps, error: (e as Error).message };
  }
}

/** Not simulated (local/sim/README.md): taken out of the real messages, so what else differs shows. */
const DRA_NOTE = 'no new claims to deallocate, ';
const DRA_WHY =
  'the DynamicResources PostFilter note newer schedulers put before the preemption message is not simulated (local/sim/README.md)';

function compare(s: Scenario, sim: Snapshots, real: Snapshots): ScenarioResult {
  const all: string[] = [];
  const divergences: string[] = [];
  const excused: ScenarioResult['excused'] = [];
  for (const label of new Set([...sim.snaps.keys(), ...real.snaps.keys()])) {
    const text = JSON.stringify(real.snaps.get(label) ?? {});
    const notes = text.split(DRA_NOTE).length - 1;
    for (let i = 0; i < notes; i++)
      excused.push({ divergence: `${label}: "${DRA_NOTE}" in a FitError`, why: DRA_WHY });
    const realSnap = JSON.parse(text.replaceAll(DRA_NOTE, '')) as Decisions;
    for (const d of differences(sim.snaps.get(label) ?? {}, realSnap)) all.push(`${label}: ${d}`);
  }
  for (const d of all) {
    const hit = EXCUSED.find((x) => x.match.test(`${s.name}: ${d}`));
    if (hit) excused.push({ divergence: d, why: hit.why });
    else divergences.push(d);
  }
  const error = [sim.error && `simulator: ${sim.error}`, real.error && `real: ${real.error}`]
    .filter(Boolean)
    .join('; ');
  return { scenario: s.name, snapshots: sim.snaps.size, divergences, excused, ...(error ? { error } : {}) };
}

function simNode(n: HollowNode): SimNodeSpec {
  return {
    name: n.name,
    cpu: String(n.cpus ?? 2),
    memory: String(n.memory ?? '4Gi'),
    pods: n.maxPods,
    labels: n.labels,
    taints: (n.taints ?? []).map((t) => {
      const [kv = '', effect] = t.split(':');
      const [key = '', value] = kv.split('=');
      return { key, value, effect: effect as 'NoSchedule' };
    }),
  };
}

/** Raw JSON requests through a kubeconfig's credentials, TLS verified. */
function rawVia(kubeconfig: string, context?: string): Driver['raw'] {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfig);
  if (context) kc.setCurrentContext(context);
  return async (method, path, body, contentType = 'application/json') => {
    const url = new URL(path, kc.getCurrentCluster()?.server);
    const text = body === undefined ? undefined : JSON.stringify(body);
    const options: Parameters<typeof request>[1] = {
      method,
      headers: {
        Accept: 'application/json',
        ...(text === undefined
          ? {}
          : { 'Content-Type': contentType, 'Content-Length': String(Buffer.byteLength(text)) }),
      },
    };
    await kc.applyToHTTPSOptions(options as never);
    return new Promise((resolve, reject) => {
      const req = request(url, options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          let json: unknown;
          try {
            json = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {}
          resolve({ status: res.statusCode ?? 0, json });
        });
      });
      req.on('error', reject);
      req.end(text);
    });
  };
}
