/**
 * Loads kubeconfig text for a {@link KubeconfigRef}, cached for the kubeconfig TTL so a warm Lambda
 * does not read Secrets Manager on every invocation. `load(ref, { fresh: true })` bypasses the cache
 * (the connector does this after a 401, so a rotated secret is picked up at once).
 *
 * Errors never contain the kubeconfig: only the reference and what went wrong.
 */
import { readFile } from 'node:fs/promises';
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import type { SecretsManagerClientConfig } from '@aws-sdk/client-secrets-manager';
import { describeKubeconfigRef, type KubeconfigRef, kubeconfigRefProblem } from './kubeconfig-ref.js';
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

/** The part of Powertools' SecretsProvider used here (injectable for tests). */
export interface SecretGetter {
  get(name: string, options?: { maxAge?: number; forceFetch?: boolean }): Promise<unknown>;
}

export interface SecretsManagerSourceOptions {
  ttlSeconds: number;
  /** Secret ids must be under this prefix (checked again here: defence in depth). */
  secretPrefix: string;
  /** SDK client configuration; by default the SDK honours AWS_REGION and AWS_ENDPOINT_URL(_SECRETS_MANAGER). */
  clientConfig?: SecretsManagerClientConfig;
  /** A ready provider (tests); otherwise a Powertools SecretsProvider is built. */
  provider?: SecretGetter;
}

/**
 * Reads kubeconfig secrets through Powertools' SecretsProvider, whose cache holds each value for
 * `maxAge` = the kubeconfig TTL.
 */
export class SecretsManagerKubeconfigSource implements KubeconfigSource {
  private provider: SecretGetter | undefined;
  private readonly ttlSeconds: number;
  private readonly secretPrefix: string;

  constructor(private readonly opts: SecretsManagerSourceOptions) {
    this.ttlSeconds = opts.ttlSeconds;
    this.secretPrefix = opts.secretPrefix;
    this.provider = opts.provider;
  }

  private getProvider(): SecretGetter {
    if (!this.provider) {
      const p = new SecretsProvider(this.opts.clientConfig ? { clientConfig: this.opts.clientConfig } : {});
      this.provider = {
        get: (name, o) => p.get(name, { maxAge: o?.maxAge, forceFetch: o?.forceFetch }),
      };
    }
    return this.provider;
  }

  async load(ref: KubeconfigRef, opts: LoadOptions = {}): Promise<string> {
    if (ref.kind !== 'secret')
      throw new KubeconfigSourceError(`${describeKubeconfigRef(ref)} is not a secret`, false);
    const problem = kubeconfigRefProblem(ref, this.secretPrefix);
    if (problem) throw new KubeconfigSourceError(problem, false);
    let value: unknown;
    try {
      value = await this.getProvider().get(ref.secretId, {
        maxAge: this.ttlSeconds,
        forceFetch: opts.fresh === true,
      });
    } catch (e) {
      throw secretError(ref.secretId, e);
    }
    if (typeof value === 'string') return value;
    if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
    throw new KubeconfigSourceError(`secret "${ref.secretId}" has no value`, false, true);
  }
}

function secretError(secretId: string, e: unknown): KubeconfigSourceError {
  // Powertools wraps the SDK error in GetParameterError with `cause`.
  const inner = (e as { cause?: unknown })?.cause ?? e;
  const name = (inner as { name?: string })?.name ?? (e as { name?: string })?.name ?? 'Error';
  const sdkMessage = (inner as { message?: string })?.message ?? '';
  const status = (inner as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
  if (name === 'ResourceNotFoundException')
    return new KubeconfigSourceError(`secret "${secretId}" does not exist`, false, true);
  if (name === 'AccessDeniedException' || status === 403)
    return new KubeconfigSourceError(
      `access to secret "${secretId}" was denied (check the function's IAM policy and the secret's KMS key)`,
      false,
    );
  if (name === 'DecryptionFailure')
    return new KubeconfigSourceError(`secret "${secretId}" could not be decrypted (KMS)`, false);
  const retryable =
    name === 'ThrottlingException' ||
    name === 'InternalServiceError' ||
    name === 'TimeoutError' ||
    (status !== undefined && status >= 500) ||
    /ECONNREFUSED|ECONNRESET|ETIMEDOUT|socket hang up/i.test(sdkMessage);
  return new KubeconfigSourceError(
    `secret "${secretId}" could not be read: ${name}${sdkMessage ? `: ${sdkMessage.slice(0, 200)}` : ''}`,
    retryable,
  );
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

/** The default source: Secrets Manager for secret refs, the filesystem for file refs. */
export function createKubeconfigSource(opts: {
  ttlSeconds: number;
  secretPrefix: string;
  clientConfig?: SecretsManagerClientConfig;
}): KubeconfigSource {
  return new KubeconfigSources(
    new SecretsManagerKubeconfigSource(opts),
    new FileKubeconfigSource({ ttlSeconds: opts.ttlSeconds }),
  );
}
