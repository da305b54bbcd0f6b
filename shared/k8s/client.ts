/**
 * ClusterClient: everything a handler needs to talk to ONE cluster safely.
 *
 * Every request goes through {@link ClusterClient.call}, which gives it
 *  - a timeout: an AbortSignal per attempt, handed to undici's fetch by a client-node middleware (so
 *    the socket is really aborted, during connect, headers or body), and raced so that the call
 *    settles on time even if something ignores the signal;
 *  - retries with exponential backoff and jitter on 429/500/502/503/504 and connection failures,
 *    honouring Retry-After (capped), within a budget of attempts and elapsed time;
 *  - a {@link ClusterAccessError} naming the cluster and the operation when it gives up;
 *  - a count of the HTTP requests actually sent.
 *
 * The middleware also reuses one undici dispatcher (connection pool) per client: client-node 2.0.1
 * builds a new one for every request, which would mean a TLS handshake per request.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  ApiextensionsV1Api,
  AppsV1Api,
  type ConfigurationOptions,
  CoreV1Api,
  CustomObjectsApi,
  createConfiguration,
  type KubeConfig,
  type Middleware,
  type NodeMetric,
  PatchStrategy,
  type PodMetric,
  type RequestContext,
  SchedulingV1Api,
  ServerConfiguration,
  setHeaderOptions,
  VersionApi,
} from '@kubernetes/client-node';
import { CallTimeout, ClusterAccessError, toClusterAccessError } from './errors.js';
import { type BuildKubeConfigOptions, buildKubeConfig, type KubeconfigInfo } from './kubeconfig.js';
import { redact, redactFields } from './redact.js';
import { DEFAULT_RETRY_POLICY, isRetryable, type RetryPolicy, retryDelay } from './retry.js';
import { writeGuard } from './write-guard.js';

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_PAGE_SIZE = 500;

/** The logging surface used (Powertools Logger and console both fit). Fields are redacted first. */
export interface ClusterLogger {
  warn(message: string, fields?: Record<string, unknown>): void;
  debug?(message: string, fields?: Record<string, unknown>): void;
}

export interface ClusterClientOptions {
  /** Per-attempt timeout in ms (default 10 s). */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** `limit` for list pages (default 500). */
  pageSize?: number;
  /** Called when the server answers 401 (the connector drops its cached client and credentials). */
  onUnauthorized?: (err: ClusterAccessError) => void;
  logger?: ClusterLogger;
  /** Called for every HTTP request sent (the connector sums requests across clients). */
  onRequest?: (operation: string) => void;
  /** Credential-free facts about the kubeconfig (set by {@link ClusterClient.fromKubeconfig}). */
  info?: KubeconfigInfo;
  /** Test hooks. */
  random?: () => number;
  now?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export interface CallOptions {
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /**
   * Whether repeating the request is harmless (default true: reads, patches without preconditions,
   * creates that fail with AlreadyExists). When false only 429 is retried.
   */
  idempotent?: boolean;
  /** Aborts the call (and its waits) from outside. */
  signal?: AbortSignal;
  /**
   * HTTP statuses the caller handles as answers (a 404 for "absent", a 409 for "created meanwhile"):
   * such a failure is logged at debug, not as a warning.
   */
  expected?: readonly number[];
}

export interface ClusterClientStats {
  /** HTTP requests sent (retries and pages included). */
  requests: number;
  /** Retries performed. */
  retries: number;
  /** Calls that ended in an error. */
  failures: number;
  /** Requests per operation name. */
  byOperation: Record<string, number>;
}

/** What a list page function receives: spread it into the client-node list call. */
export interface PageRequest {
  limit: number;
  _continue?: string;
}

/** A list response: client-node's typed lists (`metadata._continue`) or raw JSON (`metadata.continue`). */
export interface ListPage<T> {
  items?: T[];
  metadata?: { _continue?: string; continue?: string; resourceVersion?: string };
}

export interface ListAllOptions {
  pageSize?: number;
  /** Stop with an error after this many pages (a server handing out endless continue tokens). */
  maxPages?: number;
  call?: CallOptions;
}

export type PatchType = 'strategic-merge' | 'merge' | 'json';

/** client-node options that send a patch with the given Content-Type (the default is JSON patch). */
export function patchOptions(type: PatchType, base?: ConfigurationOptions): ConfigurationOptions {
  const ct =
    type === 'strategic-merge'
      ? PatchStrategy.StrategicMergePatch
      : type === 'merge'
        ? PatchStrategy.MergePatch
        : PatchStrategy.JsonPatch;
  return setHeaderOptions('Content-Type', ct, base);
}

interface CallScope {
  signal: AbortSignal;
  operation: string;
  /** A write was sent in this scope and its answer is awaited (the write guard learns the outcome). */
  writing?: boolean;
}

type Dispatcher = NonNullable<ReturnType<RequestContext['getDispatcher']>>;

/** Sleeps at least `ms` (timers may fire up to 1 ms early against performance.now), abortable. */
const defaultSleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const end = performance.now() + ms;
    let t: NodeJS.Timeout;
    const onAbort = () => {
      clearTimeout(t);
      reject(signal?.reason);
    };
    const tick = () => {
      const left = end - performance.now();
      if (left > 0) {
        t = setTimeout(tick, Math.ceil(left));
        return;
      }
      signal?.removeEventListener('abort', onAbort);
      resolve();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    t = setTimeout(tick, Math.ceil(ms));
  });

