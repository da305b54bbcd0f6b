/**
 * A whole Kubernetes cluster on loopback: the real etcd and kube-apiserver of apiserver.ts, plus the
 * real kube-controller-manager, kube-scheduler and one kubemark hollow node (`--morph=kubelet`: the real
 * kubelet's code over a fake runtime) per node asked for, each on its own free ports and in its own
 * process group (processes.ts). Flags as `../shared/k8s/README.md` gives them. Ready when every node is
 * Ready and untainted by the node-lifecycle controller and the `default` ServiceAccount exists (the
 * controller-manager runs). metrics.k8s.io, which hollow nodes cannot give, comes from the simulator's
 * metrics-server through the real aggregator (metrics.ts).
 */
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ClusterClient } from '../../shared/k8s/client.js';
import { parseMemory } from '../../shared/kernel/quantity.js';
import type { ManualClock } from '../sim/clock.js';
import { freePort, type RealApiserver, type StartOptions, startRealApiserver } from './apiserver.js';
import type { ClusterBinaries, KubeAssets } from './assets.js';
import { removeKubeletRoots } from './kubelet-litter.js';
import { type ClusterMetrics, serveClusterMetrics } from './metrics.js';
import { launch, terminate } from './processes.js';

export interface HollowNode {
  name: string;
  /** Whole cores (KUBEMARK_NODE_CPUS); default 2. */
  cpus?: number;
  /** Memory capacity, `4Gi` or bytes (KUBEMARK_NODE_MEMORY_BYTES); default 4Gi. */
  memory?: string | number;
  labels?: Record<string, string>;
  /** `key=value:Effect` or `key:Effect`, registered by the kubelet. */
  taints?: string[];
  maxPods?: number;
  /** `name=quantity` extended resources the node advertises. */
  extendedResources?: Record<string, string>;
}

export interface ClusterOptions {
  nodes: HollowNode[];
  /** `1.36` or `1.36.2` (the versions the assets hold a whole control plane for); the newest when unset. */
  version?: string;
  apiserverFlags?: string[];
  /** Serve metrics.k8s.io (default true). */
  metrics?: boolean;
  /** The metrics' clock (default: one at now). */
  metricsClock?: ManualClock;
  /** Seconds for the nodes to become Ready (default 120). */
  readyWithinSeconds?: number;
}

export interface RealCluster {
  api: RealApiserver;
  version: string;
  adminKubeconfig: string;
  /** The admin kubeconfig as a file (for a CLI or a subprocess). */
  kubeconfigPath: string;
  nodeNames: string[];
  metrics?: ClusterMetrics;
  /** The process ids (each a process group) of every component. */
  pids(): number[];
  /** Kills one node's kubelet (a node lost); its Node object stays, as a stopped kubelet's does. */
  stopNode(name: string): Promise<void>;
  stop(): Promise<void>;
}

