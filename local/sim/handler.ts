/**
 * The apiserver's HTTP surface for one cluster: request parsing (RequestInfo), discovery, the
 * aggregator's answers for metrics.k8s.io, content negotiation (JSON, Table, PartialObjectMetadata,
 * aggregated discovery, protobuf for pod lists), watches, and the mapping of verbs onto the generic
 * registry.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import yaml from 'yaml';
import { ADMIN_USER, mintServiceAccountToken } from './authn.js';
import { rfc3339 } from './clock.js';
import type { ClusterState } from './cluster.js';
import type { BodyWriter } from './compression.js';
import {
  AGGREGATED_CONTENT_TYPE,
  aggregatedDiscovery,
  apiGroupDoc,
  apiGroupList,
  apiResourceList,
  apiVersions,
  type GroupInfo,
  groupsOf,
  wantsAggregated,
} from './discovery.js';
import { ApiError, badRequest, methodNotAllowed, notFound, notFoundGeneric, PlainError } from './errors.js';
import { isObject, type Json, type JsonObject } from './json.js';
import { listOptions } from './list-options.js';
import { openApiGroupVersion, openApiRoot } from './openapi.js';
import { APPLY_PATCH } from './patch.js';
import { encodePodList, PROTOBUF, prefersProtobuf } from './protobuf.js';
import { collectionId, type ResourceDef } from './registry.js';
import { coreSchemas } from './resize-preemption.js';
import {
  createObject,
  type DeleteOptions,
  deleteCollection,
  deleteObject,
  getObject,
  type ListQuery,
  type ListResult,
  listObjects,
  objectKey,
  parsePatchBody,
  patchObject,
  toVersion,
  updateObject,
} from './rest.js';
import { selfSubjectAccessReview, selfSubjectReview, selfSubjectRulesReview } from './reviews.js';
import { parseFieldSelector, parseLabelSelector } from './selectors.js';
import type { RequestInfo, Scope, SimState, UserInfo } from './state.js';

// soak/fleet.ts reads the request's parts from here.
export type { RequestInfo } from './state.js';

import type { StoreEvent } from './store.js';
import { acceptedAs, type IncludeObject, partialObjectMetadata, toTable } from './table.js';
import { withTopologyLabels } from './topology-labels.js';
import type { RequestKind } from './types.js';
import { offerBookmarks } from './watch-cache.js';

/** How the client asked to see objects (its Accept header). */
type Representation = ReturnType<typeof acceptedAs>;

const seg = (p: string) =>
  p
    .split('/')
    .filter((s) => s !== '')
    .map(decodeURIComponent);

/** The request's verb as RBAC and the apiserver name it (RequestInfoFactory): a GET is get, list or watch. */
function verbOf(method: string, named: boolean, isWatch: boolean): string {
  switch (method) {
    case 'GET':
    case 'HEAD':
      return named ? 'get' : isWatch ? 'watch' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return named ? 'delete' : 'deletecollection';
    default:
      return method.toLowerCase();
  }
}

/** How the client wants objects represented (its Accept header); 406 when the simulator has none of them. */
function representationOf(req: IncomingMessage): Exclude<Representation, 'unsupported'> {
  const as = acceptedAs(req.headers.accept);
  if (as === 'unsupported')
    throw new ApiError(
      406,
      'NotAcceptable',
      'the server was unable to respond with a content type that the client supports',
      {},
    );
  return as;
}

/**
 * Where a watch starts: the events since its resourceVersion (none given, or "0": every object as ADDED,
 * then what follows), or a 410 Expired to send when that version is beyond the watch cache's reach
 * (watch-cache.ts), with the cacher's message.
 */
function watchStart(
  store: ClusterState['store'],
  coll: string,
  rv: string | undefined,
): { backlog?: StoreEvent[]; expired?: ApiError } {
  if (!rv || rv === '0') return {};
  const n = Number(rv);
  if (!Number.isInteger(n)) throw badRequest(`invalid resource version: ${rv}`);
  const floor = store.watchFloor(coll);
  if (n < floor)
    return { expired: new ApiError(410, 'Expired', `too old resource version: ${n} (${floor})`, {}) };
  return { backlog: store.eventsSince(coll, n) };
}

const bookmarksAsked = (q: URLSearchParams) => ['true', '1'].includes(q.get('allowWatchBookmarks') ?? '');

