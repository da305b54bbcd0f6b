/**
 * Raw JSON GETs over a ClusterClient's kubeconfig (same TLS, same credentials, same timeout, retry and
 * error policy through ClusterClient.call), for the large lists of a cycle. client-node's typed lists
 * rebuild every object field by field after JSON.parse, which costs about as much again as the parse
 * itself on 5,000-pod pages; nodescope reads a few fields and needs neither. Pages are handed to the
 * caller one at a time, so a cycle never holds a whole cluster's pods.
 * Responses are asked for gzip-compressed (kube-apiserver compresses a body above 128 KiB when asked:
 * a page of pods shrinks about 10-40 times) and decompressed as they arrive.
 * Capability-neutral: any worker that reads large lists of one cluster uses it.
 */
import type { IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { createGunzip } from 'node:zlib';
import { type CallOptions, type ClusterClient, followPages } from './client.js';
import { ClusterAccessError } from './errors.js';
import { isProtobuf, PROTOBUF_OR_JSON, statusText } from './protobuf.js';
import { writeGuard } from './write-guard.js';

/** A response's body as it completed: its content type and bytes (the reader's scratch: read at once). */
export interface Received {
  type: string;
  bytes: Buffer;
  text(): string;
  /** The response's Date header (the server's clock, to the second). */
  date?: string;
}

/** A list response as it comes off the wire: the items and the continue token. */
export interface ListObject<T> {
  items?: T[];
  metadata?: { continue?: string; resourceVersion?: string };
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface WatchOptions {
  /** The resourceVersion the watch starts after (a list's, or an earlier watch's last). */
  from: string;
  /** The server ends the watch after this many seconds (`timeoutSeconds`). */
  timeoutSeconds: number;
  /** The read is over once an event or bookmark at this resourceVersion or later has arrived. */
  until?: string;
  /**
   * The read is also over once nothing has arrived for this long (ms): the server sends what its watch
   * cache holds at once, so a quiet stream has delivered it. Ending early never loses a change (the
   * next watch starts after the last one seen); it only bounds the wait for changes still in flight.
   */
  quietMs?: number;
  /**
   * The read is also over at the first bookmark: the server sends one only after every change up to
   * its revision (the watch cache's, for the resource) has gone to this watcher, so the list is current
   * at that revision even when no change of its own came (a 3 s timeout brings one after about 1 s).
   */
  untilBookmark?: boolean;
}

export interface WatchResult {
  /** The newest resourceVersion seen (an event's or a bookmark's); `from` when nothing came. */
  rv: string;
  events: number;
  bookmarks: number;
  /**
   * `reached`: `until` was seen; `bookmark`: a bookmark came (untilBookmark); `quiet`: nothing came for
   * quietMs; `closed`: the server ended it.
   */
  end: 'reached' | 'bookmark' | 'quiet' | 'closed';
}

/**
 * Whether resourceVersion `a` is at or after `b`. resourceVersions are opaque to clients, but
 * kube-apiserver's are etcd revisions (decimal integers) and a watch delivers them in order; anything
 * else is never taken as having reached anything.
 */
export function atOrAfter(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b || !/^\d+$/.test(a) || !/^\d+$/.test(b)) return false;
  return BigInt(a) >= BigInt(b);
}

/** What toClusterAccessError recognises as a client-node ApiException (status, raw body, headers). */
class RawHttpError extends Error {
  constructor(
    readonly code: number,
    readonly body: string,
    readonly headers: Record<string, string>,
  ) {
    super(`HTTP-Code: ${code}`);
  }
}

interface Connection {
  /** The lists' and writes' sockets, kept alive within an invocation (closeIdle ends them after it). */
  agent: https.Agent;
  /**
   * Watches' own sockets: a watch holds one for seconds (a follow watches every kept list at once), so
   * they neither queue behind each other nor hold up the lists' pages. Not kept alive: a watch that
   * ends early drops its connection anyway, and one the server ended would sit idle until the next
   * minute, for every cluster the instance follows; a watch queued behind the 32 takes one over.
   */
  watchAgent: https.Agent;
  headers: Record<string, string>;
  base: URL;
}

const connections = new WeakMap<ClusterClient, Promise<Connection>>();

/** Concurrent watches per cluster: a follow's lists (nodes and one per node-scoped DaemonSet) at once. */
const MAX_WATCHES = 32;

async function connect(client: ClusterClient): Promise<Connection> {
  const opts: https.RequestOptions & { headers?: Record<string, string> } = { headers: {} };
  await client.kubeConfig.applyToHTTPSOptions(opts);
  const agent = (maxSockets: number, keepAlive: boolean) =>
    new https.Agent({
      keepAlive,
      maxSockets,
      ca: opts.ca,
      cert: opts.cert,
      key: opts.key,
      ...(opts.servername ? { servername: opts.servername } : {}),
      ...(opts.rejectUnauthorized === false ? { rejectUnauthorized: false } : {}),
    });
  return {
    agent: agent(4, true),
    watchAgent: agent(MAX_WATCHES, false),
    headers: { ...(opts.headers as Record<string, string>) },
    base: new URL(client.server),
  };
}

export interface RawStats {
  /** Requests sent (retries included), and how many of them were writes. */
  requests: number;
  writes: number;
  /** Response bytes as they came over the connection (compressed when the server compressed them). */
  wireBytes: number;
  /** Response bytes after decompression: the JSON text that was parsed. */
  decodedBytes: number;
  byOperation: Record<string, number>;
  /** CPU ms spent in JSON.parse, and in the callers' page handlers. */
  parseMs: number;
  pageMs: number;
  /** Lists read in JSON after a protobuf page that did not decode. */
  protobufFallbacks: number;
}

/** An ERROR event's Status, rejected as the same answer given directly would be (410 Expired, ...). */
function watchError(status: { code?: number } | undefined): RawHttpError {
  return new RawHttpError(status?.code ?? 500, JSON.stringify(status ?? {}), {});
}

/** A decoder's answer, or undefined when the bytes do not decode (a server's encoding we misread). */
function undecodedAsUndefined<T>(decode: (bytes: Uint8Array) => T, bytes: Uint8Array): T | undefined {
  try {
    return decode(bytes);
  } catch {
    return undefined;
  }
}

/** The scratch buffer grows in steps of this many bytes. */
const SCRATCH_STEP = 1 << 20;

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

export class RawReader {
  readonly stats: RawStats = {
    requests: 0,
    writes: 0,
    wireBytes: 0,
    decodedBytes: 0,
    byOperation: {},
    parseMs: 0,
    pageMs: 0,
    protobufFallbacks: 0,
  };
  private scratch: Buffer = Buffer.alloc(0);

  constructor(
    private readonly client: ClusterClient,
    /** `gzip: false` reads uncompressed (a comparison, or a proxy that mangles encodings). */
    private readonly opts: { gzip?: boolean } = {},
  ) {}

  private connection(): Promise<Connection> {
    let c = connections.get(this.client);
    if (!c) {
      c = connect(this.client);
      connections.set(this.client, c);
      c.catch(() => connections.delete(this.client));
    }
    return c;
  }

  /**
   * Closes the cluster's idle kept-alive sockets (requests in flight keep theirs): a follow or a cycle
   * calls it once done, so that a warm instance keeps no socket open between invocations for any of
   * the clusters it serves. Its next request opens a connection again.
   */
  async closeIdle(): Promise<void> {
    const c = connections.get(this.client);
    const conn = c && (await c.catch(() => undefined));
    for (const a of conn ? [conn.agent, conn.watchAgent] : [])
      for (const sockets of Object.values(a.freeSockets))
        for (const socket of sockets ?? []) socket.destroy();
  }

  /** Runs `work`, then closes the idle sockets it kept alive (closeIdle), also when it fails. */
  async closingIdle<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } finally {
      await this.closeIdle();
    }
  }

  /** Fresh credentials per request (EKS tokens expire; client-node's authenticators cache them). */
  private async authHeaders(): Promise<Record<string, string>> {
    const opts: https.RequestOptions & { headers?: Record<string, string> } = { headers: {} };
    await this.client.kubeConfig.applyToHTTPSOptions(opts);
    return (opts.headers ?? {}) as Record<string, string>;
  }

  /**
   * The body of a response. The chunks are copied into one scratch buffer that the reader keeps
   * (grown to its largest response) and decoded from there: a fresh Buffer.concat per response would
   * allocate the whole list a second time outside the heap, and that external memory is what drives
   * the major garbage collections of a cycle (each of which marks everything the process holds).
   * Decoding is synchronous, so requests in flight at the same time never share the buffer's contents.
   */
  private bytes(chunks: Buffer[], length: number): Buffer {
    if (chunks.length === 1) return chunks[0] as Buffer;
    if (this.scratch.length < length)
      this.scratch = Buffer.allocUnsafeSlow(Math.ceil(length / SCRATCH_STEP) * SCRATCH_STEP);
    let at = 0;
    for (const c of chunks) at += c.copy(this.scratch, at);
    return this.scratch.subarray(0, length);
  }

  private fetch(
    operation: string,
    path: string,
    query: Record<string, string | number | undefined>,
    signal: AbortSignal,
    write?: { method: string; body: string; contentType: string },
  ): Promise<string> {
    return this.fetchAs(operation, path, query, signal, { write, decode: (body) => body.text() });
  }

  /**
   * A request whose answer `decode` reads as it completes (the body's bytes are the reader's scratch
   * buffer, valid only until then); `accept` is the media types asked for (JSON unless said).
   */
  private fetchAs<R>(
    operation: string,
    path: string,
    query: Record<string, string | number | undefined>,
    signal: AbortSignal,
    how: {
      write?: { method: string; body: string; contentType: string };
      accept?: string;
      decode: (body: Received) => R;
    },
  ): Promise<R> {
    const { write } = how;
    return this.connection().then(async (conn) => {
      const url = new URL(conn.base.pathname.replace(/\/$/, '') + path, conn.base);
      for (const [k, v] of Object.entries(query))
        if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
      const auth = await this.authHeaders();
      return new Promise<R>((resolve, reject) => {
        const req = https.request(
          url,
          {
            agent: conn.agent,
            method: write?.method ?? 'GET',
            headers: {
              ...auth,
              accept: how.accept ?? 'application/json',
              ...(this.opts.gzip === false ? {} : { 'accept-encoding': 'gzip' }),
              // Always a length: Node sends a DELETE's body unframed otherwise, and the server reads
              // it as the start of the next request on the kept-alive connection (400 Bad Request).
              ...(write
                ? { 'content-type': write.contentType, 'content-length': Buffer.byteLength(write.body ?? '') }
                : {}),
            },
            signal,
          },
          (res) =>
            this.receive(
              res,
              { operation, request: `${write?.method ?? 'GET'} ${url.pathname}` },
              how.decode,
              resolve,
              reject,
            ),
        );
        req.on('error', reject);
        req.end(write?.body);
      });
    });
  }

  /**
   * The response's body as text, gunzipped on the way when the server compressed it; a non-2xx status
   * rejects with what the error mapping reads. A compressed body that does not decode (corrupt, or cut
   * short) rejects: the caller never sees part of a list.
   */
  private receive<R>(
    res: IncomingMessage,
    what: { operation: string; request: string },
    decode: (body: Received) => R,
    resolve: (out: R) => void,
    reject: (err: unknown) => void,
  ): void {
    const encoding = String(res.headers['content-encoding'] ?? 'identity').toLowerCase();
    res.on('error', reject);
    res.on('data', (d: Buffer) => {
      this.stats.wireBytes += d.length;
    });
    let body: Readable = res;
    if (encoding === 'gzip') {
      const gunzip = createGunzip();
      gunzip.on('error', (err: Error & { code?: string }) => {
        res.destroy();
        reject(
          this.undecodable(
            what,
            `the gzip-compressed response body does not decode (${err.message})`,
            err.code,
          ),
        );
      });
      body = res.pipe(gunzip);
    } else if (encoding !== 'identity') {
      res.destroy();
      reject(this.undecodable(what, `the response is encoded as "${encoding}", which was not asked for`));
      return;
    }
    const chunks: Buffer[] = [];
    let length = 0;
    body.on('data', (d: Buffer) => {
      chunks.push(d);
      length += d.length;
    });
    body.on('end', () => {
      this.stats.decodedBytes += length;
      const bytes = this.bytes(chunks, length);
      chunks.length = 0;
      const type = String(res.headers['content-type'] ?? '');
      const status = res.statusCode ?? 0;
      if (status >= 200 && status < 300) {
        try {
          const date = typeof res.headers.date === 'string' ? { date: res.headers.date } : {};
          return resolve(decode({ type, bytes, text: () => bytes.toString('utf8'), ...date }));
        } catch (err) {
          return reject(this.undecodable(what, (err as Error).message));
        }
      }
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers))
        if (typeof v === 'string') headers[k.toLowerCase()] = v;
      // A protobuf request's error comes back as a protobuf Status: read as the JSON it stands for.
      const text = isProtobuf(type) ? statusText(bytes) : bytes.toString('utf8');
      reject(new RawHttpError(status, text, headers));
    });
  }

  /** A response that arrived but cannot be read: names the cluster, the operation and the request. */
  private undecodable(what: { operation: string; request: string }, detail: string, code?: string): Error {
    return new ClusterAccessError({
      cluster: this.client.cluster,
      operation: what.operation,
      kind: 'internal',
      retryable: false,
      detail: `${what.request}: ${detail}`,
      ...(code ? { code } : {}),
    });
  }

  private count(operation: string): void {
    this.stats.requests++;
    this.stats.byOperation[operation] = (this.stats.byOperation[operation] ?? 0) + 1;
  }

  /**
   * The API server's clock: the Date header of its answer to GET /version (HTTP dates are whole
   * seconds), as epoch ms at the middle of that second; NaN when the server sends none.
   */
  async serverTime(): Promise<number> {
    const operation = 'read the server time';
    return this.client.call(operation, async (signal) => {
      this.count(operation);
      return this.fetchAs(operation, '/version', {}, signal, {
        decode: (body) => Date.parse(body.date ?? '') + 500,
      });
    });
  }

  /** One GET of a JSON document, parsed. */
  async get<T>(
    operation: string,
    path: string,
    query: Record<string, string | number | undefined> = {},
    call?: CallOptions,
  ): Promise<T> {
    return this.client.call(
      operation,
      async (signal) => {
        this.count(operation);
        const body = await this.fetch(operation, path, query, signal);
        const c0 = cpuMs();
        const out = JSON.parse(body) as T;
        this.stats.parseMs += cpuMs() - c0;
        return out;
      },
      call,
    );
  }

  /** A write (POST, PUT, PATCH, DELETE) of a JSON body, for objects client-node's models would not round-trip. */
  async send<T>(
    operation: string,
    method: 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    path: string,
    body: unknown,
    contentType = 'application/json',
    call?: CallOptions,
  ): Promise<T> {
    return this.client.call(
      operation,
      async (signal) => {
        this.count(operation);
        this.stats.writes++;
        const guard = writeGuard();
        await guard?.before(operation);
        const out = await this.fetch(operation, path, {}, signal, {
          method,
          body: JSON.stringify(body),
          contentType,
        });
        await guard?.after(operation);
        return JSON.parse(out) as T;
      },
      { idempotent: method !== 'POST', ...call },
    );
  }

  /**
   * A watch from `opts.from` (`allowWatchBookmarks`), each event handed to `onEvent` as it arrives,
   * until an event or bookmark at `opts.until` or later, or until the server ends the watch at its
   * timeout. Events come in resourceVersion order, so whatever ends the read, every change up to the
   * returned `rv` has been seen: a later watch from there misses nothing. An ERROR event (410 Expired:
   * `from` is beyond the server's watch history) rejects as the same error a direct answer would.
   * A retry starts again from `from`; replaying events in order leaves a keyed state the same.
   */
  async watch<T extends { metadata?: { resourceVersion?: string } }>(
    operation: string,
    path: string,
    query: Record<string, string | undefined>,
    onEvent: (type: WatchEventType, object: T) => void,
    opts: WatchOptions,
  ): Promise<WatchResult> {
    // The call's own timeout covers the server's, with room for the answer to start.
    const timeoutMs = opts.timeoutSeconds * 1000 + 10_000;
    return this.client.call(
      operation,
      async (signal) => {
        this.count(operation);
        const out: WatchResult = { rv: opts.from, events: 0, bookmarks: 0, end: 'closed' };
        await this.stream(
          operation,
          path,
          {
            ...query,
            watch: 'true',
            resourceVersion: opts.from,
            allowWatchBookmarks: 'true',
            timeoutSeconds: String(opts.timeoutSeconds),
          },
          signal,
          opts.quietMs,
          () => {
            out.end = 'quiet';
          },
          (line) => {
            const p0 = cpuMs();
            const ev = JSON.parse(line) as { type?: string; object?: T & { code?: number } };
            this.stats.parseMs += cpuMs() - p0;
            const rv = ev.object?.metadata?.resourceVersion;
            if (ev.type === 'ERROR') throw watchError(ev.object);
            if (ev.type === 'BOOKMARK') out.bookmarks++;
            else {
              out.events++;
              const c0 = cpuMs();
              onEvent(ev.type as WatchEventType, ev.object as T);
              this.stats.pageMs += cpuMs() - c0;
            }
            if (rv) out.rv = rv;
            if (atOrAfter(rv, opts.until)) out.end = 'reached';
            else if (ev.type === 'BOOKMARK' && opts.untilBookmark) out.end = 'bookmark';
            else return false;
            return true;
          },
        );
        return out;
      },
      { timeoutMs },
    );
  }

  /**
   * A streamed GET of newline-delimited JSON: each line to `onLine` until it returns true (the request
   * is then dropped), the response ends, or nothing arrives for `quietMs`. A non-2xx answer rejects as get's.
   */
  private stream(
    operation: string,
    path: string,
    query: Record<string, string | undefined>,
    signal: AbortSignal,
    quietMs: number | undefined,
    onQuiet: () => void,
    onLine: (line: string) => boolean,
  ): Promise<void> {
    return this.connection().then(async (conn) => {
      const url = new URL(conn.base.pathname.replace(/\/$/, '') + path, conn.base);
      for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') url.searchParams.set(k, v);
      const auth = await this.authHeaders();
      return new Promise<void>((resolve, reject) => {
        const req = https.request(
          url,
          { agent: conn.watchAgent, headers: { ...auth, accept: 'application/json' }, signal },
          (res) => {
            const status = res.statusCode ?? 0;
            if (status < 200 || status >= 300)
              return this.receive(
                res,
                { operation, request: `GET ${url.pathname}` },
                () => undefined,
                () => resolve(),
                reject,
              );
            const decoder = new StringDecoder('utf8');
            let rest = '';
            let quiet: NodeJS.Timeout | undefined;
            let heard = 0;
            // Quiet is time on the wire: the timer is armed again once a chunk is handled, and when it
            // fires the end waits one pass of the event loop's I/O, so data that came while this process
            // was busy (a long handler, a GC pause, another list's page) is read first.
            const hush = () => {
              clearTimeout(quiet);
              if (quietMs === undefined) return;
              const at = ++heard;
              quiet = setTimeout(
                () =>
                  setImmediate(() => {
                    if (heard !== at || res.complete || res.destroyed) return;
                    onQuiet();
                    req.destroy();
                    resolve();
                  }),
                quietMs,
              );
            };
            hush();
            res.on('close', () => clearTimeout(quiet));
            res.on('error', reject);
            res.on('data', (d: Buffer) => {
              hush();
              this.stats.wireBytes += d.length;
              this.stats.decodedBytes += d.length;
              rest += decoder.write(d);
              let nl = rest.indexOf('\n');
              while (nl >= 0) {
                const line = rest.slice(0, nl);
                rest = rest.slice(nl + 1);
                nl = rest.indexOf('\n');
                if (!line.trim()) continue;
                try {
                  if (!onLine(line)) continue;
                } catch (e) {
                  req.destroy();
                  return reject(e);
                }
                req.destroy();
                return resolve();
              }
              hush();
            });
            res.on('end', () => resolve());
          },
        );
        req.on('error', reject);
        req.end();
      });
    });
  }

  /**
   * Every page of a list (limit/continue), each handed to `onPage` and then dropped. A 410 Expired
   * continue token restarts the list once; onPage must tolerate seeing items again after `onRestart`.
   * Resolves to the list's resourceVersion (every page of one list has the same), where a watch can
   * take up from.
   */
  /**
   * One page asked for as protobuf (JSON if the server has no protobuf for it), decoded as it
   * completes; undefined when a protobuf answer does not decode, for the caller to ask again in JSON.
   */
  private getList<T>(
    operation: string,
    path: string,
    query: Record<string, string | number | undefined>,
    protobuf: (bytes: Uint8Array) => ListObject<T>,
  ): Promise<ListObject<T> | undefined> {
    return this.client.call(operation, async (signal) => {
      this.count(operation);
      return this.fetchAs(operation, path, query, signal, {
        accept: PROTOBUF_OR_JSON,
        decode: (body) => {
          const c0 = cpuMs();
          const page = isProtobuf(body.type)
            ? undecodedAsUndefined(protobuf, body.bytes)
            : (JSON.parse(body.text()) as ListObject<T>);
          this.stats.parseMs += cpuMs() - c0;
          return page;
        },
      });
    });
  }

  async list<T>(
    operation: string,
    path: string,
    query: Record<string, string | number | undefined>,
    onPage: (items: T[]) => void,
    opts: {
      pageSize: number;
      onRestart?: () => void;
      maxPages?: number;
      /** Asks for Kubernetes protobuf, read by this (a built-in type's list); JSON otherwise. */
      protobuf?: (bytes: Uint8Array) => ListObject<T>;
    },
  ): Promise<{ resourceVersion?: string }> {
    let resourceVersion: string | undefined;
    let protobuf = opts.protobuf;
    const pageQuery = (token: string | undefined) => ({ ...query, limit: opts.pageSize, continue: token });
    await followPages(
      { cluster: this.client.cluster, operation, maxPages: opts.maxPages },
      async (token) => {
        let page = protobuf ? await this.getList(operation, path, pageQuery(token), protobuf) : undefined;
        if (!page) {
          // A protobuf page that does not decode is asked for again in JSON (a continue token serves
          // either), and so is the rest of the list: counted, never a failed cycle.
          if (protobuf) this.stats.protobufFallbacks++;
          protobuf = undefined;
          page = await this.get<ListObject<T>>(operation, path, pageQuery(token));
        }
        const c0 = cpuMs();
        onPage(page.items ?? []);
        this.stats.pageMs += cpuMs() - c0;
        resourceVersion = page.metadata?.resourceVersion || undefined;
        return page.metadata?.continue || undefined;
      },
      () => opts.onRestart?.(),
    );
    return resourceVersion ? { resourceVersion } : {};
  }
}