export class ClusterClient {
  readonly cluster: string;
  /** The API server URL (no credentials). */
  readonly server: string;
  readonly kubeConfig: KubeConfig;
  readonly info?: KubeconfigInfo;

  readonly core: CoreV1Api;
  readonly apps: AppsV1Api;
  readonly scheduling: SchedulingV1Api;
  readonly custom: CustomObjectsApi;
  readonly apiextensions: ApiextensionsV1Api;
  readonly version: VersionApi;

  private readonly timeoutMs: number;
  private readonly retry: RetryPolicy;
  private readonly pageSize: number;
  private readonly opts: ClusterClientOptions;
  private readonly scope = new AsyncLocalStorage<CallScope>();
  private readonly now: () => number;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private dispatcher: Dispatcher | undefined;
  private closed = false;
  private counters: ClusterClientStats = { requests: 0, retries: 0, failures: 0, byOperation: {} };

  constructor(cluster: string, kubeConfig: KubeConfig, opts: ClusterClientOptions = {}) {
    const k8sCluster = kubeConfig.getCurrentCluster();
    if (!k8sCluster)
      throw new ClusterAccessError({
        cluster,
        operation: 'create client',
        kind: 'kubeconfig',
        retryable: false,
        detail: 'the kubeconfig has no current cluster',
      });
    if (k8sCluster.skipTLSVerify)
      throw new ClusterAccessError({
        cluster,
        operation: 'create client',
        kind: 'kubeconfig',
        retryable: false,
        detail:
          'the kubeconfig turns TLS verification off (insecure-skip-tls-verify); fleetscope keeps it on',
      });
    this.cluster = cluster;
    this.kubeConfig = kubeConfig;
    this.server = k8sCluster.server;
    this.info = opts.info;
    this.opts = opts;
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.retry = { ...DEFAULT_RETRY_POLICY, ...opts.retry };
    this.pageSize = opts.pageSize ?? DEFAULT_PAGE_SIZE;
    this.now = opts.now ?? Date.now;
    this.sleep = opts.sleep ?? defaultSleep;

    const middleware: Middleware = {
      pre: async (ctx) => this.guardWrite(this.beforeRequest(ctx)),
      post: async (rsp) => {
        const scope = this.scope.getStore();
        if (scope?.writing && rsp.httpStatusCode >= 200 && rsp.httpStatusCode < 300)
          await writeGuard()?.after(scope.operation);
        if (scope) scope.writing = false;
        return rsp;
      },
    };
    const config = createConfiguration({
      baseServer: new ServerConfiguration(k8sCluster.server, {}),
      authMethods: { default: kubeConfig },
      promiseMiddleware: [middleware],
    });
    this.core = new CoreV1Api(config);
    this.apps = new AppsV1Api(config);
    this.scheduling = new SchedulingV1Api(config);
    this.custom = new CustomObjectsApi(config);
    this.apiextensions = new ApiextensionsV1Api(config);
    this.version = new VersionApi(config);
  }

