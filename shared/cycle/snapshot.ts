/**
 * One cycle's reads of a cluster's nodes and pods, shared by the capabilities that run in the same
 * invocation (node scope, balloons), so that no node and no pod is read twice in one cycle. Nodes are
 * one paged list, memoized. Pods are either one paged list of the whole cluster (allPods: a consumer
 * needs every pod anyway, so the others filter it in memory) or, without it, a paged list per query
 * with the query's selectors (what node scope alone reads: a few DaemonSets' pods, not the cluster's).
 * Pages are reduced to views as they arrive; the raw objects go with the page.
 */
import type { RawReader } from '../k8s/raw-reader.js';
import { type NodeFacts, nodeFacts, type Owner, type PodView, podView } from './views.js';
import type { NodeObject, PodObject } from './wire.js';

export interface PodQuery {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** The whole filter: the selectors only narrow what the server sends. */
  keep: (p: PodView) => boolean;
}

export class ClusterSnapshot {
  private nodeList: Promise<NodeFacts[]> | undefined;
  private podList: Promise<PodView[]> | undefined;

  constructor(
    readonly reader: RawReader,
    private readonly opts: { pageSize: number; allPods?: boolean },
  ) {}

  /** Every node, one paged list per cycle (memoized). */
  nodes(): Promise<NodeFacts[]> {
    this.nodeList ??= this.remember(this.listNodes(), () => {
      this.nodeList = undefined;
    });
    return this.nodeList;
  }

  /** Every pod of the cluster, one paged list of /api/v1/pods per cycle (memoized). */
  allPods(): Promise<PodView[]> {
    this.podList ??= this.remember(
      this.listPods('/api/v1/pods', {}, () => true),
      () => {
        this.podList = undefined;
      },
    );
    return this.podList;
  }

  /**
   * Pods for one consumer: served from allPods() when the snapshot was built with allPods:true
   * (filtered in memory by namespace and keep); otherwise a paged list with the selectors.
   */
  async pods(q: PodQuery): Promise<PodView[]> {
    if (this.opts.allPods) {
      const all = await this.allPods();
      return all.filter((p) => (q.namespace === undefined || p.namespace === q.namespace) && q.keep(p));
    }
    const path =
      q.namespace === undefined
        ? '/api/v1/pods'
        : `/api/v1/namespaces/${encodeURIComponent(q.namespace)}/pods`;
    return this.listPods(path, { labelSelector: q.labelSelector, fieldSelector: q.fieldSelector }, q.keep);
  }

  /** A failed read is forgotten, so the next consumer asks again rather than inheriting the failure. */
  private remember<T>(p: Promise<T>, forget: () => void): Promise<T> {
    p.catch(forget);
    return p;
  }

  private async listNodes(): Promise<NodeFacts[]> {
    const out: NodeFacts[] = [];
    await this.reader.list<NodeObject>(
      'list nodes',
      '/api/v1/nodes',
      {},
      (items) => {
        for (const n of items) out.push(nodeFacts(n));
      },
      { pageSize: this.opts.pageSize, onRestart: () => out.splice(0) },
    );
    return out;
  }

  private async listPods(
    path: string,
    query: { labelSelector?: string | undefined; fieldSelector?: string | undefined },
    keep: (p: PodView) => boolean,
  ): Promise<PodView[]> {
    const out: PodView[] = [];
    const owners = new Map<string, Owner>();
    await this.reader.list<PodObject>(
      'list pods',
      path,
      query,
      (items) => {
        for (const p of items) {
          const v = podView(p, owners);
          if (v && keep(v)) out.push(v);
        }
      },
      { pageSize: this.opts.pageSize, onRestart: () => out.splice(0) },
    );
    return out;
  }
}
