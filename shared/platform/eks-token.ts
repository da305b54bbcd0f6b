/**
 * EKS bearer tokens minted in-process (what `aws eks get-token` / `aws-iam-authenticator token` print),
 * because Lambda has no binaries to exec.
 *
 * token = "k8s-aws-v1." + base64url-without-padding(presigned STS GetCallerIdentity URL), presigned
 * with SigV4 (service sts, regional endpoint) for 60 s, with `x-k8s-aws-id: <cluster>` among the
 * signed headers. The API server accepts it for 15 minutes after X-Amz-Date; tokens here are reused
 * for at most 10 minutes per (cluster, region).
 *
 * The AWS side of cluster access: it satisfies shared/k8s's EksTokenProvider structurally (this layer
 * does not import that one); shared/fleet/cluster-access.ts hands it to the cluster connector.
 */
import { STSClient, type STSClientConfig } from '@aws-sdk/client-sts';
import { partition } from '@aws-sdk/core/client';
import { SignatureV4 } from '@smithy/signature-v4';
import type { RoleCredentials, RoleToAssume } from './assumed-roles.js';

export type AwsCredentials = NonNullable<STSClientConfig['credentials']>;
type HashConstructor = STSClient['config']['sha256'];
type PresignInput = Parameters<SignatureV4['presign']>[0];

export const EKS_TOKEN_PREFIX = 'k8s-aws-v1.';
export const CLUSTER_ID_HEADER = 'x-k8s-aws-id';
/** The server accepts a token this long after X-Amz-Date. */
export const EKS_TOKEN_LIFETIME_MS = 15 * 60_000;
/** Tokens are re-minted after this, well inside the lifetime. */
export const EKS_TOKEN_REFRESH_MS = 10 * 60_000;

export class EksTokenError extends Error {
  override readonly name = 'EksTokenError';
  /** The STS error code when a role could not be assumed (AccessDenied, ExpiredToken, ...). */
  readonly code?: string;
  constructor(message: string, code?: string) {
    // Messages name the cluster, the role and the SDK's error, never a credential; the cluster access
    // layer redacts again at its boundary.
    super(message);
    this.code = code;
  }
}

/** Supplies a role's temporary credentials (shared/platform/assumed-roles.ts). */
export interface RoleCredentialsSource {
  credentials(role: RoleToAssume, cluster: string): Promise<RoleCredentials>;
  forget(role: RoleToAssume): void;
}

const roleKey = (r: RoleToAssume): string => `${r.roleArn}\u0000${r.externalId ?? ''}`;
const describeRole = (r: RoleToAssume): string =>
  `role ${r.roleArn}${r.externalId ? ' (with an external ID)' : ''}`;

/** Null when `region` is a region of an AWS partition the SDK knows, else why not. */
export function regionProblem(region: string): string | null {
  if (!/^[a-z]{2,4}(-[a-z]+)+-\d+$/.test(region)) return `"${region.slice(0, 40)}" is not an AWS region`;
  // The SDK's partition data lists every region it was released with: an unknown name is a typo (or a
  // region newer than this SDK, fixed by updating it), and would otherwise surface as an opaque 401.
  if ((partition(region) as { description?: string }).description === undefined)
    return `region "${region}" does not exist (no AWS partition lists it)`;
  return null;
}

/** The regional STS host (`sts.<region>.amazonaws.com`, `.com.cn` in China). */
export function stsHost(region: string): string {
  const problem = regionProblem(region);
  if (problem) throw new EksTokenError(problem);
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
  /** Credentials of roles in other accounts (the STS adapter); needed only for clusters with a role. */
  roles?: RoleCredentialsSource;
  now?: () => number;
  refreshAfterMs?: number;
  sha256?: HashConstructor;
}

interface CachedToken {
  token: string;
  /** Re-mint at this time: the refresh period, or earlier when the role's credentials expire first. */
  renewAt: number;
}

/** A token minted with a role's credentials must be renewed this long before those credentials expire. */
const ROLE_TOKEN_MARGIN_MS = 60_000;

/**
 * Caching provider: one token per (cluster, region, role), re-minted after `refreshAfterMs` (10 min) or
 * before the role credentials it was signed with expire, whichever comes first.
 */
export class EksTokenMinter {
  private readonly cache = new Map<string, Promise<CachedToken>>();
  /** The role each cluster's tokens were last minted with, so a 401 can drop that role's session. */
  private readonly roleOf = new Map<string, RoleToAssume>();
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

  async token(clusterName: string, region: string, role?: RoleToAssume): Promise<string> {
    const key = `${clusterName}\u0000${region}\u0000${role ? roleKey(role) : ''}`;
    const now = this.now();
    const cached = this.cache.get(key);
    if (cached) {
      try {
        const c = await cached;
        if (now < c.renewAt) return c.token;
      } catch {
        // a failed mint is not cached: fall through and try again
      }
    }
    if (role) this.roleOf.set(clusterName, role);
    else this.roleOf.delete(clusterName);
    const p = this.mint(clusterName, region, now, role).then((r) => {
      this.minted++;
      return r;
    });
    this.cache.set(key, p);
    p.catch(() => {
      if (this.cache.get(key) === p) this.cache.delete(key);
    });
    return (await p).token;
  }

  private async mint(
    clusterName: string,
    region: string,
    now: number,
    role?: RoleToAssume,
  ): Promise<CachedToken> {
    const renewAt = now + this.refreshAfterMs;
    if (!role) {
      const input = { clusterName, region, credentials: this.creds(), signingDate: new Date(now) };
      const { token } = await mintEksToken({ ...input, sha256: this.opts.sha256 });
      return { token, renewAt };
    }
    // Check the region before opening a session for it.
    stsHost(region);
    const temp = await this.roleCredentials(role, clusterName);
    const { token } = await mintEksToken({
      clusterName,
      region,
      credentials: temp,
      signingDate: new Date(now),
      sha256: this.opts.sha256,
    });
    return { token, renewAt: Math.min(renewAt, temp.expiration.getTime() - ROLE_TOKEN_MARGIN_MS) };
  }

  private async roleCredentials(role: RoleToAssume, clusterName: string) {
    if (!this.opts.roles)
      throw new EksTokenError(
        `cluster "${clusterName}" is reached through ${describeRole(role)}, but no STS credential provider is configured`,
      );
    try {
      return await this.opts.roles.credentials(role, clusterName);
    } catch (e) {
      const err = e as { name?: string; code?: string; message?: string };
      const code = err?.code ?? err?.name ?? 'Error';
      throw new EksTokenError(
        `cannot assume ${describeRole(role)} for "${clusterName}": ${code}: ${(err?.message ?? String(e)).slice(0, 400)}`,
        code,
      );
    }
  }

  regionProblem(region: string): string | null {
    return regionProblem(region);
  }

  invalidate(clusterName?: string): void {
    if (clusterName === undefined) {
      this.cache.clear();
      for (const role of this.roleOf.values()) this.opts.roles?.forget(role);
      this.roleOf.clear();
      return;
    }
    for (const key of this.cache.keys()) if (key.startsWith(`${clusterName}\u0000`)) this.cache.delete(key);
    // The cluster refused a token: the role's session may have been revoked or expired early.
    const role = this.roleOf.get(clusterName);
    if (role) this.opts.roles?.forget(role);
  }
}

let sharedMinter: EksTokenMinter | undefined;
/** One minter per process (warm Lambda), using the default credential chain. */
export function defaultEksTokenProvider(): EksTokenMinter {
  sharedMinter ??= new EksTokenMinter();
  return sharedMinter;
}
