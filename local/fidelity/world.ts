/**
 * What the simulator did on its own (its start-up world, kubelets, scheduler, controllers, a test's
 * seeding), done again on the real server as the cluster's admin, so that the recorded requests meet
 * the same objects there. These writes are not compared: they are the kubelet's and the controllers'
 * part, which a bare apiserver does not run.
 */
import type { ClientCredentials } from '../envtest/apiserver.js';
import { isObj, type J } from './compare.js';
import { type Answer, type Endpoint, send } from './http.js';
import type { Values } from './values.js';

/** Collections a bare apiserver cannot hold as the simulator does (the metrics API is an aggregated server's). */
const NOT_REPLAYED = (collection: string, obj: J) =>
  collection.endsWith('.metrics.k8s.io') ||
  (collection === 'apiservices.apiregistration.k8s.io' &&
    String(obj?.metadata?.name).endsWith('metrics.k8s.io'));

/** Reads and writes of one graft before a conflict is reported as a refusal. */
const GRAFT_ATTEMPTS = 5;

const SERVER_OWNED_META = [
  'resourceVersion',
  'uid',
  'creationTimestamp',
  'managedFields',
  'generation',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'selfLink',
];

export class World {
  /** Writes the real server refused, by reason: they make later exchanges diverge, so they are reported. */
  readonly refused = new Map<string, number>();

  constructor(
    private readonly server: Endpoint,
    private readonly admin: ClientCredentials,
    private readonly values: Values,
  ) {}

  async added(collection: string, obj: J): Promise<void> {
    if (NOT_REPLAYED(collection, obj)) return;
    if (collection === 'pods') await this.ensureServiceAccount(obj);
    const created = await this.call('POST', collectionPath(collection, obj), this.forCreate(collection, obj));
    if (created.status === 409) {
      const current = await this.call('GET', objectPath(collection, obj));
      if (current.status === 200) this.values.learn(obj, current.json);
      return;
    }
    if (created.status >= 300) return this.refuse('create', collection, created);
    this.values.learn(obj, created.json);
    if (collection === 'customresourcedefinitions.apiextensions.k8s.io') await this.established(obj);
    // TaintNodesByCondition gives a new Node the not-ready taint, which a node lifecycle controller lifts
    // once the node is Ready; a bare apiserver has none, so the world does its part.
    if (collection === 'nodes' && json(obj.spec) !== json(created.json?.spec))
      await this.graft(collection, obj, 'main');
    if (isObj(obj.status) && JSON.stringify(obj.status) !== JSON.stringify(created.json?.status))
      await this.graft(collection, obj, 'status');
  }

  async modified(collection: string, obj: J, prev: J): Promise<void> {
    if (NOT_REPLAYED(collection, obj)) return;
    if (collection === 'pods' && !prev?.spec?.nodeName && obj.spec?.nodeName) await this.bind(obj);
    if (metaOf(obj) !== metaOf(prev) || (collection !== 'pods' && json(obj.spec) !== json(prev?.spec)))
      await this.graft(collection, obj, 'main');
    if (json(obj.status) !== json(prev?.status)) await this.graft(collection, obj, 'status');
  }

  async deleted(collection: string, obj: J): Promise<void> {
    if (NOT_REPLAYED(collection, obj)) return;
    const answer = await this.call('DELETE', `${objectPath(collection, obj)}?gracePeriodSeconds=0`);
    if (answer.status >= 300 && answer.status !== 404) this.refuse('delete', collection, answer);
  }

  /**
   * The real object with the simulator's metadata and spec (main) or status grafted on, written back.
   * The real server's own controllers (a CRD's conditions) may write between the read and the write:
   * a conflict is read again and retried.
   */
  private async graft(collection: string, obj: J, part: 'main' | 'status'): Promise<void> {
    const path = objectPath(collection, obj);
    for (let attempt = 1; ; attempt++) {
      const current = await this.call('GET', path);
      if (current.status !== 200) return;
      const answer = await this.call(
        'PUT',
        part === 'status' ? `${path}/status` : path,
        this.grafted(collection, obj, part, current.json),
      );
      if (answer.status === 409 && attempt < GRAFT_ATTEMPTS) continue;
      if (answer.status >= 300) this.refuse(part === 'status' ? 'status' : 'update', collection, answer);
      else this.values.learn(obj, answer.json);
      return;
    }
  }

