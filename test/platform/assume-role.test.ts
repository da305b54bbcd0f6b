/**
 * Clusters in other accounts: the STS adapter assumes the cluster's role over real HTTP (a local
 * STS-compatible endpoint that checks the SigV4 signature), and the EKS token is minted with the
 * credentials it returned. Caching and every refusal, with no credential in any error.
 */
import { STSClient } from '@aws-sdk/client-sts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { toClusterAccessError } from '../../shared/k8s/errors.js';
import { AssumedRoles, RoleAssumptionError, sessionName } from '../../shared/platform/assumed-roles.js';
import { decodeEksToken, EksTokenMinter, mintEksToken } from '../../shared/platform/eks-token.js';
import { type LocalSts, startLocalSts } from '../support/sts-server.js';

const CONTROL_PLANE = {
  accessKeyId: 'AKIAFLEETSCOPECP0001',
  secretAccessKey: 'cpSecretKeyForTests/0123456789abcdefABCDEF',
};
const ROLE = { roleArn: 'arn:aws:iam::222233334444:role/fleetscope-access', externalId: 'fleet-7f3a' };
const T0 = Date.parse('2026-03-01T10:00:00Z');

let sts: LocalSts;
beforeAll(async () => {
  sts = await startLocalSts(CONTROL_PLANE.secretAccessKey);
});
afterAll(() => sts.stop());
beforeEach(() => {
  sts.received.length = 0;
  sts.issued.length = 0;
  sts.answer = () => ({ credentials: { expiration: new Date(T0 + 3600_000) } });
});

function setup(now = { t: T0 }) {
  const client = new STSClient({
    region: 'eu-central-1',
    endpoint: sts.endpoint,
    credentials: CONTROL_PLANE,
    maxAttempts: 1,
  });
  const roles = new AssumedRoles({ client, now: () => now.t });
  const minter = new EksTokenMinter({ roles, now: () => now.t });
  return { roles, minter, now };
}

/** Everything an error may say, checked for any credential of either side. */
function expectNoCredentials(text: string) {
  for (const secret of [
    CONTROL_PLANE.secretAccessKey,
    ROLE.externalId,
    ...sts.issued.flatMap((c) => [c.secretAccessKey, c.sessionToken]),
  ])
    expect(text).not.toContain(secret);
}

