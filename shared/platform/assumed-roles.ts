/**
 * The STS adapter for clusters in other accounts: assumes the role a cluster is reached through and
 * caches its temporary credentials, one set per (role, external ID) shared by every cluster behind
 * that role, until shortly before they expire.
 *
 * The EKS token minter (eks-token.ts) asks it for a role's credentials; shared/fleet/cluster-access.ts
 * wires the minter into cluster access. Refusals become a {@link RoleAssumptionError}
 * with the STS error's code and message, which name the role but never a credential.
 */
import { AssumeRoleCommand, type AssumeRoleCommandOutput, STSClient } from '@aws-sdk/client-sts';

export interface RoleToAssume {
  roleArn: string;
  externalId?: string;
}

export interface RoleCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string;
  expiration: Date;
}

export class RoleAssumptionError extends Error {
  override readonly name = 'RoleAssumptionError';
  constructor(
    /** STS's error code (AccessDenied, ExpiredToken, ...) or the network error's (ENOTFOUND, ...). */
    readonly code: string,
    message: string,
    /** Whether asking again soon may succeed (throttling, network); refusals are not retried. */
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

export interface AssumedRolesOptions {
  /** Default: an STS client for the control plane's own region (AWS_REGION; AWS_ENDPOINT_URL_STS honoured). */
  client?: STSClient;
  /** Session length asked for; 1 hour is the most a role chained from a Lambda role may have. */
  durationSeconds?: number;
  /** Re-assume this long before the credentials expire. */
  renewBeforeMs?: number;
  /** A refusal (access denied, wrong external ID, role missing) is remembered this long, per role. */
  refusalTtlMs?: number;
  now?: () => number;
}

interface Refusal {
  error: RoleAssumptionError;
  until: number;
}

/** STS allows [\w+=,.@-], 2 to 64 characters. */
export function sessionName(cluster: string): string {
  return `fleetscope-${cluster}`.replace(/[^\w+=,.@-]/g, '-').slice(0, 64);
}

export class AssumedRoles {
  private readonly sessions = new Map<string, Promise<RoleCredentials>>();
  private readonly refusals = new Map<string, Refusal>();
  private client: STSClient | undefined;
  private readonly durationSeconds: number;
  private readonly renewBeforeMs: number;
  private readonly refusalTtlMs: number;
  private readonly now: () => number;
  /** AssumeRole calls made, and answers served from the cache (observability, tests, the bench). */
  readonly stats = { assumeRoleCalls: 0, cacheHits: 0, refusals: 0 };

  constructor(opts: AssumedRolesOptions = {}) {
    this.client = opts.client;
    this.durationSeconds = opts.durationSeconds ?? 3600;
    this.renewBeforeMs = opts.renewBeforeMs ?? 5 * 60_000;
    this.refusalTtlMs = opts.refusalTtlMs ?? 60_000;
    this.now = opts.now ?? Date.now;
  }

  async credentials(role: RoleToAssume, cluster: string): Promise<RoleCredentials> {
    const key = `${role.roleArn}\u0000${role.externalId ?? ''}`;
    const refused = this.refusals.get(key);
    if (refused && this.now() < refused.until) throw refused.error;
    const cached = this.sessions.get(key);
    if (cached) {
      const creds = await cached.catch(() => undefined);
      if (creds && creds.expiration.getTime() - this.renewBeforeMs > this.now()) {
        this.stats.cacheHits++;
        return creds;
      }
      if (this.sessions.get(key) !== cached) return this.credentials(role, cluster);
    }
    const p = this.assume(role, cluster);
    this.sessions.set(key, p);
    p.catch((err: RoleAssumptionError) => {
      if (this.sessions.get(key) === p) this.sessions.delete(key);
      if (!err.retryable) this.refusals.set(key, { error: err, until: this.now() + this.refusalTtlMs });
    });
    return p;
  }

  /** Drops a role's credentials and any remembered refusal: the next request assumes it afresh. */
  forget(role: RoleToAssume): void {
    const key = `${role.roleArn}\u0000${role.externalId ?? ''}`;
    this.sessions.delete(key);
    this.refusals.delete(key);
  }

  private async assume(role: RoleToAssume, cluster: string): Promise<RoleCredentials> {
    this.client ??= new STSClient({ maxAttempts: 3 });
    this.stats.assumeRoleCalls++;
    let out: AssumeRoleCommandOutput;
    try {
      out = await this.client.send(
        new AssumeRoleCommand({
          RoleArn: role.roleArn,
          RoleSessionName: sessionName(cluster),
          DurationSeconds: this.durationSeconds,
          ...(role.externalId ? { ExternalId: role.externalId } : {}),
        }),
      );
    } catch (err) {
      this.stats.refusals++;
      throw toRoleAssumptionError(err, role.roleArn);
    }
    const c = out.Credentials;
    const expiration = c?.Expiration instanceof Date ? c.Expiration : new Date(String(c?.Expiration));
    if (!c?.AccessKeyId || !c.SecretAccessKey || !c.SessionToken || Number.isNaN(expiration.getTime()))
      throw new RoleAssumptionError(
        'IncompleteCredentials',
        `STS answered AssumeRole for ${role.roleArn} without complete credentials`,
        true,
      );
    if (expiration.getTime() <= this.now())
      throw new RoleAssumptionError(
        'ExpiredToken',
        `STS answered AssumeRole for ${role.roleArn} with credentials that expired at ${expiration.toISOString()} (check the clock)`,
        true,
      );
    return {
      accessKeyId: String(c.AccessKeyId),
      secretAccessKey: String(c.SecretAccessKey),
      sessionToken: String(c.SessionToken),
      expiration,
    };
  }
}

const RETRYABLE_CODES = new Set([
  'Throttling',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalFailure',
]);

/** STS's code and message (service errors), or the network error's code; never the request's credentials. */
function toRoleAssumptionError(err: unknown, roleArn: string): RoleAssumptionError {
  const e = err as { name?: string; code?: string; message?: string; $fault?: string; $metadata?: unknown };
  const service = e?.$metadata !== undefined && e.$fault !== undefined;
  const code = (service ? e.name : (e?.code ?? e?.name)) ?? 'Error';
  const message = (e?.message ?? String(err)).slice(0, 400);
  const retryable = !service || e.$fault === 'server' || RETRYABLE_CODES.has(code);
  return new RoleAssumptionError(
    code,
    `${message}${message.includes(roleArn) ? '' : ` (role ${roleArn})`}`,
    retryable,
  );
}
