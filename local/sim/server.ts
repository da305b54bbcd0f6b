/**
 * One HTTPS endpoint per simulated cluster: bearer-token authentication, request statistics, fault
 * injection, the /_sim control endpoints (faults, stats, clock, nodes) for a simulator in another
 * process, and the apiserver handler.
 */
import { randomUUID, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { authenticate } from './authn.js';
import { attributesOf, authorize, forbidden, recordDenial } from './authz.js';
import type { ManualClock } from './clock.js';
import type { ClusterState } from './cluster.js';
import { acceptsGzip, DeferredBody } from './compression.js';
import { ApiError, PlainError, statusForCode } from './errors.js';
import type { Faults } from './faults.js';
import { ApiHandler, classify, parseRequest, type Reply } from './handler.js';
import { impersonate } from './impersonation.js';
import type { Json } from './json.js';
import { nodeControl } from './node-admin.js';
import { decodeProtobuf, encodeStatus, PROTOBUF, prefersProtobuf } from './protobuf.js';
import type { Recorder, RequestRecord } from './recorder.js';
import type { RequestInfo, UserInfo } from './state.js';
import type { Stats } from './stats.js';
import type { Fault, FaultRule } from './types.js';

const MAX_BODY = 3 * 1024 * 1024;

/**
 * kube-apiserver's http.Server (k8s.io/apiserver secure_serving.go): an idle kept-alive connection is
 * closed after 90 s (IdleTimeout), headers must come within 32 s (ReadHeaderTimeout). Node's defaults
 * (5 s idle) made a simulator busy serving a large list close connections whose next request was
 * already on the wire: the client read ECONNRESET where a real server would have answered.
 */
export const IDLE_TIMEOUT_MS = 90_000;
const READ_HEADER_TIMEOUT_MS = 32_000;

export interface ServerOptions {
  cluster: ClusterState;
  token: string;
  /** The CA client certificates must be signed by (they then authenticate as CN, groups O). */
  caPem: string;
  certPem: string;
  keyPem: string;
  host: string;
  port: number;
  faults: Faults;
  stats: Stats;
  /** Set when FLEETSCOPE_SIM_RECORD asks for a recording (npm run fidelity). */
  recorder?: Recorder;
  clock: ManualClock;
  /** Applies a clock change to every cluster of the simulator. */
  onClock: () => void;
}

/** What the recorder needs of a request that ends in an error before the handler ran. */
interface Seen {
  request?: RequestRecord;
  handled?: boolean;
}

/** What a simulator endpoint answers. */
interface ControlReply {
  status: number;
  json: Json;
}

/** A control request's body: JSON, or nothing. */
function controlBody(raw: string): Json {
  if (!raw.trim()) return {};
  try {
    return JSON.parse(raw);
  } catch {
    throw new ApiError(400, 'BadRequest', 'the body is not JSON');
  }
}

export class ClusterServer {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  /** TCP connections accepted since the start (what a client's keep-alive saves shows here). */
  private accepted = 0;
  private readonly watches = new Set<ServerResponse>();
  private readonly hung = new Set<ServerResponse>();
  private readonly handler: ApiHandler;
  url = '';

  constructor(private readonly o: ServerOptions) {
    this.handler = new ApiHandler({
      cluster: o.cluster,
      serverAddress: `${o.host}:443`,
      watches: this.watches,
    });
  }

  async start(): Promise<string> {
    const tls = { key: this.o.keyPem, cert: this.o.certPem, ca: this.o.caPem, requestCert: true };
    // rejectUnauthorized: false, as kube-apiserver: a client without a certificate may still use a token.
    const server = createServer({ ...tls, rejectUnauthorized: false }, (req, res) => {
      const seen: Seen = {};
      this.onRequest(req, res, seen).catch((err) => {
        // A client gone (reset, or closed before its body came) has nobody to answer: not an error.
        if (clientGone(req, res)) return void res.destroy();
        this.fail(res, err, this.statusAsProtobuf(req));
        // Refused before the handler (authentication, authorization): the handler records the rest.
        if (seen.request && !seen.handled && err instanceof ApiError)
          this.o.recorder?.request(seen.request, err.code, { json: err.toStatus() });
      });
    });
    server.on('connection', (s: Socket) => {
      this.accepted++;
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    server.on('tlsClientError', () => {
      /* a client that rejects our certificate, or resets the handshake: nothing to answer */
    });
    server.keepAliveTimeout = IDLE_TIMEOUT_MS;
    server.headersTimeout = READ_HEADER_TIMEOUT_MS;
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.o.port, this.o.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    const addr = server.address() as AddressInfo;
    const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
    this.url = `https://${host}:${addr.port}`;
    return this.url;
  }

  /** Client connections open now (in use or kept alive idle), and accepted since the start. */
  connections(): { open: number; accepted: number } {
    return { open: this.sockets.size, accepted: this.accepted };
  }

  async stop(): Promise<void> {
    for (const r of [...this.watches, ...this.hung]) r.destroy();
    this.watches.clear();
    this.hung.clear();
    const s = this.server;
    if (!s) return;
    await new Promise<void>((resolve) => {
      s.close(() => resolve());
      s.closeAllConnections();
      for (const sock of this.sockets) sock.destroy();
    });
  }

  private authorized(req: IncomingMessage): boolean {
    const h = req.headers.authorization;
    if (typeof h !== 'string' || !h.startsWith('Bearer ')) return false;
    const got = Buffer.from(h.slice(7).trim());
    const want = Buffer.from(this.o.token);
    return got.length === want.length && timingSafeEqual(got, want);
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse, seen: Seen): Promise<void> {
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const cluster = this.o.cluster;
    if (url.startsWith('/_sim/')) return this.control(req, res, method, url);
    const info = parseRequest(method, url);
    const kind = classify(info, cluster);
    this.o.stats.record(method, kind);
    const faults = this.o.faults.take(cluster.name, method, url, kind);
    for (const f of faults) if (f.type === 'latency') await new Promise((r) => setTimeout(r, f.ms));
    const terminal = faults.find((f) => f.type !== 'latency');
    if (terminal && this.applyFault(terminal, req, res)) return;
    const actor = info.type === 'health' ? undefined : authenticate(cluster, this.o.token, req);
    if (!actor && info.type !== 'health') {
      req.resume();
      throw new ApiError(401, 'Unauthorized', 'Unauthorized');
    }
    const user = actor && impersonateOrRefuse(cluster, actor, req);
    seen.request = { method, path: url, user: user && { username: user.username, groups: user.groups } };
    if (user && cluster.spec.rbac) {
      const attrs = attributesOf(info, user);
      const decision = authorize(cluster, attrs);
      if (!decision.allowed) {
        req.resume();
        recordDenial(cluster, attrs);
        throw forbidden(attrs, decision.reason);
      }
    }
    const body = requestText(req, await readBody(req));
    const record = {
      ...seen.request,
      method,
      path: url,
      body: body || undefined,
      contentType: req.headers['content-type'],
    };
    if (cluster.controllers) cluster.kubelet.beforeRequest();
    cluster.settle();
    const handle = () => this.handler.handle(info, req, body, user);
    seen.handled = true;
    const reply = this.o.recorder ? this.o.recorder.serve(record, handle) : handle();
    cluster.settle();
    this.write(res, reply, method === 'HEAD', gzipEligible(info, req));
  }

  /** Applies a terminal fault; true when the request is finished (or deliberately never will be). */
  private applyFault(f: Fault, req: IncomingMessage, res: ServerResponse): boolean {
    switch (f.type) {
      case 'reset':
        req.socket.destroy();
        return true;
      case 'hang':
        this.hung.add(res);
        res.on('close', () => this.hung.delete(res));
        req.resume();
        return true;
      case 'status': {
        req.resume();
        const headers: Record<string, string> = {};
        if (f.code === 429) {
          // API Priority and Fairness answers in plain text with Retry-After (facts 6.4).
          res.writeHead(429, {
            'Content-Type': 'text/plain; charset=utf-8',
            'Retry-After': String(f.retryAfterSeconds ?? 1),
            'X-Kubernetes-Pf-Flowschema-Uid': randomUUID(),
            'X-Kubernetes-Pf-Prioritylevel-Uid': randomUUID(),
          });
          res.end('Too many requests, please try again later.\n');
          return true;
        }
        if (f.retryAfterSeconds) headers['Retry-After'] = String(f.retryAfterSeconds);
        const err = statusForCode(f.code, undefined, f.retryAfterSeconds);
        this.sendStatus(res, err, headers, this.statusAsProtobuf(req));
        return true;
      }
      default:
        return false;
    }
  }

  /** The simulator's own endpoints (/_sim/...): faults, request statistics, the clock, nodes. */
  private async control(
    req: IncomingMessage,
    res: ServerResponse,
    method: string,
    url: string,
  ): Promise<void> {
    if (!this.authorized(req)) {
      req.resume();
      throw new ApiError(401, 'Unauthorized', 'Unauthorized');
    }
    const path = url.split('?')[0] as string;
    const body = controlBody((await readBody(req)).toString('utf8'));
    const reply = this.faultControl(method, path, body) ?? this.statsAndClock(method, path, body);
    if (reply) return this.sendJson(res, reply.status, reply.json);
    if (path.startsWith('/_sim/nodes')) {
      if (this.o.cluster.controllers) this.o.cluster.kubelet.beforeRequest();
      const done = nodeControl(this.o.cluster, method, path, body);
      if (done) return this.sendJson(res, done.status, done.json);
    }
    throw new ApiError(404, 'NotFound', `no simulator endpoint ${method} ${path}`, {});
  }

  /** Faults injected into, listed for and cleared from this cluster (a rule names no other cluster). */
  private faultControl(method: string, path: string, body: Json): ControlReply | undefined {
    const name = this.o.cluster.name;
    if (path === '/_sim/faults' && method === 'POST') {
      try {
        const { cluster: _ignored, ...rule } = body as FaultRule;
        return { status: 201, json: { id: this.o.faults.inject({ ...rule, cluster: name }) } };
      } catch (err) {
        throw new ApiError(400, 'BadRequest', err instanceof Error ? err.message : String(err));
      }
    }
    if (path === '/_sim/faults' && method === 'DELETE') {
      this.o.faults.clearCluster(name);
      return { status: 200, json: {} };
    }
    if (path.startsWith('/_sim/faults/') && method === 'DELETE') {
      this.o.faults.clear(decodeURIComponent(path.slice('/_sim/faults/'.length)));
      return { status: 200, json: {} };
    }
    if (path === '/_sim/faults' && method === 'GET')
      return { status: 200, json: { faults: this.o.faults.list().filter((f) => f.rule.cluster === name) } };
    return undefined;
  }

  /** Request statistics (read, reset) and the clock (read, advance or set). */
  private statsAndClock(method: string, path: string, body: Json): ControlReply | undefined {
    if (path === '/_sim/stats' && method === 'GET') return { status: 200, json: this.o.stats.snapshot() };
    if (path === '/_sim/stats' && method === 'DELETE') {
      this.o.stats.reset();
      return { status: 200, json: {} };
    }
    if (path === '/_sim/clock' && method === 'GET') return { status: 200, json: { now: this.o.clock.now() } };
    if (path === '/_sim/clock' && method === 'POST') {
      if (typeof body.advanceMs === 'number') this.o.clock.advance(body.advanceMs);
      else if (typeof body.now === 'number') this.o.clock.set(body.now);
      else throw new ApiError(400, 'BadRequest', 'expected {"advanceMs": <ms>} or {"now": <ms since epoch>}');
      this.o.onClock();
      return { status: 200, json: { now: this.o.clock.now() } };
    }
    return undefined;
  }

  private write(res: ServerResponse, reply: Reply, head: boolean, gzip: boolean): void {
    const headers: Record<string, string | string[]> = {
      'Audit-Id': randomUUID(),
      'Cache-Control': 'no-cache, private',
      ...(reply.headers ?? {}),
    };
    if (reply.stream) {
      res.writeHead(reply.status, { ...headers, 'Content-Type': reply.contentType ?? 'application/json' });
      if (head) return void res.end();
      // A watch's headers go out at once, as the apiserver flushes them before any event.
      res.flushHeaders();
      reply.stream(res);
      return;
    }
    if (reply.body) {
      const contentType = reply.contentType ?? 'application/json';
      const out = new DeferredBody(res, reply.status, { ...headers, 'Content-Type': contentType }, gzip);
      if (head) return void out.end();
      reply.body(out);
      return;
    }
    if (reply.bytes !== undefined) {
      const contentType = reply.contentType ?? 'application/octet-stream';
      this.sendBytes(res, reply.status, reply.bytes, headers, contentType, head, gzip);
      return;
    }
    if (reply.text !== undefined) {
      res.writeHead(reply.status, {
        ...headers,
        'Content-Type': reply.contentType ?? 'text/plain; charset=utf-8',
      });
      res.end(head ? undefined : reply.text);
      return;
    }
    this.sendJson(res, reply.status, reply.json, headers, reply.contentType, head, gzip);
  }

  private sendJson(
    res: ServerResponse,
    status: number,
    body: Json,
    headers: Record<string, string | string[]> = {},
    contentType = 'application/json',
    head = false,
    gzip = false,
  ): void {
    const text = Buffer.from(`${JSON.stringify(body)}\n`, 'utf8');
    this.sendBytes(res, status, text, headers, contentType, head, gzip);
  }

  /** A whole document (JSON text or protobuf bytes), framed and compressed as kube-apiserver's Go server does. */
  private sendBytes(
    res: ServerResponse,
    status: number,
    body: Buffer,
    headers: Record<string, string | string[]>,
    contentType: string,
    head: boolean,
    gzip: boolean,
  ): void {
    if (!head) {
      new DeferredBody(res, status, { ...headers, 'Content-Type': contentType }, gzip).end(body);
      return;
    }
    res.writeHead(status, { ...headers, 'Content-Type': contentType, 'Content-Length': body.length });
    res.end();
  }

  /** A Status failure: in protobuf for a request that prefers it (statusAsProtobuf), JSON otherwise. */
  private sendStatus(
    res: ServerResponse,
    err: ApiError,
    headers: Record<string, string | string[]>,
    protobuf: boolean,
  ): void {
    if (protobuf)
      this.sendBytes(res, err.code, encodeStatus(err.toStatus()), headers, PROTOBUF, false, false);
    else this.sendJson(res, err.code, err.toStatus(), headers);
  }

  /**
   * Whether a request's error is answered as a protobuf Status: an API request for a built-in type (a
   * custom resource has no protobuf, upstream negotiates JSON for it) whose Accept header prefers
   * protobuf. The simulator answers protobuf only for pod lists, but kube-apiserver negotiates the
   * Status of every built-in type's request, whatever the simulator has for its successful answer.
   */
  private statusAsProtobuf(req: IncomingMessage): boolean {
    const url = req.url ?? '/';
    if (url.startsWith('/_sim/') || !prefersProtobuf(req.headers.accept)) return false;
    try {
      const info = parseRequest(req.method ?? 'GET', url);
      return info.type === 'resource' && classify(info, this.o.cluster) !== 'customresources';
    } catch {
      return false; // a path that does not parse (bad escapes) is refused in JSON, as before
    }
  }

  private fail(res: ServerResponse, err: unknown, protobuf: boolean): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    if (err instanceof PlainError) {
      res.writeHead(err.code, {
        'Content-Type': 'text/plain; charset=utf-8',
        'X-Content-Type-Options': 'nosniff',
        ...err.headers,
      });
      res.end(err.text);
      return;
    }
    const e =
      err instanceof ApiError
        ? err
        : new ApiError(
            500,
            'InternalError',
            `Internal error occurred: ${err instanceof Error ? err.message : String(err)}`,
            {},
          );
    if (!(err instanceof ApiError)) console.error('fleetscope sim: internal error', err);
    const headers: Record<string, string> = {
      'Audit-Id': randomUUID(),
      'Cache-Control': 'no-cache, private',
    };
    if (e.details?.retryAfterSeconds) headers['Retry-After'] = String(e.details.retryAfterSeconds);
    // A 406 is written as JSON: upstream writes a failed negotiation's error raw (WriteRawJSON).
    this.sendStatus(res, e, headers, protobuf && e.code !== 406);
  }
}

/** Whether the client went away before its answer: its connection reset or closed, the request aborted. */
function clientGone(req: IncomingMessage, res: ServerResponse): boolean {
  return req.errored !== null || res.destroyed || req.socket.destroyed;
}

/** Whether a response may be gzip-compressed: API objects (not watches) for a client that asks. */
function gzipEligible(info: RequestInfo, req: IncomingMessage): boolean {
  if (info.type !== 'resource' && info.type !== 'discovery') return false;
  return info.verb !== 'watch' && acceptsGzip(req.headers['accept-encoding']);
}

/** The body as JSON text: protobuf bodies (kubectl's typed clients) are decoded to the JSON they stand for. */
function requestText(req: IncomingMessage, body: Buffer): string {
  const ct = String(req.headers['content-type'] ?? '')
    .split(';')[0]
    ?.trim();
  if (ct !== PROTOBUF || body.length === 0) return body.toString('utf8');
  req.headers['content-type'] = 'application/json';
  return JSON.stringify(decodeProtobuf(body));
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) {
        reject(new ApiError(413, 'RequestEntityTooLarge', 'Request entity too large: limit is 3145728', {}));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** The user a request runs as (impersonation headers honoured); the request's body is drained on refusal. */
function impersonateOrRefuse(cluster: ClusterState, actor: UserInfo, req: IncomingMessage): UserInfo {
  try {
    return impersonate(cluster, actor, req);
  } catch (err) {
    req.resume();
    throw err;
  }
}
