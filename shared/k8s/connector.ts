/**
 * ClusterConnector: registered cluster name + KubeconfigRef -> a cached ClusterClient.
 *
 * One KubeConfig per cluster, never merged. A client lives for the kubeconfig TTL; a 401 from the
 * cluster drops it at once (and the cluster's EKS tokens), and the next `get` re-reads the source
 * bypassing its cache, so a rotated secret is picked up without waiting for the TTL.
 */
import path from 'node:path';
import { ClusterClient, type ClusterClientOptions, type ClusterLogger } from './client.js';
import { ClusterAccessError, KubeconfigError } from './errors.js';
import {
  describeKubeconfigRef,
  type KubeconfigRef,
  kubeconfigRefKey,
  kubeconfigRefProblem,
} from './kubeconfig-ref.js';
import { FileKubeconfigSource, type KubeconfigSource, KubeconfigSourceError } from './kubeconfig-source.js';
import { redactFields } from './redact.js';
import { type EksTokenProvider, noEksTokens } from './token-source.js';

export interface ClusterConnectorOptions {
  /** Where kubeconfigs come from; default Secrets Manager (secret refs) and files (file refs). */
  source?: KubeconfigSource;
  /** Secret ids must start with this (the platform's FLEETSCOPE_SECRET_PREFIX). */
  secretPrefix: string;
  /** How long a client (and its kubeconfig) is reused (FLEETSCOPE_KUBECONFIG_TTL_SECONDS). */
  ttlSeconds: number;
  /** Options for every client (timeout, retry budget, page size, logger). */
  client?: Omit<ClusterClientOptions, 'onUnauthorized' | 'onRequest' | 'info'>;
  /**
   * EKS tokens for EKS exec kubeconfigs (the AWS side's minter, made on first use); default none, so
   * an EKS kubeconfig is refused with a message saying so.
   */
  eksTokens?: EksTokenProvider | (() => EksTokenProvider);
  /** Region for EKS tokens when the kubeconfig does not say. */
  defaultRegion?: string;
  logger?: ClusterLogger;
  now?: () => number;
}

interface Entry {
  refKey: string;
  createdAt: number;
  client: Promise<ClusterClient>;
  resolved?: ClusterClient;
}

export interface ConnectorStats {
  /** HTTP requests sent by all clients this connector built. */
  requests: number;
  byCluster: Record<string, number>;
  clientsBuilt: number;
  kubeconfigLoads: number;
  invalidations: number;
}

export class ClusterConnector {
  private readonly entries = new Map<string, Entry>();
  private readonly needsFresh = new Set<string>();
  private readonly source: KubeconfigSource;
  private readonly secretPrefix: string;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private eksTokens: EksTokenProvider | undefined;
  private readonly makeEksTokens: () => EksTokenProvider;
  private counters: ConnectorStats = emptyStats();

  // The settings come from the caller (the fleet layer reads the platform's configuration): cluster
  // access knows nothing of where fleetscope keeps its settings.
  constructor(private readonly opts: ClusterConnectorOptions) {
    this.secretPrefix = opts.secretPrefix;
    const ttlSeconds = opts.ttlSeconds;
    this.ttlMs = ttlSeconds * 1000;
    // Without a source, files only: secrets come through shared/fleet's Secrets Manager source.
    this.source = opts.source ?? new FileKubeconfigSource({ ttlSeconds });
    this.now = opts.now ?? Date.now;
    const given = opts.eksTokens;
    this.makeEksTokens = typeof given === 'function' ? given : () => given ?? noEksTokens;
  }

  /** The cached client for this cluster, or a new one built from a freshly loaded kubeconfig. */
  async get(cluster: string, ref: KubeconfigRef): Promise<ClusterClient> {
    const problem = kubeconfigRefProblem(ref, this.secretPrefix);
    if (problem) throw new KubeconfigError(cluster, problem, 'resolve kubeconfig reference');
    const refKey = kubeconfigRefKey(ref);
    const entry = this.entries.get(cluster);
    if (entry && entry.refKey === refKey && this.now() - entry.createdAt < this.ttlMs) return entry.client;
    if (entry) this.entries.delete(cluster);

    const fresh = this.needsFresh.delete(cluster);
    const created: Entry = { refKey, createdAt: this.now(), client: this.build(cluster, ref, fresh) };
    this.entries.set(cluster, created);
    created.client.then(
      (c) => {
        created.resolved = c;
      },
      () => {
        // Never cache a failure: the next get tries again.
        if (this.entries.get(cluster) === created) this.entries.delete(cluster);
      },
    );
    return created.client;
  }

