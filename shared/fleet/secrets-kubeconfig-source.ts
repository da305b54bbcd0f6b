/**
 * The Secrets Manager kubeconfig source: an AWS adapter behind shared/k8s's KubeconfigSource interface,
 * composed with the file source here, where cluster access is wired (cluster-access.ts), so that
 * Kubernetes access and the AWS adapters never import each other.
 */
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';
import type { SecretsManagerClientConfig } from '@aws-sdk/client-secrets-manager';
import { describeKubeconfigRef, type KubeconfigRef, kubeconfigRefProblem } from '../k8s/kubeconfig-ref.js';
import {
  FileKubeconfigSource,
  type KubeconfigSource,
  KubeconfigSourceError,
  KubeconfigSources,
  type LoadOptions,
} from '../k8s/kubeconfig-source.js';

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