  /** Parses and validates a kubeconfig (one context) and builds a client for it. */
  static fromKubeconfig(text: string, opts: BuildKubeConfigOptions & ClusterClientOptions): ClusterClient {
    const { kubeConfig, info } = buildKubeConfig(text, opts);
    return new ClusterClient(opts.cluster, kubeConfig, { ...opts, info });
  }

  /** Runs in client-node's middleware chain for every HTTP request this client's APIs send. */
  private beforeRequest(ctx: RequestContext): RequestContext {
    const scope = this.scope.getStore();
    const op = scope?.operation ?? '(outside call)';
    this.counters.requests++;
    this.counters.byOperation[op] = (this.counters.byOperation[op] ?? 0) + 1;
    this.opts.onRequest?.(op);
    // A request made outside call() still gets the default timeout.
    ctx.setSignal(scope?.signal ?? AbortSignal.timeout(this.timeoutMs));
    const fresh = ctx.getDispatcher();
    if (this.dispatcher) ctx.setDispatcher(this.dispatcher);
    else if (fresh) this.dispatcher = fresh;
    return ctx;
  }

  /** A write (any method but GET) passes the guard of the code that sends it, if any (./write-guard.ts). */
  private async guardWrite(ctx: RequestContext): Promise<RequestContext> {
    const guard = writeGuard();
    const scope = this.scope.getStore();
    if (!guard || ctx.getHttpMethod() === 'GET') return ctx;
    await guard.before(scope?.operation ?? '(outside call)');
    if (scope) scope.writing = true;
    return ctx;
  }