/** A BOOKMARK's object: the kind and a revision; before 1.35 the empty creationTimestamp is written too. */
function bookmark(def: ResourceDef, version: string, rv: number, cluster: SimState): JsonObject {
  const metadata: JsonObject = { resourceVersion: String(rv) };
  if (cluster.version.minor < 35) metadata.creationTimestamp = null;
  return { kind: def.kind, apiVersion: def.group ? `${def.group}/${version}` : version, metadata };
}

export function parseRequest(method: string, url: string): RequestInfo {
  const u = new URL(url, 'https://sim.invalid');
  const info: RequestInfo = { path: u.pathname, query: u.searchParams, method, type: 'unknown' };
  const parts = seg(u.pathname);
  if (parts[0] === 'version' && parts.length === 1) return { ...info, type: 'version' };
  if (['healthz', 'livez', 'readyz'].includes(parts[0] ?? '')) return { ...info, type: 'health' };
  if (parts[0] === 'openapi') return { ...info, type: 'openapi' };
  let rest: string[];
  if (parts[0] === 'api') {
    info.apiPrefix = 'api';
    info.group = '';
    if (parts.length === 1) return { ...info, type: 'discovery' };
    info.version = parts[1];
    rest = parts.slice(2);
  } else if (parts[0] === 'apis') {
    info.apiPrefix = 'apis';
    if (parts.length === 1) return { ...info, type: 'discovery' };
    info.group = parts[1];
    if (parts.length === 2) return { ...info, type: 'discovery' };
    info.version = parts[2];
    rest = parts.slice(3);
  } else {
    return info;
  }
  if (rest.length === 0) return { ...info, type: 'discovery' };
  // As RequestInfoFactory: namespaces/<ns>/<resource>..., except namespaces/<name>/{status,finalize}.
  if (rest[0] === 'namespaces' && rest.length > 1) {
    info.namespace = rest[1];
    if (rest.length > 2 && !['status', 'finalize'].includes(rest[2] as string)) rest = rest.slice(2);
  }
  if (rest.length > 3) return info;
  info.resource = rest[0];
  info.name = rest[1];
  info.subresource = rest[2];
  if (info.resource === 'namespaces') info.namespace = undefined;
  const watch = info.query.get('watch');
  info.verb = verbOf(method, !!info.name, watch === 'true' || watch === '1');
  return { ...info, type: 'resource' };
}

/** The kind of a request, for statistics and fault matching. */
export function classify(info: RequestInfo, cluster?: ClusterState): RequestKind {
  if (info.type === 'discovery' || info.type === 'version' || info.type === 'openapi') return 'discovery';
  if (info.type !== 'resource') return 'other';
  if (info.group === 'metrics.k8s.io') return 'metrics';
  if (info.group === 'apiextensions.k8s.io' && info.resource === 'customresourcedefinitions') return 'crds';
  if (!info.group) {
    if (info.resource === 'pods') return info.subresource === 'resize' ? 'resize' : 'pods';
    if (info.resource === 'nodes') return 'nodes';
    if (info.resource === 'namespaces') return 'namespaces';
    return 'other';
  }
  if (info.group === 'apps' && info.resource === 'daemonsets') return 'daemonsets';
  if (cluster && info.version && info.resource) {
    const def = cluster.resolve(info.group, info.version, info.resource);
    if (def?.custom) return 'customresources';
  }
  return 'other';
}

export interface Reply {
  status: number;
  headers?: Record<string, string | string[]>;
  /**
   * A JSON document, or plain text, or binary bytes, or a document written in pieces (a list), or a
   * watch stream.
   */
  json?: Json;
  text?: string;
  /** A binary document (a protobuf answer): framed and compressed as a JSON one. */
  bytes?: Buffer;
  body?: (out: BodyWriter) => void;
  stream?: (res: ServerResponse) => void;
  contentType?: string;
}

const PAGE_NOT_FOUND = (): PlainError => new PlainError(404, '404 page not found\n');
const SERVICE_UNAVAILABLE = (): PlainError => new PlainError(503, 'service unavailable\n');

function listQuery(q: URLSearchParams, watch = false): ListQuery {
  return listOptions(q, watch);
}