describe('assuming a cluster role', () => {
  it('sends a signed AssumeRole naming fleetscope and the cluster, and mints the token with the returned credentials', async () => {
    const { minter, now } = setup();
    const token = await minter.token('prod-eu-1', 'eu-west-1', ROLE);

    expect(sts.received).toHaveLength(1);
    const [req] = sts.received as [(typeof sts.received)[number]];
    expect(req.signatureValid).toBe(true);
    expect(req.accessKeyId).toBe(CONTROL_PLANE.accessKeyId);
    expect(req.region).toBe('eu-central-1'); // the control plane's region, whatever the cluster's
    expect(req.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIAFLEETSCOPECP0001\/\d{8}\/eu-central-1\/sts\/aws4_request, SignedHeaders=[^,]*host[^,]*x-amz-date[^,]*, Signature=[0-9a-f]{64}$/,
    );
    expect(req.params).toMatchObject({
      Action: 'AssumeRole',
      Version: '2011-06-15',
      RoleArn: ROLE.roleArn,
      RoleSessionName: 'fleetscope-prod-eu-1',
      DurationSeconds: '3600',
      ExternalId: ROLE.externalId,
    });

    const issued = sts.issued[0]!;
    const url = decodeEksToken(token);
    expect(url.host).toBe('sts.eu-west-1.amazonaws.com');
    expect(url.searchParams.get('X-Amz-Credential')).toMatch(
      new RegExp(`^${issued.accessKeyId}/\\d{8}/eu-west-1/sts/aws4_request$`),
    );
    expect(url.searchParams.get('X-Amz-Security-Token')).toBe(issued.sessionToken);
    // Exactly the token those credentials sign at that moment (so it was signed with the issued secret).
    const expected = await mintEksToken({
      clusterName: 'prod-eu-1',
      region: 'eu-west-1',
      credentials: issued,
      signingDate: new Date(now.t),
    });
    expect(token).toBe(expected.token);
  });

  it('shares one session per role across clusters, renews it before it expires, and keeps roles apart', async () => {
    const { minter, roles, now } = setup();
    sts.answer = () => ({ credentials: { expiration: new Date(now.t + 3600_000) } });
    await minter.token('a', 'eu-west-1', ROLE);
    await minter.token('b', 'us-east-1', ROLE);
    expect(sts.received).toHaveLength(1);
    expect(roles.stats).toMatchObject({ assumeRoleCalls: 1, cacheHits: 1 });
    // Another external ID is another session.
    await minter.token('c', 'eu-west-1', { roleArn: ROLE.roleArn, externalId: 'other-id' });
    expect(sts.received).toHaveLength(2);

    // 54 minutes on: tokens are re-minted (10-minute refresh) with the same session...
    now.t += 54 * 60_000;
    await minter.token('a', 'eu-west-1', ROLE);
    expect(sts.received).toHaveLength(2);
    // ...and within 5 minutes of its expiry the role is assumed again.
    now.t += 2 * 60_000;
    const t = await minter.token('b', 'us-east-1', ROLE);
    expect(sts.received).toHaveLength(3);
    expect(decodeEksToken(t).searchParams.get('X-Amz-Security-Token')).toBe(sts.issued[2]!.sessionToken);
  });

  it('never keeps a token past the credentials it was signed with', async () => {
    const { minter, now } = setup();
    sts.answer = () => ({ credentials: { expiration: new Date(now.t + 7 * 60_000) } });
    const t1 = await minter.token('a', 'eu-west-1', ROLE);
    now.t += 5 * 60_000;
    expect(await minter.token('a', 'eu-west-1', ROLE)).toBe(t1);
    // A minute before the credentials expire (not after the usual 10 minutes), the token is re-minted
    // with a renewed session.
    now.t += 60_000;
    const t2 = await minter.token('a', 'eu-west-1', ROLE);
    expect(t2).not.toBe(t1);
    expect(sts.received).toHaveLength(2);
    expect(decodeEksToken(t2).searchParams.get('X-Amz-Security-Token')).toBe(sts.issued[1]!.sessionToken);
  });

  it('drops the role session when a cluster refuses its token (revoked or expired early)', async () => {
    const { minter } = setup();
    await minter.token('a', 'eu-west-1', ROLE);
    minter.invalidate('a');
    await minter.token('a', 'eu-west-1', ROLE);
    expect(sts.received).toHaveLength(2);
  });

  it.each([
    [
      'a wrong external ID',
      403,
      'AccessDenied',
      `User: arn:aws:sts::111122223333:assumed-role/Fleetscope-Inventory/x is not authorized to perform: sts:AssumeRole on resource: ${ROLE.roleArn}`,
    ],
    [
      'a role that does not exist',
      403,
      'AccessDenied',
      'User: arn:aws:sts::111122223333:assumed-role/Fleetscope-Inventory/x is not authorized to perform: sts:AssumeRole on resource: arn:aws:iam::222233334444:role/fleetscope-missing',
    ],
    [
      'an expired session of the control plane',
      400,
      'ExpiredToken',
      'The security token included in the request is expired',
    ],
    [
      'a region where STS is disabled',
      403,
      'RegionDisabledException',
      'STS is not activated in this region for account:222233334444.',
    ],
  ])(
    'refuses %s with the STS code and message, remembers it briefly, and leaks nothing',
    async (_what, status, code, message) => {
      const { minter, now } = setup();
      sts.answer = () => ({ status, code, message });
      const err = (await minter.token('prod-eu-1', 'eu-west-1', ROLE).catch((e) => e)) as Error & {
        code?: string;
      };
      expect(err.name).toBe('EksTokenError');
      expect(err.code).toBe(code);
      expect(err.message).toContain(
        `cannot assume role ${ROLE.roleArn} (with an external ID) for "prod-eu-1": ${code}: ${message}`,
      );
      const access = toClusterAccessError(err, { cluster: 'prod-eu-1', operation: 'get version' });
      expect(access).toMatchObject({ kind: 'credentials', code, retryable: false });
      expectNoCredentials(`${err.message} ${access.message} ${JSON.stringify(access.toLog())}`);

      // The rest of the fleet does not each ask STS again within the minute...
      await expect(minter.token('prod-eu-2', 'eu-west-1', ROLE)).rejects.toThrow(code);
      expect(sts.received).toHaveLength(1);
      // ...but after it, the role is tried again (the operator may have fixed the trust policy).
      now.t += 61_000;
      sts.answer = () => ({ credentials: { expiration: new Date(now.t + 3600_000) } });
      await expect(minter.token('prod-eu-2', 'eu-west-1', ROLE)).resolves.toMatch(/^k8s-aws-v1\./);
    },
  );

  it('refuses a region that does not exist before asking STS', async () => {
    const { minter } = setup();
    await expect(minter.token('a', 'eu-nowhere-1', ROLE)).rejects.toThrow(
      'region "eu-nowhere-1" does not exist',
    );
    expect(sts.received).toHaveLength(0);
  });

  it('reports credentials that are already expired, and an unreachable STS, by code', async () => {
    const { roles, now } = setup();
    sts.answer = () => ({ credentials: { expiration: new Date(now.t - 1000) } });
    await expect(roles.credentials(ROLE, 'a')).rejects.toMatchObject({ code: 'ExpiredToken' });

    const offline = new AssumedRoles({
      client: new STSClient({
        region: 'eu-central-1',
        endpoint: 'http://127.0.0.1:9',
        credentials: CONTROL_PLANE,
        maxAttempts: 1,
      }),
    });
    const e = (await offline.credentials(ROLE, 'a').catch((x) => x)) as RoleAssumptionError;
    expect(e).toBeInstanceOf(RoleAssumptionError);
    expect(e.code).toBe('ECONNREFUSED');
    expect(e.retryable).toBe(true);
    expectNoCredentials(e.message);
  });

  it('names sessions within STS limits', () => {
    expect(sessionName('prod-eu-1')).toBe('fleetscope-prod-eu-1');
    expect(sessionName('x'.repeat(63))).toHaveLength(64);
  });
});