  /**
   * Runs `fn` (one or more client-node requests) with this client's timeout, retry policy and error
   * handling. `fn` receives the attempt's AbortSignal for anything it does besides client-node calls.
   */
  async call<T>(
    operation: string,
    fn: (signal: AbortSignal) => Promise<T>,
    opts: CallOptions = {},
  ): Promise<T> {
    if (this.closed) throw this.closedError(operation);
    const policy: RetryPolicy = { ...this.retry, ...opts.retry };
    const timeoutMs = opts.timeoutMs ?? this.timeoutMs;
    const idempotent = opts.idempotent ?? true;
    const started = this.now();
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.attempt(operation, fn, timeoutMs, opts.signal);
      } catch (raw) {
        const err = toClusterAccessError(raw, { cluster: this.cluster, operation, server: this.server });
        const elapsed = this.now() - started;
        if (err.status === 401) this.opts.onUnauthorized?.(err);
        const step = this.retryStep(err, attempt, elapsed, policy, idempotent, opts.signal);
        if (!step.retry)
          throw this.fail(err, attempt, elapsed, step.gaveUp, step.gaveUp ? undefined : opts.expected);
        await this.waitToRetry(operation, err, attempt, step.delayMs, started, opts.signal);
      }
    }
  }

  /** Whether a failed attempt is tried again, and after how long; or why not (a spent budget says so). */
  private retryStep(
    err: ClusterAccessError,
    attempt: number,
    elapsed: number,
    policy: RetryPolicy,
    idempotent: boolean,
    signal: AbortSignal | undefined,
  ): { retry: true; delayMs: number } | { retry: false; gaveUp?: string } {
    if (!isRetryable(err, policy, idempotent) || signal?.aborted) return { retry: false };
    if (attempt >= policy.maxAttempts)
      return { retry: false, gaveUp: `gave up: retry budget of ${policy.maxAttempts} attempts used` };
    const delayMs = retryDelay(err, attempt, policy, this.opts.random);
    if (elapsed + delayMs >= policy.maxElapsedMs)
      return {
        retry: false,
        gaveUp: `gave up: waiting ${delayMs} ms more would exceed the retry budget of ${policy.maxElapsedMs} ms`,
      };
    return { retry: true, delayMs };
  }

  /** Logs the retry and waits for it; an abort meanwhile ends the call. */
  private async waitToRetry(
    operation: string,
    err: ClusterAccessError,
    attempt: number,
    delayMs: number,
    started: number,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    this.counters.retries++;
    this.log('warn', 'retrying cluster API request', {
      cluster: this.cluster,
      operation,
      attempt,
      delayMs,
      status: err.status,
      reason: err.reason,
      code: err.code,
      error: err.detail,
    });
    try {
      await this.sleep(delayMs, signal);
    } catch {
      throw this.fail(
        new ClusterAccessError({
          cluster: this.cluster,
          operation,
          kind: 'aborted',
          retryable: false,
          detail: 'the call was aborted while waiting to retry',
        }),
        attempt,
        this.now() - started,
      );
    }
  }

  private async attempt<T>(
    operation: string,
    fn: (signal: AbortSignal) => Promise<T>,
    timeoutMs: number,
    outer?: AbortSignal,
  ): Promise<T> {
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(new CallTimeout(timeoutMs)), timeoutMs);
    const onOuter = () => ac.abort(new DOMException('the call was aborted', 'AbortError'));
    if (outer?.aborted) onOuter();
    outer?.addEventListener('abort', onOuter, { once: true });
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(ac.signal.reason);
      if (ac.signal.aborted) onAbort();
      else ac.signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const work = this.scope.run({ signal: ac.signal, operation }, () =>
        Promise.resolve().then(() => fn(ac.signal)),
      );
      // Whichever loses the race must not surface as an unhandled rejection.
      work.catch(() => {});
      aborted.catch(() => {});
      return await Promise.race([work, aborted]);
    } finally {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onOuter);
      if (onAbort) ac.signal.removeEventListener('abort', onAbort);
    }
  }

  private fail(
    err: ClusterAccessError,
    attempts: number,
    elapsedMs: number,
    note?: string,
    expected?: readonly number[],
  ): ClusterAccessError {
    this.counters.failures++;
    const out = attempts > 1 || note ? err.withAttempts(attempts, elapsedMs, note) : err;
    const answer = err.status !== undefined && expected?.includes(err.status);
    this.log(answer ? 'debug' : 'warn', 'cluster API call failed', out.toLog());
    return out;
  }

  private closedError(operation: string): ClusterAccessError {
    return new ClusterAccessError({
      cluster: this.cluster,
      operation,
      kind: 'internal',
      retryable: true,
      detail:
        'this client was closed (its kubeconfig expired or was invalidated); get a fresh one from the connector',
    });
  }

  private log(level: 'warn' | 'debug', message: string, fields: Record<string, unknown>): void {
    const logger = this.opts.logger;
    if (!logger) return;
    const safe = redactFields(fields);
    if (level === 'warn') logger.warn(redact(message), safe);
    else logger.debug?.(redact(message), safe);
  }

  /**
   * Gathers every item of a list, following `continue` tokens with pages of `limit` items. A 410
   * Expired token (the snapshot was compacted) restarts the list from the beginning, once.
   *
   *   await client.listAll('list nodes', (page) => client.core.listNode({ ...page, labelSelector }))
   */
  async listAll<T>(
    operation: string,
    pageFn: (page: PageRequest, signal: AbortSignal) => Promise<ListPage<T>>,
    opts: ListAllOptions = {},
  ): Promise<T[]> {
    const limit = opts.pageSize ?? this.pageSize;
    let items: T[] = [];
    await followPages(
      { cluster: this.cluster, operation, maxPages: opts.maxPages },
      async (token) => {
        const page: PageRequest = token === undefined ? { limit } : { limit, _continue: token };
        const res = await this.call(operation, (signal) => pageFn(page, signal), opts.call);
        if (res?.items) for (const it of res.items) items.push(it);
        return res?.metadata?._continue || res?.metadata?.continue || undefined;
      },
      (pagesDone) => {
        items = [];
        this.log('warn', 'list continue token expired; restarting the list', {
          cluster: this.cluster,
          operation,
          pagesDone,
        });
      },
    );
    return items;
  }

  /** NodeMetrics from metrics.k8s.io/v1beta1 (through CustomObjectsApi, so timeouts and retries apply). */
  listNodeMetrics(opts: { labelSelector?: string; call?: CallOptions } = {}): Promise<NodeMetric[]> {
    return this.listAll<NodeMetric>(
      'list node metrics',
      (page) =>
        this.custom.listClusterCustomObject({
          group: 'metrics.k8s.io',
          version: 'v1beta1',
          plural: 'nodes',
          labelSelector: opts.labelSelector,
          ...page,
        }) as Promise<ListPage<NodeMetric>>,
      { call: opts.call },
    );
  }

  /** PodMetrics from metrics.k8s.io/v1beta1, in one namespace or all. */
  listPodMetrics(
    opts: { namespace?: string; labelSelector?: string; fieldSelector?: string; call?: CallOptions } = {},
  ): Promise<PodMetric[]> {
    const common = {
      group: 'metrics.k8s.io',
      version: 'v1beta1',
      plural: 'pods',
      labelSelector: opts.labelSelector,
      fieldSelector: opts.fieldSelector,
    };
    return this.listAll<PodMetric>(
      'list pod metrics',
      (page) =>
        (opts.namespace
          ? this.custom.listNamespacedCustomObject({ ...common, namespace: opts.namespace, ...page })
          : this.custom.listClusterCustomObject({ ...common, ...page })) as Promise<ListPage<PodMetric>>,
      { call: opts.call },
    );
  }

  /**
   * A patch call with the right Content-Type:
   *
   *   client.patch('resize pod', 'strategic-merge', (o) =>
   *     client.core.patchNamespacedPodResize({ name, namespace, body }, o))
   */
  patch<T>(
    operation: string,
    type: PatchType,
    fn: (options: ConfigurationOptions, signal: AbortSignal) => Promise<T>,
    opts?: CallOptions,
  ): Promise<T> {
    const options = patchOptions(type);
    return this.call(operation, (signal) => fn(options, signal), opts);
  }

  stats(): ClusterClientStats {
    return { ...this.counters, byOperation: { ...this.counters.byOperation } };
  }

  resetStats(): void {
    this.counters = { requests: 0, retries: 0, failures: 0, byOperation: {} };
  }

  /** Closes pooled connections; later calls fail with a clear error. */
  async close(): Promise<void> {
    this.closed = true;
    const d = this.dispatcher;
    this.dispatcher = undefined;
    if (d) await d.destroy().catch(() => {});
  }
}