  /** Drops the cluster's client; the next `get` reloads its kubeconfig bypassing caches. */
  invalidate(cluster: string): void {
    this.entries.delete(cluster);
    this.needsFresh.add(cluster);
    this.eksTokens?.invalidate(cluster);
    this.counters.invalidations++;
  }

  /** Whether a live client is cached for the cluster (tests, diagnostics). */
  isCached(cluster: string): boolean {
    const e = this.entries.get(cluster);
    return !!e && this.now() - e.createdAt < this.ttlMs;
  }

  stats(): ConnectorStats {
    return { ...this.counters, byCluster: { ...this.counters.byCluster } };
  }

  resetStats(): void {
    this.counters = emptyStats();
  }

  /** Closes every cached client's connections. */
  async close(): Promise<void> {
    const all = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(
      all.map((e) =>
        e.client.then(
          (c) => c.close(),
          () => {},
        ),
      ),
    );
  }

  private async build(cluster: string, ref: KubeconfigRef, fresh: boolean): Promise<ClusterClient> {
    let text: string;
    try {
      this.counters.kubeconfigLoads++;
      text = await this.source.load(ref, { fresh });
    } catch (e) {
      const retryable = e instanceof KubeconfigSourceError ? e.retryable : false;
      const message = e instanceof Error ? e.message : String(e);
      const err = new ClusterAccessError({
        cluster,
        operation: 'load kubeconfig',
        kind: 'credentials',
        retryable,
        detail: loadFailure(ref, message),
      });
      this.opts.logger?.warn('kubeconfig could not be loaded', redactFields(err.toLog()));
      throw err;
    }
    const clientOpts = this.opts.client ?? {};
    const client = ClusterClient.fromKubeconfig(text, {
      ...clientOpts,
      logger: clientOpts.logger ?? this.opts.logger,
      cluster,
      context: ref.context,
      eksTokens: this.lazyEksTokens(),
      defaultRegion: this.opts.defaultRegion,
      assumeRole: ref.assumeRole,
      baseDir: ref.kind === 'file' ? path.dirname(path.resolve(ref.path)) : undefined,
      onUnauthorized: () => {
        // Only drop the entry if it still holds this client, not one already rebuilt after a rotation.
        const current = this.entries.get(cluster);
        if (!current || current.resolved === client) {
          this.opts.logger?.warn('cluster rejected credentials; cached kubeconfig dropped', { cluster });
          this.invalidate(cluster);
        }
      },
      onRequest: () => {
        this.counters.requests++;
        this.counters.byCluster[cluster] = (this.counters.byCluster[cluster] ?? 0) + 1;
      },
    });
    this.counters.clientsBuilt++;
    return client;
  }

  /** The EKS provider is only created (and the AWS SDK's credential chain touched) when needed. */
  private lazyEksTokens(): EksTokenProvider {
    const provider = () => {
      this.eksTokens ??= this.makeEksTokens();
      return this.eksTokens;
    };
    return {
      token: (clusterName, region, role) => provider().token(clusterName, region, role),
      invalidate: (clusterName) => this.eksTokens?.invalidate(clusterName),
      regionProblem: (region) => provider().regionProblem?.(region) ?? null,
    };
  }
}

function emptyStats(): ConnectorStats {
  return { requests: 0, byCluster: {}, clientsBuilt: 0, kubeconfigLoads: 0, invalidations: 0 };
}

/**
 * What went wrong loading a kubeconfig, naming the reference once: the source's messages mostly name
 * the file or secret already ('kubeconfig file "/x" does not exist'); the others get the reference.
 */
function loadFailure(ref: KubeconfigRef, message: string): string {
  const named = `"${ref.kind === 'file' ? ref.path : ref.secretId}"`;
  return message.includes(named) ? message : `${describeKubeconfigRef(ref)}: ${message}`;
}