export async function startRealCluster(assets: KubeAssets, opts: ClusterOptions): Promise<RealCluster> {
  const version = opts.version ?? [...assets.clusters.keys()][0];
  const bins = [...assets.clusters].find(([v]) => v === version || v.startsWith(`${version}.`))?.[1];
  if (!bins)
    throw new Error(
      `no kube-scheduler, kube-controller-manager and kubemark ${version ?? ''} among the assets (versions with all three: ${[...assets.clusters.keys()].join(', ') || 'none'})`,
    );
  checkNodes(opts.nodes);
  const start: StartOptions = { version, flags: opts.apiserverFlags };
  const api = await startRealApiserver(assets, start);
  const children: ChildProcess[] = [];
  const nodes = new Map<string, ChildProcess>();
  // Each hollow node's root directory in /tmp (kubelet-litter.ts), removed once its kubelet is gone.
  const clearLitter = (name: string) => removeKubeletRoots(nodeLog(api.dir, name));
  let metrics: ClusterMetrics | undefined;
  let stopped: Promise<void> | undefined;
  // Once, however often it is called (a test may stop the cluster before afterAll does).
  const stop = () => {
    stopped ??= (async () => {
      await metrics?.stop();
      await Promise.all(children.map((c) => terminate(c)));
      for (const name of nodes.keys()) clearLitter(name);
      await api.stop();
    })();
    return stopped;
  };
  try {
    const kubeconfigPath = join(api.dir, 'admin.kubeconfig');
    writeFileSync(kubeconfigPath, api.adminKubeconfig, { mode: 0o600 });
    children.push(await controllerManager(bins, api, kubeconfigPath));
    children.push(await scheduler(bins, api.dir, kubeconfigPath));
    for (const node of opts.nodes) {
      const child = await hollowNode(bins, api.dir, kubeconfigPath, node);
      children.push(child);
      nodes.set(node.name, child);
    }
    const client = ClusterClient.fromKubeconfig(api.adminKubeconfig, { cluster: 'envtest' });
    try {
      await waitClusterReady(client, opts, children, api.dir);
    } finally {
      await client.close();
    }
    if (opts.metrics !== false)
      metrics = await serveClusterMetrics(api.adminKubeconfig, { clock: opts.metricsClock });
    return {
      api,
      version: api.version,
      adminKubeconfig: api.adminKubeconfig,
      kubeconfigPath,
      nodeNames: opts.nodes.map((n) => n.name),
      metrics,
      pids: () => [...api.pids, ...children.flatMap((c) => (c.pid === undefined ? [] : [c.pid]))],
      async stopNode(name) {
        const child = nodes.get(name);
        if (!child) throw new Error(`no hollow node ${name} (nodes: ${[...nodes.keys()].join(', ')})`);
        await terminate(child);
        clearLitter(name);
      },
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}

function checkNodes(nodes: HollowNode[]): void {
  const names = new Set<string>();
  for (const n of nodes) {
    if (!/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(n.name))
      throw new Error(`hollow node name ${JSON.stringify(n.name)} is not a DNS subdomain`);
    if (names.has(n.name)) throw new Error(`hollow node ${n.name} is listed twice`);
    names.add(n.name);
    if (n.cpus !== undefined && (!Number.isInteger(n.cpus) || n.cpus < 1))
      throw new Error(`hollow node ${n.name}: cpus must be a whole number of cores >= 1, not ${n.cpus}`);
  }
}

async function controllerManager(
  bins: ClusterBinaries,
  api: RealApiserver,
  kc: string,
): Promise<ChildProcess> {
  return launch(
    bins.controllerManager,
    [
      ...componentFlags(kc, await freePort()),
      `--service-account-private-key-file=${api.pki.saKey}`,
      `--root-ca-file=${api.pki.ca}`,
      '--use-service-account-credentials=true',
      // No cloud, no pod CIDRs, no CSR signing (the harness's CA key stays with the harness).
      '--controllers=*,-nodeipam,-service-lb-controller,-cloud-node-lifecycle,-route,-csrsigning',
    ],
    join(api.dir, 'controller-manager.log'),
  );
}

async function scheduler(bins: ClusterBinaries, dir: string, kc: string): Promise<ChildProcess> {
  return launch(bins.scheduler, componentFlags(kc, await freePort()), join(dir, 'scheduler.log'));
}

function componentFlags(kc: string, port: number): string[] {
  return [
    `--kubeconfig=${kc}`,
    `--authentication-kubeconfig=${kc}`,
    `--authorization-kubeconfig=${kc}`,
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    '--leader-elect=false',
  ];
}

async function hollowNode(
  bins: ClusterBinaries,
  dir: string,
  kc: string,
  n: HollowNode,
): Promise<ChildProcess> {
  const list = (r: Record<string, string> | undefined) =>
    Object.entries(r ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
  const args = [
    '--morph=kubelet',
    `--name=${n.name}`,
    `--kubeconfig=${kc}`,
    `--kubelet-port=${await freePort()}`,
    '--kubelet-read-only-port=0',
    '--use-host-image-service=false',
  ];
  if (n.labels) args.push(`--node-labels=${list(n.labels)}`);
  if (n.taints?.length) args.push(`--register-with-taints=${n.taints.join(',')}`);
  if (n.maxPods !== undefined) args.push(`--max-pods=${n.maxPods}`);
  if (n.extendedResources) args.push(`--extended-resources=${list(n.extendedResources)}`);
  const memory = parseMemory(n.memory ?? '4Gi');
  return launch(bins.kubemark, args, nodeLog(dir, n.name), {
    KUBEMARK_NODE_CPUS: String(n.cpus ?? 2),
    KUBEMARK_NODE_MEMORY_BYTES: String(memory),
  });
}

async function waitClusterReady(
  client: ClusterClient,
  opts: ClusterOptions,
  children: ChildProcess[],
  dir: string,
): Promise<void> {
  const want = new Set(opts.nodes.map((n) => n.name));
  const seconds = opts.readyWithinSeconds ?? 120;
  let last = 'no node registered yet';
  for (let i = 0; i < seconds * 4; i++) {
    const dead = children.find((c) => c.exitCode !== null || c.signalCode !== null);
    if (dead)
      throw new Error(
        `a cluster component exited (${dead.exitCode ?? dead.signalCode}) before the cluster was ready (logs in ${dir})`,
      );
    const nodes = (await client.core.listNode()).items;
    const notReady = [...want].filter((name) => {
      const node = nodes.find((x) => x.metadata?.name === name);
      const ready = node?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
      const notReadyTaint = node?.spec?.taints?.some((t) => t.key.startsWith('node.kubernetes.io/'));
      return !ready || notReadyTaint;
    });
    const account = await client.core
      .readNamespacedServiceAccount({ name: 'default', namespace: 'default' })
      .then(
        () => true,
        () => false,
      );
    if (notReady.length === 0 && account) return;
    last = notReady.length
      ? `not Ready or still tainted: ${notReady.join(', ')}`
      : 'no default ServiceAccount yet (controller-manager)';
    await sleep(250);
  }
  throw new Error(`the cluster was not ready in ${seconds} s (${last}; logs in ${dir})`);
}

/** A hollow node's log, in the cluster's directory. */
export const nodeLog = (dir: string, node: string): string => join(dir, `node-${node}.log`);