function decodeBody(raw: string, contentType: string | undefined): Json {
  if (raw.trim() === '') return undefined;
  const ct = (contentType ?? 'application/json').split(';')[0]?.trim();
  try {
    if (ct === 'application/yaml' || ct === 'application/apply-patch+yaml') return yaml.parse(raw);
    return JSON.parse(raw);
  } catch (err) {
    throw badRequest(
      `the body of the request could not be decoded: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

export interface HandlerContext {
  cluster: ClusterState;
  serverAddress: string;
  /** Open watch streams, closed when the simulator stops. */
  watches: Set<ServerResponse>;
}

function listMeta(def: ResourceDef, r: ListResult): JsonObject {
  const m: JsonObject = { resourceVersion: r.resourceVersion };
  if (r.continue) m.continue = r.continue;
  if (r.remainingItemCount !== undefined) m.remainingItemCount = r.remainingItemCount;
  if (def.custom) {
    const out: JsonObject = { continue: r.continue ?? '' };
    if (r.remainingItemCount !== undefined) out.remainingItemCount = r.remainingItemCount;
    out.resourceVersion = r.resourceVersion;
    return out;
  }
  return m;
}

/** Streams a list without building one giant string (a 50,000-pod list is ~150 MB of JSON). */
function listReply(def: ResourceDef, version: string, r: ListResult): Reply {
  const meta = JSON.stringify(listMeta(def, r));
  const av = def.group ? `${def.group}/${version}` : version;
  const head = def.custom
    ? `{"apiVersion":${JSON.stringify(av)},"items":[`
    : `{"kind":${JSON.stringify(def.listKind)},"apiVersion":${JSON.stringify(av)},"metadata":${meta},"items":[`;
  const tail = def.custom ? `],"kind":${JSON.stringify(def.listKind)},"metadata":${meta}}` : ']}';
  // Items of a typed (built-in) list carry no kind/apiVersion, as Go's typed lists encode them.
  const typePrefix = `{"kind":${JSON.stringify(def.kind)},"apiVersion":${JSON.stringify(av)},`;
  const item = (o: Json): string => {
    const s = JSON.stringify(o);
    if (def.custom) return s;
    if (s.startsWith(typePrefix)) return `{${s.slice(typePrefix.length)}`;
    const { kind: _k, apiVersion: _a, ...rest } = o;
    return JSON.stringify(rest);
  };
  return {
    status: 200,
    body: (res) => {
      res.write(head);
      const items = r.items;
      for (let i = 0; i < items.length; i += 256) {
        let chunk = '';
        for (let j = i; j < Math.min(items.length, i + 256); j++) chunk += (j ? ',' : '') + item(items[j]);
        res.write(chunk);
      }
      res.end(tail);
    },
  };
}

export class ApiHandler {
  /** The user of the request being handled (requests are handled one at a time). */
  private user!: UserInfo;

  constructor(private readonly ctx: HandlerContext) {}

  private get cluster(): ClusterState {
    return this.ctx.cluster;
  }

  private groups(): GroupInfo[] {
    const extra: GroupInfo[] = [];
    if (this.cluster.metricsState() !== 'absent')
      extra.push({ name: 'metrics.k8s.io', versions: ['v1beta1'], aggregated: true });
    return groupsOf(
      [...this.cluster.resources()].filter((r) => r.group !== 'metrics.k8s.io'),
      extra,
    );
  }

  handle(
    info: RequestInfo,
    req: IncomingMessage,
    body: string,
    user: UserInfo = { username: ADMIN_USER, groups: ['system:masters', 'system:authenticated'] },
  ): Reply {
    this.user = user;
    const accept = req.headers.accept;
    switch (info.type) {
      case 'version':
        return { status: 200, json: this.cluster.versionInfo() };
      case 'health':
        return { status: 200, text: 'ok', contentType: 'text/plain; charset=utf-8' };
      case 'openapi':
        return this.openapi(info);
      case 'unknown':
        throw PAGE_NOT_FOUND();
      case 'discovery':
        return this.discovery(info, accept);
      default:
        return this.resource(info, req, body);
    }
  }

  private openapi(info: RequestInfo): Reply {
    const parts = info.path.split('/').filter((p) => p);
    if (parts[1] !== 'v3') throw PAGE_NOT_FOUND();
    const resources = this.cluster.resources();
    if (parts.length === 2) return { status: 200, json: openApiRoot(resources) };
    const [group, version] = parts[2] === 'api' ? ['', parts[3]] : [parts[3], parts[4]];
    const schemas = !group && version === 'v1' ? coreSchemas(this.cluster.features) : undefined;
    const doc = version ? openApiGroupVersion(resources, group ?? '', version, schemas) : undefined;
    if (!doc) throw PAGE_NOT_FOUND();
    return { status: 200, json: doc };
  }

  private discovery(info: RequestInfo, accept: string | undefined): Reply {
    const c = this.cluster;
    const aggregated = wantsAggregated(accept);
    if (info.apiPrefix === 'api' && info.version === undefined) {
      if (aggregated)
        return {
          status: 200,
          json: aggregatedDiscovery(aggregated, [], c.resources(), true),
          contentType: AGGREGATED_CONTENT_TYPE.replace('v=v2', `v=${aggregated}`),
        };
      return { status: 200, json: apiVersions(this.ctx.serverAddress) };
    }
    if (info.apiPrefix === 'apis' && info.group === undefined) {
      if (aggregated)
        return {
          status: 200,
          json: aggregatedDiscovery(aggregated, this.groups(), c.resources(), false),
          contentType: AGGREGATED_CONTENT_TYPE.replace('v=v2', `v=${aggregated}`),
        };
      return { status: 200, json: apiGroupList(this.groups()) };
    }
    const group = info.group ?? '';
    if (group === 'metrics.k8s.io') {
      const state = c.metricsState();
      if (state === 'absent') throw PAGE_NOT_FOUND();
      if (info.version === undefined)
        return { status: 200, json: apiGroupDoc({ name: group, versions: ['v1beta1'] }) };
      if (info.version !== 'v1beta1') throw PAGE_NOT_FOUND();
      if (state === 'unavailable') throw SERVICE_UNAVAILABLE();
      return { status: 200, json: apiResourceList(group, 'v1beta1', c.resources()) };
    }
    if (info.apiPrefix === 'api') {
      if (info.version !== 'v1') throw PAGE_NOT_FOUND();
      return { status: 200, json: apiResourceList('', 'v1', c.resources()) };
    }
    const g = this.groups().find((x) => x.name === group);
    if (!g) throw PAGE_NOT_FOUND();
    if (info.version === undefined) return { status: 200, json: apiGroupDoc(g) };
    if (!g.versions.includes(info.version)) throw PAGE_NOT_FOUND();
    return { status: 200, json: apiResourceList(group, info.version, c.resources()) };
  }

  private resource(info: RequestInfo, req: IncomingMessage, body: string): Reply {
    const c = this.cluster;
    const group = info.group ?? '';
    const version = info.version as string;
    if (group === 'metrics.k8s.io') return this.metrics(info);
    const groupKnown =
      info.apiPrefix === 'api'
        ? version === 'v1'
        : this.groups().some((g) => g.name === group && g.versions.includes(version));
    if (!groupKnown) throw PAGE_NOT_FOUND();
    const def = c.resolve(group, version, info.resource as string);
    if (!def) throw notFoundGeneric();
    if (def.namespaced === false && info.namespace !== undefined) throw notFoundGeneric();
    if (def.virtual) return this.virtual(def, info, body, req);
    const sub = info.subresource;
    const unserved =
      sub !== undefined &&
      (!def.subresources.some((s) => s.name === sub) ||
        (def.custom !== undefined && sub === 'status' && !def.custom.versions[version]?.status));
    if (unserved)
      // The CRD handler answers a subresource its CRD does not serve as the object not found.
      throw def.custom && info.name
        ? notFound({ group: def.group, resource: def.resource }, info.name)
        : notFoundGeneric();
    const q = info.query;
    const dryRun = q.getAll('dryRun').includes('All');
    const fv = q.get('fieldValidation');
    const scope: Scope = {
      cluster: c,
      def,
      version,
      namespace: def.namespaced ? info.namespace : undefined,
      subresource: sub,
      manager: q.get('fieldManager') ?? managerOf(req),
      dryRun,
      warnings: [],
      fieldValidation: fv === 'Strict' || fv === 'Ignore' ? fv : 'Warn',
      user: this.user,
    };
    if (def.namespaced && info.name !== undefined && info.namespace === undefined) throw notFoundGeneric();
    if (sub && !['status', 'resize'].includes(sub)) return this.otherSubresource(scope, info, body);
    const reply = this.verb(scope, info, req, body);
    if (scope.warnings.length)
      reply.headers = {
        ...(reply.headers ?? {}),
        Warning: scope.warnings.map((w) => `299 - ${JSON.stringify(w)}`),
      };
    return reply;
  }

  private verb(scope: Scope, info: RequestInfo, req: IncomingMessage, body: string): Reply {
    const { def, version } = scope;
    const name = info.name as string;
    const ct = (req.headers['content-type'] ?? 'application/json').split(';')[0]?.trim() ?? '';
    // The one answer the simulator has in protobuf: a core/v1 pod list (before the 406 of protobuf only).
    if (info.verb === 'list' && isCorePods(scope) && prefersProtobuf(req.headers.accept)) {
      const r = listObjects(scope, listQuery(info.query));
      this.cluster.kubelet.markObserved();
      return { status: 200, bytes: encodePodList(listMeta(def, r), r.items), contentType: PROTOBUF };
    }
    const as = representationOf(req);
    switch (info.verb) {
      case 'get': {
        const obj = getObject(scope, name);
        if (def.resource === 'pods' && !def.group) this.cluster.kubelet.markObserved();
        return this.objectAs(as, scope, info, obj);
      }
      case 'list': {
        const r = listObjects(scope, listQuery(info.query));
        if (def.resource === 'pods' && !def.group) this.cluster.kubelet.markObserved();
        return this.listAs(as, scope, info, r);
      }
      case 'watch':
        return this.watch(scope, info);
      case 'create': {
        if (scope.subresource)
          throw methodNotAllowed(`the server does not allow this method on the requested resource`);
        // 201 for a dry run too: the create handler answers Created either way.
        return { status: 201, json: createObject(scope, decodeBody(body, ct)) };
      }
      case 'update':
        return { status: 200, json: updateObject(scope, name, decodeBody(body, ct)) };
      case 'patch':
        return this.patch(scope, info, ct, body);
      case 'delete': {
        if (scope.subresource)
          throw methodNotAllowed('the server does not allow this method on the requested resource');
        const opts = deleteOptions(info.query, decodeBody(body, ct));
        return { status: 200, json: deleteObject(scope, name, opts) };
      }
      case 'deletecollection': {
        const r = deleteCollection(
          scope,
          listQuery(info.query),
          deleteOptions(info.query, decodeBody(body, ct)),
        );
        return listReply(def, version, r);
      }
      default:
        throw methodNotAllowed(`the server does not allow this method on the requested resource`);
    }
  }

  /** A got object as the client asked for it: a Table (kubectl get), metadata only, or the object. */
  private objectAs(as: Representation, scope: Scope, info: RequestInfo, obj: Json): Reply {
    if (as === 'Table' && info.verb === 'get') {
      const meta: JsonObject = { resourceVersion: obj?.metadata?.resourceVersion ?? '' };
      return {
        status: 200,
        json: toTable(scope.def, scope.version, [obj], meta, this.cluster.clock.now(), includeOf(info.query)),
        contentType: 'application/json;as=Table;v=v1;g=meta.k8s.io',
      };
    }
    if (as === 'PartialObjectMetadata' && isObject(obj?.metadata))
      return {
        status: 200,
        json: partialObjectMetadata(obj),
        contentType: 'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io',
      };
    return { status: 200, json: obj };
  }

  /** A list as the client asked for it: a Table, a PartialObjectMetadataList, or the typed list. */
  private listAs(as: Representation, scope: Scope, info: RequestInfo, r: ListResult): Reply {
    const { def, version } = scope;
    if (as === 'Table')
      return {
        status: 200,
        json: toTable(
          def,
          version,
          r.items,
          tableListMeta(r),
          this.cluster.clock.now(),
          includeOf(info.query),
        ),
        contentType: 'application/json;as=Table;v=v1;g=meta.k8s.io',
      };
    if (as === 'PartialObjectMetadataList' || as === 'PartialObjectMetadata')
      return {
        status: 200,
        json: {
          kind: 'PartialObjectMetadataList',
          apiVersion: 'meta.k8s.io/v1',
          metadata: tableListMeta(r),
          items: r.items.map(partialObjectMetadata),
        },
        contentType: 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io',
      };
    return listReply(def, version, r);
  }

  /** Any patch type; a server-side apply that creates the object answers 201. */
  private patch(scope: Scope, info: RequestInfo, ct: string, body: string): Reply {
    const name = info.name as string;
    const patch = parsePatchBody(ct, body);
    const fieldManager = info.query.get('fieldManager') ?? undefined;
    const existed =
      ct === APPLY_PATCH
        ? this.cluster.store.get(collectionId(scope.def), objectKey(scope.namespace, name)) !== undefined
        : true;
    const obj = patchObject(scope, name, ct, patch, fieldManager);
    return { status: existed ? 200 : 201, json: obj };
  }

  private watch(scope: Scope, info: RequestInfo): Reply {
    const { cluster, def, version } = scope;
    const store = cluster.store;
    const coll = collectionId(def);
    const q = listQuery(info.query, true);
    const labels = parseLabelSelector(q.labelSelector);
    const fields = parseFieldSelector(q.fieldSelector, def.resource, def.custom ? 'meta' : 'builtin');
    const prefix = scope.namespace ? `${scope.namespace}/` : '';
    const matches = (key: string, obj: Json) =>
      key.startsWith(prefix) && labels(obj?.metadata?.labels) && fields.match(obj);
    const timeoutSeconds = Number(info.query.get('timeoutSeconds') ?? '') || 1800;
    const { backlog, expired } = watchStart(store, coll, q.resourceVersion);
    return {
      status: 200,
      contentType: 'application/json',
      stream: (res) => {
        const send = (type: string, obj: Json) =>
          res.write(`${JSON.stringify({ type, object: toVersion(def, obj, version) })}\n`);
        if (expired) {
          res.end(`${JSON.stringify({ type: 'ERROR', object: expired.toStatus() })}\n`);
          return;
        }
        if (backlog === undefined) {
          const view = store.view(coll);
          for (const k of view.keys) {
            const o = view.get(k);
            if (matches(k, o)) send('ADDED', o);
          }
        } else {
          for (const ev of backlog) this.sendEvent(ev, matches, send);
        }
        // The cacher's bookmark goes out only once its revision has passed where the watcher began.
        const from = Math.max(Number(q.resourceVersion) || 0, backlog?.at(-1)?.rv ?? store.lastEventRv(coll));
        const stopBookmarks = bookmarksAsked(info.query)
          ? offerBookmarks(
              timeoutSeconds * 1000,
              () => {
                const rv = store.lastEventRv(coll);
                if (rv > from)
                  res.write(
                    `${JSON.stringify({ type: 'BOOKMARK', object: bookmark(def, version, rv, cluster) })}\n`,
                  );
              },
              cluster.watchWallScale,
            )
          : () => {};
        const unsubscribe = store.subscribe((ev) => {
          if (ev.collection === coll) this.sendEvent(ev, matches, send);
        });
        this.ctx.watches.add(res);
        const done = () => {
          unsubscribe();
          stopBookmarks();
          clearTimeout(timer);
          this.ctx.watches.delete(res);
          if (!res.writableEnded) res.end();
        };
        const timer = setTimeout(done, timeoutSeconds * 1000 * cluster.watchWallScale);
        res.on('close', done);
      },
    };
  }

  private sendEvent(
    ev: StoreEvent,
    matches: (k: string, o: Json) => boolean,
    send: (t: string, o: Json) => void,
  ): void {
    const now = ev.type !== 'DELETED' && matches(ev.key, ev.object);
    const before = ev.prev !== undefined && matches(ev.key, ev.prev);
    if (ev.type === 'DELETED') {
      if (before) send('DELETED', ev.object);
    } else if (now) {
      send(before || ev.type === 'ADDED' ? ev.type : 'ADDED', ev.object);
    } else if (before) {
      // Left the selection: the cacher sends the object as it was (still selected), at the change's revision.
      const prev = ev.prev as JsonObject & { metadata?: JsonObject };
      send('DELETED', { ...prev, metadata: { ...prev.metadata, resourceVersion: String(ev.rv) } });
    }
  }

  private metrics(info: RequestInfo): Reply {
    const state = this.cluster.metricsState();
    if (state === 'absent' || info.version !== 'v1beta1') throw PAGE_NOT_FOUND();
    if (state === 'unavailable') throw SERVICE_UNAVAILABLE();
    const m = this.cluster.metrics;
    const resource = info.resource;
    if (resource !== 'nodes' && resource !== 'pods') throw notFoundGeneric();
    if (info.verb !== 'get' && info.verb !== 'list')
      throw methodNotAllowed('the server does not allow this method on the requested resource');
    if (info.subresource) throw notFoundGeneric();
    const q = {
      labelSelector: info.query.get('labelSelector') ?? undefined,
      fieldSelector: info.query.get('fieldSelector') ?? undefined,
    };
    if (resource === 'nodes') {
      if (info.namespace) throw notFoundGeneric();
      return { status: 200, json: info.name ? m.getNode(info.name) : m.listNodes(q) };
    }
    if (info.name) {
      if (!info.namespace) throw notFoundGeneric();
      return { status: 200, json: m.getPod(info.namespace, info.name) };
    }
    return { status: 200, json: m.listPods(info.namespace, q) };
  }

  /** Subresources other than status and resize: the useful ones are simulated, the streaming ones refused. */
  private otherSubresource(scope: Scope, info: RequestInfo, body: string): Reply {
    const { def } = scope;
    const name = info.name as string;
    const sub = info.subresource as string;
    if (def.resource === 'pods' && !def.group) {
      const reply = this.podSubresource(scope, info, body);
      if (reply) return reply;
    }
    if (def.resource === 'serviceaccounts' && !def.group && sub === 'token' && info.verb === 'create')
      return this.serviceAccountToken(scope, name, body);
    if (info.verb === 'get')
      return { status: 200, json: getObject({ ...scope, subresource: undefined }, name) };
    throw methodNotAllowed(`the simulator does not implement ${def.resource}/${sub}`);
  }

  /** eviction, binding and log; the streaming ones (exec, attach, ...) want an upgrade. Undefined: not one of these. */
  private podSubresource(scope: Scope, info: RequestInfo, body: string): Reply | undefined {
    const name = info.name as string;
    const sub = info.subresource as string;
    if (sub === 'eviction' && info.verb === 'create') {
      deleteObject({ ...scope, subresource: undefined }, name);
      return {
        status: 201,
        json: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 },
      };
    }
    if (sub === 'binding' && info.verb === 'create')
      return this.bind(scope, name, decodeBody(body, 'application/json'));
    if (sub === 'log' && info.verb === 'get') {
      const pod = getObject({ ...scope, subresource: undefined }, name);
      return {
        status: 200,
        text: `${rfc3339(this.cluster.clock.now())} simulated container of pod ${pod.metadata.name}: no log\n`,
        contentType: 'text/plain',
      };
    }
    if (['exec', 'attach', 'portforward', 'proxy'].includes(sub))
      throw badRequest('Upgrade request required');
    return undefined;
  }

  /** A TokenRequest: a token for the account, for the audiences and lifetime asked (an hour by default). */
  private serviceAccountToken(scope: Scope, name: string, body: string): Reply {
    const c = this.cluster;
    const sa = getObject({ ...scope, subresource: undefined }, name);
    const req = decodeBody(body, 'application/json') ?? {};
    const seconds = req?.spec?.expirationSeconds ?? 3600;
    const audiences = req?.spec?.audiences ?? ['https://kubernetes.default.svc.cluster.local'];
    return {
      status: 201,
      json: {
        kind: 'TokenRequest',
        apiVersion: 'authentication.k8s.io/v1',
        // The request's time, and from 1.36 the account's UID (not on 1.33.13; 1.34 and 1.35 untested).
        metadata: {
          name,
          namespace: scope.namespace,
          ...(c.features.tokenRequestUid ? { uid: sa.metadata.uid } : {}),
          creationTimestamp: rfc3339(c.clock.now()),
        },
        spec: {
          audiences,
          expirationSeconds: seconds,
          boundObjectRef: null,
        },
        status: {
          token: mintServiceAccountToken(
            c,
            { namespace: scope.namespace as string, name, uid: sa.metadata.uid },
            audiences,
            c.clock.now() + seconds * 1000,
          ),
          expirationTimestamp: rfc3339(c.clock.now() + seconds * 1000),
        },
      },
    };
  }

  private bind(scope: Scope, name: string, binding: Json): Reply {
    const target = binding?.target?.name;
    if (!target) throw badRequest('Binding.target.name is required');
    const key = objectKey(scope.namespace, name);
    const pod = this.cluster.store.get('pods', key);
    if (!pod) throw notFound({ group: '', resource: 'pods' }, name);
    if (pod.spec.nodeName)
      throw new ApiError(
        409,
        'Conflict',
        `Operation cannot be fulfilled on pods/binding "${name}": pod ${name} is already assigned to node "${pod.spec.nodeName}"`,
        { name, kind: 'pods/binding' },
      );
    const bound = { ...pod, spec: { ...pod.spec, nodeName: target } };
    this.cluster.internalWrite('pods', key, withTopologyLabels(this.cluster, bound, target));
    return {
      status: 201,
      json: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 },
    };
  }

  /** Resources with no storage: reviews always allowed, component statuses healthy, bindings. */
  private virtual(def: ResourceDef, info: RequestInfo, body: string, req: IncomingMessage): Reply {
    const obj = decodeBody(body, req.headers['content-type']) ?? {};
    switch (def.resource) {
      case 'selfsubjectaccessreviews':
        if (info.verb !== 'create') break;
        return { status: 201, json: selfSubjectAccessReview(this.cluster, this.user, obj.spec) };
      case 'selfsubjectrulesreviews':
        if (info.verb !== 'create') break;
        return { status: 201, json: selfSubjectRulesReview(this.cluster, this.user, obj.spec) };
      case 'selfsubjectreviews':
        if (info.verb !== 'create') break;
        return { status: 201, json: selfSubjectReview(this.cluster, this.user) };
      case 'componentstatuses': {
        const item = (n: string) => ({
          kind: 'ComponentStatus',
          apiVersion: 'v1',
          metadata: { name: n },
          conditions: [{ type: 'Healthy', status: 'True', message: 'ok' }],
        });
        if (info.verb === 'get') return { status: 200, json: item(info.name as string) };
        if (info.verb === 'list')
          return {
            status: 200,
            json: {
              kind: 'ComponentStatusList',
              apiVersion: 'v1',
              metadata: {},
              items: ['controller-manager', 'etcd-0', 'scheduler'].map(item),
            },
          };
        break;
      }
      case 'bindings':
        if (info.verb !== 'create' || !info.namespace) break;
        return this.bind(
          {
            cluster: this.cluster,
            def: this.cluster.lookup('pods'),
            version: 'v1',
            namespace: info.namespace,
            manager: managerOf(req),
            dryRun: false,
            warnings: [],
            fieldValidation: 'Warn',
          },
          obj?.metadata?.name,
          obj,
        );
    }
    throw methodNotAllowed('the server does not allow this method on the requested resource');
  }
}

/** core/v1 pods, the only type the simulator answers in protobuf (encodePodList). */
function isCorePods(scope: Scope): boolean {
  return scope.def.resource === 'pods' && !scope.def.group && scope.version === 'v1' && !scope.subresource;
}

function tableListMeta(r: ListResult): JsonObject {
  const m: JsonObject = { resourceVersion: r.resourceVersion };
  if (r.continue) m.continue = r.continue;
  if (r.remainingItemCount !== undefined) m.remainingItemCount = r.remainingItemCount;
  return m;
}

function includeOf(q: URLSearchParams): IncludeObject {
  const v = q.get('includeObject');
  return v === 'None' || v === 'Object' ? v : 'Metadata';
}

function managerOf(req: IncomingMessage): string {
  const ua = req.headers['user-agent'];
  return typeof ua === 'string' && ua ? (ua.split('/')[0] ?? 'unknown') : 'unknown';
}

function deleteOptions(q: URLSearchParams, body: Json): DeleteOptions {
  const o: DeleteOptions = {};
  const g = q.get('gracePeriodSeconds') ?? body?.gracePeriodSeconds;
  if (g !== undefined && g !== null) o.gracePeriodSeconds = Number(g);
  if (isObject(body?.preconditions)) o.preconditions = body.preconditions;
  o.propagationPolicy = q.get('propagationPolicy') ?? body?.propagationPolicy;
  return o;
}
