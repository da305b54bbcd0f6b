/**
 * One cycle's reads of a cluster's nodes and pods, shared by the capabilities that run in the same
 * invocation (node scope, balloons), so that no node and no pod is read twice in one cycle. Nodes are
 * one paged list, memoized. Pods are either one paged list of the whole cluster (allPods: a consumer
 * needs every pod anyway, so the others filter it in memory) or, without it, a paged list per query
 * with the query's selectors (what node scope alone reads: a few DaemonSets' pods, not the cluster's).
 * Pages are reduced to views as they arrive; the raw objects go with the page.
 * With `kept` (the cluster cycle's), each of these lists is taken up from what the previous cycle kept:
 * a watch brings the changes since (resume.ts), and the list is read in full only when that cannot be.
 */
import type { RawReader } from '../k8s/raw-reader.js';
import type { KeptList, KeptListSpec, KeptLists } from './kept-lists.js';
import { podListFromProtobuf } from './pod-protobuf.js';
import { currentRevision, type ListRead, readKeptList } from './resume.js';
import { type NodeFacts, nodeFacts, type Owner, type PodView, podView } from './views.js';
import type { NodeObject, PodObject } from './wire.js';

/** Lists kept between cycles, and whose: the cluster and its server, so that no other cluster's are taken. */
export interface KeptScope {
  lists: KeptLists;
  scope: string;
  /** The cycle's clock: each list it reads is stamped with it (KeptList.cycledAt). */
  now?: () => number;
}

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
  private revision: Promise<string | undefined> | undefined;
  /** How each list of this snapshot was read, by its path and selectors. */
  readonly reads = new Map<string, ListRead>();

  constructor(
    readonly reader: RawReader,
    private readonly opts: { pageSize: number; allPods?: boolean; kept?: KeptScope },
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
    return this.read<NodeObject, NodeFacts>({
      operation: 'list nodes',
      path: '/api/v1/nodes',
      query: {},
      pageSize: this.opts.pageSize,
      keyOf: (n) => n.metadata?.name,
      view: (n) => nodeFacts(n),
    });
  }

  private async listPods(
    path: string,
    query: { labelSelector?: string | undefined; fieldSelector?: string | undefined },
    keep: (p: PodView) => boolean,
  ): Promise<PodView[]> {
    const all = await this.read<PodObject, PodView>({
      operation: 'list pods',
      path,
      query,
      pageSize: this.opts.pageSize,
      keyOf: (p) => (p.metadata?.name ? `${p.metadata.namespace ?? ''}/${p.metadata.name}` : undefined),
      view: (p, shared) => podView(p, shared as Map<string, Owner>),
      // A cold list is most of a cold cycle's CPU: pods come as protobuf, read for the view's fields only.
      protobuf: podListFromProtobuf,
    });
    return all.filter(keep);
  }

  /**
   * One list's views in the server's order (by key): taken up from the kept list when there is one,
   * kept again once read to the end. Without `kept`, a plain list.
   */
  private async read<O extends { metadata?: { name?: string } }, V>(spec: KeptListSpec<O, V>): Promise<V[]> {
    const key = `${spec.path}?${new URLSearchParams(compact(spec.query))}`;
    const kept = this.opts.kept;
    const slot = kept ? `${kept.scope} ${key}` : '';
    const prev = kept?.lists.take<V, O>(slot);
    const revision = () =>
      (this.revision ??= this.remember(currentRevision(this.reader), () => {
        this.revision = undefined;
      }));
    const { list, read } = await readKeptList(this.reader, spec, prev, revision);
    this.reads.set(key, read);
    if (kept && list.rv) {
      if (kept.now) list.cycledAt = kept.now();
      kept.lists.put(slot, list);
    }
    return inKeyOrder(list, read);
  }
}

const compact = (q: Record<string, string | undefined>) =>
  Object.fromEntries(
    Object.entries(q).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''),
  );

/**
 * The views in key order, as the server lists them (etcd's key order): a resumed list appends what was
 * added since (by this read or by a follow before it), so it is sorted again when its keys are not in order.
 */
function inKeyOrder<V, O>(list: KeptList<V, O>, read: ListRead): V[] {
  if (read.how === 'listed') return [...list.items.values()];
  const keys = [...list.items.keys()];
  let sorted = true;
  for (let i = 1; i < keys.length && sorted; i++) sorted = (keys[i - 1] as string) < (keys[i] as string);
  if (sorted) return [...list.items.values()];
  keys.sort();
  const ordered = new Map<string, V>();
  for (const k of keys) ordered.set(k, list.items.get(k) as V);
  list.items = ordered;
  return [...ordered.values()];
}
