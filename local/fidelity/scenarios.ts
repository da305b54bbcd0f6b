/**
 * Behaviour scenarios for `npm run fidelity`: what the kubelet, scheduler and DaemonSet controller
 * decide, run the same way on the simulator and on a whole real cluster (hollow nodes), each scenario in
 * its own namespace on its own nodes. A scenario acts through a Driver and takes snapshots of the
 * decisions (decisions.ts); the runner (behaviour.ts) compares the two sides' snapshots.
 */

import type { HollowNode } from '../envtest/cluster.js';
import type { J } from './compare.js';

export interface Driver {
  /** One HTTP request as the admin; JSON answers parsed. */
  raw(
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
  ): Promise<{ status: number; json?: J }>;
  /** Lets the components act: simulated time on the simulator, real time on the cluster. */
  settle(): Promise<void>;
  /** Records what the components decided so far in this namespace, under `label`. */
  snapshot(label: string, extra?: Record<string, unknown>): Promise<void>;
}

export interface Scenario {
  name: string;
  /** Nodes of this scenario only (the other scenarios' pods never land on them). */
  nodes: HollowNode[];
  run(d: Driver, ns: string): Promise<void>;
}

const PAUSE = 'registry.k8s.io/pause:3.10';
const pods = (ns: string) => `/api/v1/namespaces/${ns}/pods`;

function pod(
  name: string,
  node: string | Record<string, string>,
  spec: Record<string, unknown> = {},
  cpu = '100m',
) {
  return {
    metadata: { name },
    spec: {
      ...(typeof node === 'string'
        ? { nodeSelector: { 'kubernetes.io/hostname': node } }
        : { nodeSelector: node }),
      containers: [{ name: 'c', image: PAUSE, resources: { requests: { cpu, memory: '64Mi' } } }],
      ...spec,
    },
  };
}

/** Creates, then settles until `ok` holds for the pod's JSON (at most `rounds` times). */
async function until(d: Driver, ns: string, name: string, ok: (p: J) => boolean, rounds = 40): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    const r = await d.raw('GET', `${pods(ns)}/${name}`);
    if (ok(r.status === 200 ? r.json : undefined)) return;
    await d.settle();
  }
}

const running = (p: J) => p?.status?.phase === 'Running';
const conditioned = (type: string) => (p: J) => (p?.status?.conditions ?? []).some((c: J) => c.type === type);
const resizeDone = (p: J) =>
  p?.status?.containerStatuses?.[0]?.resources?.requests?.cpu ===
    p?.spec?.containers?.[0]?.resources?.requests?.cpu &&
  !conditioned('PodResizeInProgress')(p) &&
  !conditioned('PodResizePending')(p);

async function resize(d: Driver, ns: string, name: string, cpu: string): Promise<number> {
  const body = { spec: { containers: [{ name: 'c', resources: { requests: { cpu } } }] } };
  return (await d.raw('PATCH', `${pods(ns)}/${name}/resize`, body, 'application/strategic-merge-patch+json'))
    .status;
}

const node = (name: string, cpus: number, extra: Partial<HollowNode> = {}): HollowNode => ({
  name,
  cpus,
  memory: '2Gi',
  ...extra,
});

