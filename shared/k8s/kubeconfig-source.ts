/**
 * Loads kubeconfig text for a {@link KubeconfigRef}, cached for the kubeconfig TTL so a warm Lambda
 * does not read Secrets Manager on every invocation (that source is an AWS adapter, so it lives in
 * shared/fleet/secrets-kubeconfig-source.ts; this module knows only the interface and files). `load(ref, { fresh: true })` bypasses the cache
 * (the connector does this after a 401, so a rotated secret is picked up at once).
 *
 * Errors never contain the kubeconfig: only the reference and what went wrong.
 */
import { readFile } from 'node:fs/promises';
import { describeKubeconfigRef, type KubeconfigRef } from './kubeconfig-ref.js';
import { redact } from './redact.js';

export interface LoadOptions {
  /** Ignore any cached copy and read the source again. */
  fresh?: boolean;
}

export interface KubeconfigSource {
  load(ref: KubeconfigRef, opts?: LoadOptions): Promise<string>;
}

/** Why a kubeconfig could not be loaded. `retryable` is true for throttling and outages. */
export class KubeconfigSourceError extends Error {
  override readonly name = 'KubeconfigSourceError';
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly notFound = false,
  ) {
    super(redact(message));
  }
}

interface Cached {
  text: string;
  expiresAt: number;
}

/** Reads kubeconfig files (local runs, tests). Relative paths resolve against the working directory. */
export class FileKubeconfigSource implements KubeconfigSource {
  private readonly cache = new Map<string, Cached>();
  private readonly ttlMs: number;
  private readonly now: () => number;

  /** Without a TTL every load reads the file (cheap; the connector passes the platform's TTL). */
  constructor(opts: { ttlSeconds?: number; now?: () => number } = {}) {
    this.ttlMs = (opts.ttlSeconds ?? 0) * 1000;
    this.now = opts.now ?? Date.now;
  }

  async load(ref: KubeconfigRef, opts: LoadOptions = {}): Promise<string> {
    if (ref.kind !== 'file')
      throw new KubeconfigSourceError(`${describeKubeconfigRef(ref)} is not a file`, false);
    const hit = this.cache.get(ref.path);
    if (hit && !opts.fresh && hit.expiresAt > this.now()) return hit.text;
    let text: string;
    try {
      text = await readFile(ref.path, 'utf8');
    } catch (e) {
      const code = (e as { code?: string }).code ?? 'error';
      const what =
        code === 'ENOENT'
          ? 'does not exist'
          : code === 'EACCES' || code === 'EPERM'
            ? 'is not readable (permission denied)'
            : code === 'EISDIR'
              ? 'is a directory'
              : `could not be read (${code})`;
      throw new KubeconfigSourceError(`kubeconfig file "${ref.path}" ${what}`, false, code === 'ENOENT');
    }
    if (this.ttlMs > 0) this.cache.set(ref.path, { text, expiresAt: this.now() + this.ttlMs });
    return text;
  }

  invalidate(ref?: KubeconfigRef): void {
    if (!ref) this.cache.clear();
    else if (ref.kind === 'file') this.cache.delete(ref.path);
  }
}

/** Dispatches on the reference's kind. */
export class KubeconfigSources implements KubeconfigSource {
  constructor(
    private readonly secrets: KubeconfigSource,
    private readonly files: KubeconfigSource,
  ) {}
  load(ref: KubeconfigRef, opts?: LoadOptions): Promise<string> {
    return ref.kind === 'secret' ? this.secrets.load(ref, opts) : this.files.load(ref, opts);
  }
}
