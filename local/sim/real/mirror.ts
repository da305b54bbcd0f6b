/**
 * Reads a real apiserver's objects into the simulated cluster's store, which the simulator's
 * controllers, kubelets and scheduler read as their cache: each list is compared with what was read
 * before (by the server's resourceVersion) and only what changed is stored, so the controllers see the
 * same ADDED/MODIFIED/DELETED events they see in process. Two duties of components a bare apiserver
 * lacks are done here too: a pod being deleted from a simulated node is confirmed gone (the kubelet's
 * final delete), and a deleted namespace is emptied and finalized (the namespace controller).
 */
import type { ClusterState } from '../cluster.js';
import type { Json } from '../json.js';
import { objectKey } from '../rest.js';
import { type RealApi, restPath } from './api.js';
import type { RemoteVersions } from './writes.js';

/** The label on the Node objects this process simulates; other nodes are not its business. */
export const SIMULATED_NODE_LABEL = 'sim.fleetscope.io/simulated-node';

interface Mirrored {
  collection: string;
  query?: Record<string, string>;
}

/** Read in this order, so that a namespace's defaults are known before its ADDED event is handled. */
const MIRRORED: Mirrored[] = [
  { collection: 'serviceaccounts', query: { fieldSelector: 'metadata.name=default' } },
  { collection: 'configmaps', query: { fieldSelector: 'metadata.name=kube-root-ca.crt' } },
  { collection: 'priorityclasses.scheduling.k8s.io' },
  { collection: 'namespaces' },
  { collection: 'nodes', query: { labelSelector: `${SIMULATED_NODE_LABEL}=true` } },
  { collection: 'daemonsets.apps' },
  { collection: 'pods' },
];

/** What the namespace controller deletes before it finalizes (the types this project's tests create). */
const NAMESPACED_CONTENT = [
  'pods',
  'daemonsets.apps',
  'serviceaccounts',
  'configmaps',
  'events',
  'services',
  'endpoints',
  'secrets',
];

export class ApiMirror {
  private readonly finalizing = new Set<string>();

  constructor(
    private readonly cluster: ClusterState,
    private readonly api: RealApi,
    private readonly versions: RemoteVersions,
    /** Objects with a write still queued: the cache keeps them until the server answers it. */
    private readonly queued: (collection: string, key: string) => boolean,
    /** 'all': every node, and no kubelet or namespace-controller duty (real ones run; only metrics here). */
    private readonly nodes: 'simulated' | 'all' = 'simulated',
  ) {}

  /** Stores an object the server returned (its resourceVersion kept aside: the store stamps its own). */
  remember(collection: string, key: string, obj: Json): void {
    this.versions.set(collection, key, obj?.metadata?.resourceVersion);
    this.cluster.store.put(collection, key, obj);
  }

  /** One read of every mirrored collection; true when anything changed. */
  async read(): Promise<boolean> {
    let changed = false;
    for (const m of MIRRORED)
      if (
        await this.readCollection(
          this.nodes === 'all' && m.collection === 'nodes' ? { collection: 'nodes' } : m,
        )
      )
        changed = true;
    if (this.nodes === 'all') return changed;
    await this.confirmPodDeletions();
    await this.finalizeNamespaces();
    return changed;
  }

  private async readCollection(m: Mirrored): Promise<boolean> {
    const def = this.cluster.lookup(m.collection);
    const items = await this.api.list(restPath(def), m.query);
    const store = this.cluster.store;
    const seen = new Set<string>();
    let changed = false;
    for (const item of items) {
      const key = objectKey(def.namespaced ? item.metadata.namespace : undefined, item.metadata.name);
      seen.add(key);
      if (this.queued(m.collection, key)) continue;
      if (
        this.versions.get(m.collection, key) === item.metadata.resourceVersion &&
        store.get(m.collection, key)
      )
        continue;
      this.remember(m.collection, key, { kind: def.kind, apiVersion: apiVersionOf(def), ...item });
      changed = true;
    }
    for (const key of [...store.collection(m.collection).keys()]) {
      if (seen.has(key) || this.queued(m.collection, key)) continue;
      this.versions.set(m.collection, key, undefined);
      store.delete(m.collection, key);
      changed = true;
    }
    return changed;
  }

  /** Pods on a simulated node that the server holds for graceful deletion: the kubelet's final delete. */
  private async confirmPodDeletions(): Promise<void> {
    const pods = this.cluster.store.collection('pods');
    const nodes = this.cluster.store.collection('nodes');
    for (const key of [...pods.keys()]) {
      const pod = pods.get(key);
      if (!pod?.metadata?.deletionTimestamp || !nodes.get(pod.spec?.nodeName)) continue;
      const path = restPath(this.cluster.lookup('pods'), pod.metadata.namespace, pod.metadata.name);
      const body = { gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid } };
      await this.api.send('DELETE', path, body).catch(() => undefined);
      this.versions.set('pods', key, undefined);
    }
  }

  /** A Terminating namespace: its content deleted, then the `kubernetes` finalizer removed. */
  private async finalizeNamespaces(): Promise<void> {
    const namespaces = this.cluster.store.collection('namespaces');
    for (const name of [...namespaces.keys()]) {
      const ns = namespaces.get(name);
      if (!ns?.metadata?.deletionTimestamp || !(ns.spec?.finalizers ?? []).includes('kubernetes')) continue;
      if (this.finalizing.has(name)) continue;
      this.finalizing.add(name);
      try {
        for (const c of NAMESPACED_CONTENT) {
          const path = restPath(this.cluster.lookup(c), name);
          await this.api.send('DELETE', path, { gracePeriodSeconds: 0 }).catch(() => undefined);
        }
        const spec = { ...ns.spec, finalizers: ns.spec.finalizers.filter((f: string) => f !== 'kubernetes') };
        const { resourceVersion: _rv, ...metadata } = ns.metadata;
        await this.api.send('PUT', `/api/v1/namespaces/${encodeURIComponent(name)}/finalize`, {
          ...ns,
          metadata,
          spec,
        });
      } catch {
        // Tried again on the next read.
      } finally {
        this.finalizing.delete(name);
        this.versions.set('namespaces', name, undefined);
      }
    }
  }
}

function apiVersionOf(def: { group: string; storageVersion: string }): string {
  return def.group ? `${def.group}/${def.storageVersion}` : def.storageVersion;
}