  private grafted(collection: string, obj: J, part: 'main' | 'status', real: J): J {
    if (part === 'status') return { ...real, status: obj.status };
    return {
      ...real,
      ...(collection === 'pods' ? {} : { spec: obj.spec }),
      metadata: {
        ...real.metadata,
        ...pick(this.values.rewriteBody(obj.metadata), [
          'labels',
          'annotations',
          'finalizers',
          'ownerReferences',
        ]),
      },
    };
  }

  private async bind(pod: J): Promise<void> {
    const { name, namespace } = pod.metadata;
    const binding = {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name },
      target: { kind: 'Node', name: pod.spec.nodeName },
    };
    const answer = await this.call('POST', `/api/v1/namespaces/${namespace}/pods/${name}/binding`, binding);
    if (answer.status >= 300) this.refuse('binding', 'pods', answer);
  }

  /** A bare apiserver has no controller-manager to create a namespace's ServiceAccounts. */
  private async ensureServiceAccount(pod: J): Promise<void> {
    const ns = pod.metadata?.namespace;
    const name = pod.spec?.serviceAccountName ?? 'default';
    await this.call('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name } });
  }

  async established(crd: J): Promise<void> {
    for (let i = 0; i < 100; i++) {
      const got = await this.call(
        'GET',
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`,
      );
      const conditions: J[] = got.json?.status?.conditions ?? [];
      if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  private forCreate(collection: string, obj: J): J {
    const metadata: J = this.values.rewriteBody({ ...obj.metadata });
    for (const k of SERVER_OWNED_META) delete metadata[k];
    const body = { ...obj, metadata };
    return collection === 'pods' ? withoutTokenVolume(body) : body;
  }

  private call(method: string, path: string, body?: J): Promise<Answer> {
    return send(this.server, this.admin, method, path, body === undefined ? undefined : JSON.stringify(body));
  }

  private refuse(what: string, collection: string, answer: Answer): void {
    const key = `${what} ${collection}: ${answer.status} ${answer.json?.reason ?? ''} ${String(
      answer.json?.message ?? answer.text,
    )
      .split('\n')[0]
      ?.slice(0, 160)}`;
    this.refused.set(key, (this.refused.get(key) ?? 0) + 1);
  }
}

/** The ServiceAccount admission's projected token volume: the real server adds its own. */
function withoutTokenVolume(pod: J): J {
  const generated = (v: J) => String(v?.name).startsWith('kube-api-access-');
  const containers = (cs: J[] | undefined) =>
    cs?.map((c) => ({ ...c, volumeMounts: c.volumeMounts?.filter((m: J) => !generated(m)) }));
  const spec = pod.spec ?? {};
  return {
    ...pod,
    spec: {
      ...spec,
      volumes: spec.volumes?.filter((v: J) => !generated(v)),
      containers: containers(spec.containers),
      initContainers: containers(spec.initContainers),
    },
  };
}

export function collectionPath(collection: string, obj: J): string {
  const dot = collection.indexOf('.');
  const resource = dot < 0 ? collection : collection.slice(0, dot);
  const base = dot < 0 ? '/api/v1' : `/apis/${obj.apiVersion}`;
  const ns = obj.metadata?.namespace;
  return `${base}${ns ? `/namespaces/${ns}` : ''}/${resource}`;
}

export const objectPath = (collection: string, obj: J) =>
  `${collectionPath(collection, obj)}/${obj.metadata?.name}`;

const json = (v: unknown) => JSON.stringify(v ?? null);
const metaOf = (o: J) =>
  json(pick(o?.metadata ?? {}, ['labels', 'annotations', 'finalizers', 'ownerReferences']));

function pick(o: J, keys: string[]): J {
  return Object.fromEntries(keys.filter((k) => o?.[k] !== undefined).map((k) => [k, o[k]]));
}