/**
 * Follows a list's continue tokens: `page(token)` reads one page (token undefined: the first) and returns
 * the next token. A 410 Expired token (the snapshot was compacted) restarts the list from the
 * beginning, once, after `onRestart` (told how many pages were done). A list that repeats a token or
 * does not end within `maxPages` (default 10,000) is an error.
 */
export async function followPages(
  where: { cluster: string; operation: string; maxPages?: number | undefined },
  page: (token: string | undefined) => Promise<string | undefined>,
  onRestart?: (pagesDone: number) => void,
): Promise<void> {
  const maxPages = where.maxPages ?? 10_000;
  const fail = (detail: string) =>
    new ClusterAccessError({
      cluster: where.cluster,
      operation: where.operation,
      kind: 'internal',
      retryable: false,
      detail,
    });
  let restarted = false;
  for (;;) {
    let token: string | undefined;
    let pages = 0;
    try {
      do {
        if (++pages > maxPages) throw fail(`the list did not end after ${maxPages} pages`);
        const next = await page(token);
        if (next !== undefined && next === token)
          throw fail('the server returned the same continue token twice');
        token = next;
      } while (token);
      return;
    } catch (e) {
      const expired = e instanceof ClusterAccessError && e.status === 410 && token !== undefined;
      if (!expired || restarted) throw e;
      restarted = true;
      onRestart?.(pages - 1);
    }
  }
}
