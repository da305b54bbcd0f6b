import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  decodeEksToken,
  EKS_TOKEN_LIFETIME_MS,
  EksTokenMinter,
  mintEksToken,
  stsHost,
} from '../../shared/platform/eks-token.js';

const credentials = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
};
const signingDate = new Date('2026-01-02T03:04:05Z');

/** An independent SigV4 query-presign computation, to check the library is used correctly. */
function expectedSignature(url: URL, headers: Record<string, string>, region: string): string {
  const enc = (s: string) =>
    encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  const params = [...url.searchParams.entries()].filter(([k]) => k !== 'X-Amz-Signature');
  params.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const canonicalQuery = params.map(([k, v]) => `${enc(k)}=${enc(v)}`).join('&');
  const names = Object.keys(headers).sort();
  const canonicalHeaders = names.map((n) => `${n}:${headers[n]}\n`).join('');
  const emptyHash = createHash('sha256').update('').digest('hex');
  const canonicalRequest = ['GET', '/', canonicalQuery, canonicalHeaders, names.join(';'), emptyHash].join(
    '\n',
  );
  const amzDate = url.searchParams.get('X-Amz-Date')!;
  const scope = `${amzDate.slice(0, 8)}/${region}/sts/aws4_request`;
  const toSign = [
    'AWS4-HMAC-SHA256',
    amzDate,
    scope,
    createHash('sha256').update(canonicalRequest).digest('hex'),
  ].join('\n');
  const h = (k: string | Buffer, d: string) => createHmac('sha256', k).update(d).digest();
  let key = h(`AWS4${credentials.secretAccessKey}`, amzDate.slice(0, 8));
  key = h(key, region);
  key = h(key, 'sts');
  key = h(key, 'aws4_request');
  return createHmac('sha256', key).update(toSign).digest('hex');
}

describe('EKS token', () => {
  it('is k8s-aws-v1. + unpadded base64url of a presigned regional STS GetCallerIdentity URL', async () => {
    const { token, expiresAt } = await mintEksToken({
      clusterName: 'prod-eu',
      region: 'eu-west-1',
      credentials,
      signingDate,
    });
    expect(token.startsWith('k8s-aws-v1.')).toBe(true);
    expect(token).not.toMatch(/[=+/]/);
    expect(token.length).toBeLessThan(4096);
    expect(expiresAt).toBe(signingDate.getTime() + EKS_TOKEN_LIFETIME_MS);

    const url = decodeEksToken(token);
    expect(url.protocol).toBe('https:');
    expect(url.host).toBe('sts.eu-west-1.amazonaws.com');
    expect(url.pathname).toBe('/');
    const q = url.searchParams;
    expect(q.get('Action')).toBe('GetCallerIdentity');
    expect(q.get('Version')).toBe('2011-06-15');
    expect(q.get('X-Amz-Algorithm')).toBe('AWS4-HMAC-SHA256');
    expect(q.get('X-Amz-Credential')).toBe('AKIDEXAMPLE/20260102/eu-west-1/sts/aws4_request');
    expect(q.get('X-Amz-Date')).toBe('20260102T030405Z');
    expect(q.get('X-Amz-Expires')).toBe('60');
    expect(q.get('X-Amz-SignedHeaders')?.split(';')).toEqual(['host', 'x-k8s-aws-id']);
    expect(q.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    // the cluster header is signed, not hoisted into the query
    expect(q.has('x-k8s-aws-id')).toBe(false);
    expect(q.get('X-Amz-Signature')).toBe(
      expectedSignature(url, { host: 'sts.eu-west-1.amazonaws.com', 'x-k8s-aws-id': 'prod-eu' }, 'eu-west-1'),
    );
  });

  it('is deterministic for fixed credentials and clock, and differs per cluster', async () => {
    const a = await mintEksToken({ clusterName: 'a', region: 'us-east-1', credentials, signingDate });
    const a2 = await mintEksToken({ clusterName: 'a', region: 'us-east-1', credentials, signingDate });
    const b = await mintEksToken({ clusterName: 'b', region: 'us-east-1', credentials, signingDate });
    expect(a.token).toBe(a2.token);
    expect(a.token).not.toBe(b.token);
  });

  it('carries the session token of temporary credentials', async () => {
    const { token } = await mintEksToken({
      clusterName: 'a',
      region: 'us-east-1',
      credentials: { ...credentials, sessionToken: 'SESSIONTOKEN' },
      signingDate,
    });
    expect(decodeEksToken(token).searchParams.get('X-Amz-Security-Token')).toBe('SESSIONTOKEN');
  });

  it('uses the China partition host for cn regions and rejects non-regions', () => {
    expect(stsHost('cn-north-1')).toBe('sts.cn-north-1.amazonaws.com.cn');
    expect(stsHost('us-gov-west-1')).toBe('sts.us-gov-west-1.amazonaws.com');
    expect(() => stsHost('evil.example.com/')).toThrow(/not an AWS region/);
  });

  it('names a region no AWS partition lists, for the kubeconfig reader to refuse', () => {
    const minter = new EksTokenMinter({ credentials });
    expect(minter.regionProblem('eu-nowhere-1')).toBe(
      'region "eu-nowhere-1" does not exist (no AWS partition lists it)',
    );
    expect(minter.regionProblem('eu-west-1')).toBeNull();
  });

  it('caches per cluster and region, re-mints after 10 minutes and on invalidate', async () => {
    let now = signingDate.getTime();
    const minter = new EksTokenMinter({ credentials, now: () => now });
    const t1 = await minter.token('a', 'us-east-1');
    expect(await minter.token('a', 'us-east-1')).toBe(t1);
    expect(minter.minted).toBe(1);
    await minter.token('a', 'us-west-2');
    expect(minter.minted).toBe(2);
    now += 9 * 60_000;
    expect(await minter.token('a', 'us-east-1')).toBe(t1);
    now += 60_000;
    const t2 = await minter.token('a', 'us-east-1');
    expect(t2).not.toBe(t1);
    expect(decodeEksToken(t2).searchParams.get('X-Amz-Date')).toBe('20260102T031405Z');
    minter.invalidate('a');
    await minter.token('a', 'us-east-1');
    expect(minter.minted).toBe(4);
  });

  it('reports unavailable credentials without leaking them', async () => {
    const minter = new EksTokenMinter({
      credentials: async () => {
        throw new Error('Could not load credentials from any providers');
      },
    });
    await expect(minter.token('a', 'us-east-1')).rejects.toThrow(/credentials .* not available/);
  });
});
