/**
 * The report bucket over the S3 protocol, offline: s3rver (an S3-protocol server from npm, on loopback)
 * stands in for S3. The scheduled function's S3 sink puts reports/latest.html; `fleetscope report --aws`
 * fetches it or prints a presigned link. s3rver does not check signatures, so the link's form (SigV4
 * query parameters, expiry, credential scope) is asserted on the URL itself.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchLatestReport, presignLatestReport, S3ReportSink } from '../../shared/report/s3.js';
import { FileReportSink, LATEST_REPORT_KEY, reportSinkFromEnv } from '../../shared/report/sink.js';
import { runFleetscopeInProcess } from '../support/cli.js';
import { testDir } from '../support/temp.js';

const BUCKET = 'fleetscope-reports-test';
// s3rver knows one key pair, S3RVER/S3RVER (and does not check SigV4 signatures: see above).
const KEY_ID = 'S3RVER';
const SECRET = 'S3RVER';
/** For links signed without a server: a secret that must not show in them. */
const AWS_KEY_ID = 'AKIDREPORTTEST';
const AWS_SECRET = 'report-test-secret-never-in-a-link';

describe('the report bucket (S3 protocol, local server)', () => {
  let server: S3rver;
  let dir: string;
  let endpoint: string;
  const saved = {
    endpoint: process.env.AWS_ENDPOINT_URL_S3,
    key: process.env.AWS_ACCESS_KEY_ID,
    secret: process.env.AWS_SECRET_ACCESS_KEY,
  };
  const config = () => ({
    endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: KEY_ID, secretAccessKey: SECRET },
  });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fleetscope-s3rver-'));
    server = new S3rver({ port: 0, address: '127.0.0.1', directory: dir, silent: true });
    const { port } = await server.run();
    endpoint = `http://127.0.0.1:${port}`;
    const s3 = new S3Client(config());
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
    s3.destroy();
  });
  afterAll(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    for (const [k, v] of [
      ['AWS_ENDPOINT_URL_S3', saved.endpoint],
      ['AWS_ACCESS_KEY_ID', saved.key],
      ['AWS_SECRET_ACCESS_KEY', saved.secret],
    ] as const)
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
  });

  it('says no report exists yet before the first scheduled run', async () => {
    await expect(fetchLatestReport(BUCKET, config())).rejects.toThrow(
      `no report in s3://${BUCKET}/${LATEST_REPORT_KEY} yet: the scheduled report writes one every hour`,
    );
  });

  it('puts the report as reports/latest.html and reads the newest back', async () => {
    const sink = new S3ReportSink(BUCKET, new S3Client(config()));
    expect(await sink.write('<p>first</p>')).toBe(`s3://${BUCKET}/reports/latest.html`);
    expect(await sink.write('<p>second</p>')).toBe(`s3://${BUCKET}/reports/latest.html`);
    expect(await fetchLatestReport(BUCKET, config())).toBe('<p>second</p>');
  });

  it('presigns a GET of the latest report that the server serves', async () => {
    const url = new URL(await presignLatestReport(BUCKET, 900, config()));
    expect(`${url.origin}${url.pathname}`).toBe(`${endpoint}/${BUCKET}/${LATEST_REPORT_KEY}`);
    const q = url.searchParams;
    expect(q.get('X-Amz-Algorithm')).toBe('AWS4-HMAC-SHA256');
    expect(q.get('X-Amz-Expires')).toBe('900');
    expect(q.get('X-Amz-SignedHeaders')).toBe('host');
    expect(q.get('X-Amz-Credential')).toMatch(new RegExp(`^${KEY_ID}/\\d{8}/us-east-1/s3/aws4_request$`));
    expect(q.get('X-Amz-Date')).toMatch(/^\d{8}T\d{6}Z$/);
    expect(q.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('<p>second</p>');
  });

  it('presigns for AWS with the virtual-hosted bucket name, and bounds the lifetime to 1s..7 days', async () => {
    const aws = {
      region: 'eu-west-1',
      credentials: { accessKeyId: AWS_KEY_ID, secretAccessKey: AWS_SECRET },
    };
    const url = new URL(await presignLatestReport(BUCKET, 3600, aws));
    expect(url.host).toBe(`${BUCKET}.s3.eu-west-1.amazonaws.com`);
    expect(url.pathname).toBe(`/${LATEST_REPORT_KEY}`);
    expect(url.searchParams.get('X-Amz-Expires')).toBe('3600');
    expect(url.searchParams.get('X-Amz-Credential')).toMatch(
      new RegExp(`^${AWS_KEY_ID}/\\d{8}/eu-west-1/s3/aws4_request$`),
    );
    expect(url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    // The secret signs the link; it is never part of it.
    expect(url.href).not.toContain(AWS_SECRET);
    for (const bad of [0, -1, 1.5, 7 * 24 * 3600 + 1])
      await expect(presignLatestReport(BUCKET, bad, aws)).rejects.toThrow(RangeError);
  });

  it('fetches (--out) or links (--url) the report from the CLI with --aws --bucket', async () => {
    process.env.AWS_ENDPOINT_URL_S3 = endpoint;
    process.env.AWS_ACCESS_KEY_ID = KEY_ID;
    process.env.AWS_SECRET_ACCESS_KEY = SECRET;
    const out = join(testDir('fleetscope-report-aws-'), 'r.html');
    const got = await runFleetscopeInProcess(['report', '--aws', '--bucket', BUCKET, '--out', out]);
    expect(got).toMatchObject({ code: 0, err: '' });
    expect(got.out).toBe(`wrote ${out} (the latest report of s3://${BUCKET})`);
    expect(readFileSync(out, 'utf8')).toBe('<p>second</p>');
    const link = await runFleetscopeInProcess([
      'report',
      '--aws',
      '--bucket',
      BUCKET,
      '--url',
      '--expires',
      '600',
    ]);
    expect(link.code).toBe(0);
    const url = new URL(link.out);
    expect(url.searchParams.get('X-Amz-Expires')).toBe('600');
    expect(await (await fetch(url)).text()).toBe('<p>second</p>');
  });

  it('refuses contradictory or incomplete --aws flags in one line, before any request', async () => {
    const cases: [string[], string][] = [
      [['--aws', '--bucket', BUCKET], 'report --aws needs --out FILE or --url'],
      [['--aws', '--bucket', BUCKET, '--url', '--out', 'x'], '--url and --out: choose one'],
      [['--aws', '--bucket', BUCKET, '--out', 'x', '--expires', '60'], '--expires goes with --url'],
      [
        ['--aws', '--bucket', BUCKET, '--url', '--expires', '0'],
        '--expires needs an integer from 1 to 604800, got "0"',
      ],
      [
        ['--aws', '--cluster', 'a', '--out', 'x'],
        '--cluster works on the local state; the stored report covers the whole fleet',
      ],
      [['--bucket', BUCKET, '--out', 'x'], '--bucket goes with --aws'],
      [['--url'], '--url goes with --aws'],
    ];
    for (const [args, message] of cases) {
      const r = await runFleetscopeInProcess(['report', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.err.split('\n')[0], args.join(' ')).toBe(`fleetscope report: ${message}`);
    }
  });
});

describe('the report sink from the environment', () => {
  it('is the bucket when the stack sets one, else the local directory, else an error naming both', async () => {
    expect(await reportSinkFromEnv({ FLEETSCOPE_REPORT_BUCKET: 'b' })).toBeInstanceOf(S3ReportSink);
    const dir = testDir('fleetscope-report-sink-');
    const sink = await reportSinkFromEnv({ FLEETSCOPE_REPORT_DIR: dir });
    expect(sink).toBeInstanceOf(FileReportSink);
    expect(await sink.write('<p>x</p>')).toBe(join(dir, 'latest.html'));
    expect(readFileSync(join(dir, 'latest.html'), 'utf8')).toBe('<p>x</p>');
    await expect(reportSinkFromEnv({})).rejects.toThrow(
      'neither FLEETSCOPE_REPORT_BUCKET nor FLEETSCOPE_REPORT_DIR is set: nowhere to write the report',
    );
  });
});