export const SCENARIOS: Scenario[] = [
  {
    name: 'resize within the room',
    nodes: [node('fid-within', 2)],
    async run(d, ns) {
      await d.raw('POST', pods(ns), pod('p', 'fid-within'));
      await until(d, ns, 'p', running);
      const status = await resize(d, ns, 'p', '500m');
      await until(d, ns, 'p', resizeDone);
      await d.snapshot('after the resize', { resizeStatus: status });
    },
  },
  {
    name: 'resize beyond the room, then room freed',
    nodes: [node('fid-beyond', 2)],
    async run(d, ns) {
      await d.raw('POST', pods(ns), pod('filler', 'fid-beyond', {}, '1500m'));
      await d.raw('POST', pods(ns), pod('p', 'fid-beyond'));
      await until(d, ns, 'p', running);
      await until(d, ns, 'filler', running);
      const status = await resize(d, ns, 'p', '800m');
      await until(d, ns, 'p', conditioned('PodResizePending'));
      await d.snapshot('deferred', { resizeStatus: status });
      await d.raw('DELETE', `${pods(ns)}/filler`, { gracePeriodSeconds: 0 });
      await until(d, ns, 'p', resizeDone);
      await d.snapshot('room freed');
    },
  },
  {
    name: 'resize far beyond the node',
    nodes: [node('fid-far', 2)],
    async run(d, ns) {
      await d.raw('POST', pods(ns), pod('p', 'fid-far'));
      await until(d, ns, 'p', running);
      const status = await resize(d, ns, 'p', '3');
      for (let i = 0; i < 5; i++) await d.settle();
      await d.snapshot('after the resize', { resizeStatus: status });
    },
  },
  {
    name: 'taints and tolerations',
    nodes: [
      node('fid-taint', 1, { labels: { 'fidelity/scenario': 'taint' }, taints: ['dedicated=x:NoSchedule'] }),
    ],
    async run(d, ns) {
      const sel = { 'fidelity/scenario': 'taint' };
      await d.raw('POST', pods(ns), pod('intolerant', sel));
      const tolerations = [{ key: 'dedicated', operator: 'Equal', value: 'x', effect: 'NoSchedule' }];
      await d.raw('POST', pods(ns), pod('tolerant', sel, { tolerations }));
      await until(d, ns, 'tolerant', running);
      await until(d, ns, 'intolerant', conditioned('PodScheduled'));
      await d.snapshot('placed');
    },
  },
  {
    name: 'priority and preemption',
    nodes: [node('fid-preempt', 1, { labels: { 'fidelity/scenario': 'preempt' } })],
    async run(d, ns) {
      for (const [name, value] of [
        [`${ns}-low`, 100],
        [`${ns}-high`, 1000],
      ] as const)
        await d.raw('POST', '/apis/scheduling.k8s.io/v1/priorityclasses', { metadata: { name }, value });
      const sel = { 'fidelity/scenario': 'preempt' };
      await d.raw('POST', pods(ns), pod('low', sel, { priorityClassName: `${ns}-low` }, '800m'));
      await until(d, ns, 'low', running);
      await d.raw('POST', pods(ns), pod('high', sel, { priorityClassName: `${ns}-high` }, '800m'));
      await until(d, ns, 'high', running);
      await until(d, ns, 'low', (p) => p === undefined, 20);
      await d.snapshot('preempted');
    },
  },
  {
    name: 'DaemonSet pods pinned to their nodes',
    nodes: [
      node('fid-ds-a', 1, { labels: { 'fidelity/scenario': 'ds' } }),
      node('fid-ds-b', 1, { labels: { 'fidelity/scenario': 'ds' }, taints: ['dedicated=x:NoSchedule'] }),
    ],
    async run(d, ns) {
      const ds = (name: string, spec: Record<string, unknown>) => ({
        metadata: { name },
        spec: {
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name } },
            spec: {
              nodeSelector: { 'fidelity/scenario': 'ds' },
              containers: [{ name: 'c', image: PAUSE, resources: { requests: { cpu: '100m' } } }],
              ...spec,
            },
          },
        },
      });
      await d.raw('POST', `/apis/apps/v1/namespaces/${ns}/daemonsets`, ds('plain', {}));
      const tolerations = [{ operator: 'Exists' }];
      await d.raw('POST', `/apis/apps/v1/namespaces/${ns}/daemonsets`, ds('tolerant', { tolerations }));
      for (let i = 0; i < 40; i++) {
        const list = (await d.raw('GET', pods(ns))).json?.items ?? [];
        if (list.length >= 3 && list.every(running)) break;
        await d.settle();
      }
      await d.snapshot('placed');
    },
  },
  {
    name: 'init containers and sidecars in the fit',
    nodes: [node('fid-init', 1, { labels: { 'fidelity/scenario': 'init' } })],
    async run(d, ns) {
      const sel = { 'fidelity/scenario': 'init' };
      const initSpec = (initCpu: string) => ({
        initContainers: [
          {
            name: 'sidecar',
            image: PAUSE,
            restartPolicy: 'Always',
            resources: { requests: { cpu: '200m' } },
          },
          { name: 'init', image: PAUSE, resources: { requests: { cpu: initCpu } } },
        ],
      });
      // Effective request: max(sidecar + init, sidecar + main): 1050m does not fit 1 core, 900m does.
      await d.raw('POST', pods(ns), pod('too-big', sel, initSpec('850m')));
      await d.raw('POST', pods(ns), pod('fits', sel, initSpec('700m')));
      await until(d, ns, 'fits', running);
      await until(d, ns, 'too-big', conditioned('PodScheduled'));
      await d.snapshot('placed');
    },
  },
  {
    name: 'graceful deletion',
    nodes: [node('fid-grace', 1)],
    async run(d, ns) {
      await d.raw('POST', pods(ns), pod('p', 'fid-grace', { terminationGracePeriodSeconds: 30 }));
      await until(d, ns, 'p', running);
      await d.raw('DELETE', `${pods(ns)}/p`);
      await d.snapshot('just deleted');
      await until(d, ns, 'p', (p) => p === undefined);
      await d.snapshot('after the grace period');
    },
  },
];
