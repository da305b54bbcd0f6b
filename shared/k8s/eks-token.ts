/**
 * EKS bearer tokens minted in-process (what `aws eks get-token` / `aws-iam-authenticator token` print),
 * because Lambda has no binaries to exec.
 *
 * token = "k8s-aws-v1." + base64url-without-padding(presigned STS GetCallerIdentity URL), presigned
 * with SigV4 (service sts, regional endpoint) for 60 s, with `x-k8s-aws-id: <cluster>` among the
 * signed headers. The API server accepts it for 15 minutes after X-Amz-Date; tokens here are reused
 * for at most 10 minutes per (cluster, region).
 */
import { STSClient, type STSClientConfig } from '@aws-sdk/client-sts';
import { SignatureV4 } from '@smithy/signature-v4';
import { redact } from './redact.js';

export type AwsCredentials = NonNullable<STSClientConfig['credentials']>;
type HashConstructor = STSClient['config']['sha256'];
type PresignInput = Parameters<SignatureV4['presign']>[0];

export const EKS_TOKEN_PREFIX = 'k8s-aws-v1.';
export const CLUSTER_ID_HEADER = 'x-k8s-aws-id';
/** The server accepts a token this long after X-Amz-Date. */
export const EKS_TOKEN_LIFETIME_MS = 15 * 60_000;
/** Tokens are re-minted after this, well inside the lifetime. */
export const EKS_TOKEN_REFRESH_MS = 10 * 60_000;

/** Anything that can supply a bearer token for an EKS cluster. */
export interface EksTokenProvider {
  token(clusterName: string, region: string): Promise<string>;
  /** Forget cached tokens (all, or one cluster's) so the next call mints afresh. */
  invalidate(clusterName?: string): void;
}

export class EksTokenError extends Error {
  override readonly name = 'EksTokenError';
  constructor(message: string) {
    super(redact(message));
  }
}

/** The regional STS host (`sts.<region>.amazonaws.com`, `.com.cn` in China). */
export function stsHost(region: string): string {
  if (!/^[a-z]{2}(-[a-z]+)+-\d+$/.test(region)) throw new EksTokenError(`"${region}" is not an AWS region`);
  return `sts.${region}.amazonaws.com${region.startsWith('cn-') ? '.cn' : ''}`;
}

export interface MintInput {
  clusterName: string;
  region: string;
  credentials: AwsCredentials;
  /** Signing time (X-Amz-Date); default now. */
  signingDate?: Date;
  /** SHA-256 implementation; default the one the STS client uses (node:crypto). */
  sha256?: HashConstructor;
}

let defaultSha256: HashConstructor | undefined;
function sha256Impl(): HashConstructor {
  defaultSha256 ??= new STSClient({ region: 'us-east-1' }).config.sha256;
  return defaultSha256;
}

/** Mints one token. Pure apart from the credential provider it is given. */
export async function mintEksToken(input: MintInput): Promise<{ token: string; expiresAt: number }> {
  if (!input.clusterName) throw new EksTokenError('an EKS token needs the cluster name');
  const hostname = stsHost(input.region);
  const signer = new SignatureV4({
    credentials: input.credentials,
    region: input.region,
    service: 'sts',
    sha256: input.sha256 ?? sha256Impl(),
    uriEscapePath: true,
  });
  const signingDate = input.signingDate ?? new Date();
  const request: PresignInput = {
    method: 'GET',
    protocol: 'https:',
    hostname,
    path: '/',
    query: { Action: 'GetCallerIdentity', Version: '2011-06-15' },
    headers: { host: hostname, [CLUSTER_ID_HEADER]: input.clusterName },
  };
  let signed: Awaited<ReturnType<SignatureV4['presign']>>;
  try {
    signed = await signer.presign(request, { expiresIn: 60, signingDate });
  } catch (e) {
    const name = (e as { name?: string })?.name ?? 'Error';
    const msg = (e as { message?: string })?.message ?? String(e);
    throw new EksTokenError(
      `AWS credentials for minting an EKS token for "${input.clusterName}" are not available: ${name}: ${msg.slice(0, 200)}`,
    );
  }
  const url = new URL(`https://${hostname}/`);
  for (const [k, v] of Object.entries(signed.query ?? {})) {
    if (typeof v === 'string') url.searchParams.append(k, v);
    else if (Array.isArray(v)) for (const x of v) url.searchParams.append(k, x);
  }
  const token = EKS_TOKEN_PREFIX + Buffer.from(url.toString(), 'utf8').toString('base64url');
  return { token, expiresAt: signingDate.getTime() + EKS_TOKEN_LIFETIME_MS };
}

/** Decodes a token back to its presigned URL (tests, diagnostics). */
export function decodeEksToken(token: string): URL {
  if (!token.startsWith(EKS_TOKEN_PREFIX)) throw new EksTokenError('not an EKS token');
  return new URL(Buffer.from(token.slice(EKS_TOKEN_PREFIX.length), 'base64url').toString('utf8'));
}

export interface EksTokenMinterOptions {
  /** Fixed credentials or a provider; default the SDK's default chain (env, web identity, ECS, IMDS, …). */
  credentials?: AwsCredentials;
  now?: () => number;
  refreshAfterMs?: number;
  sha256?: HashConstructor;
}

/** Caching provider: one token per (cluster, region), re-minted after `refreshAfterMs` (10 min). */
export class EksTokenMinter implements EksTokenProvider {
  private readonly cache = new Map<string, Promise<{ token: string; mintedAt: number }>>();
  private readonly now: () => number;
  private readonly refreshAfterMs: number;
  private credentials: AwsCredentials | undefined;
  /** Tokens minted so far (observability, tests). */
  minted = 0;

  constructor(private readonly opts: EksTokenMinterOptions = {}) {
    this.now = opts.now ?? Date.now;
    this.refreshAfterMs = Math.min(
      opts.refreshAfterMs ?? EKS_TOKEN_REFRESH_MS,
      EKS_TOKEN_LIFETIME_MS - 60_000,
    );
    this.credentials = opts.credentials;
  }

  private creds(): AwsCredentials {
    // The STS client's resolved config holds the default provider chain (memoised, refreshes itself).
    this.credentials ??= new STSClient({}).config.credentials;
    return this.credentials;
  }

  async token(clusterName: string, region: string): Promise<string> {
    const key = `${clusterName}\u0000${region}`;
    const now = this.now();
    const cached = this.cache.get(key);
    if (cached) {
      try {
        const c = await cached;
        if (now - c.mintedAt < this.refreshAfterMs) return c.token;
      } catch {
        // a failed mint is not cached: fall through and try again
      }
    }
    const p = mintEksToken({
      clusterName,
      region,
      credentials: this.creds(),
      signingDate: new Date(now),
      sha256: this.opts.sha256,
    }).then((r) => {
      this.minted++;
      return { token: r.token, mintedAt: now };
    });
    this.cache.set(key, p);
    p.catch(() => {
      if (this.cache.get(key) === p) this.cache.delete(key);
    });
    return (await p).token;
  }

  invalidate(clusterName?: string): void {
    if (clusterName === undefined) {
      this.cache.clear();
      return;
    }
    for (const key of this.cache.keys()) if (key.startsWith(`${clusterName}\u0000`)) this.cache.delete(key);
  }
}

let sharedMinter: EksTokenMinter | undefined;
/** One minter per process (warm Lambda), using the default credential chain. */
export function defaultEksTokenProvider(): EksTokenMinter {
  sharedMinter ??= new EksTokenMinter();
  return sharedMinter;
}
