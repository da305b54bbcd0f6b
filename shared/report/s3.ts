/**
 * The report bucket over the S3 API: the scheduled function puts the latest report, the CLI fetches it
 * or presigns a link to it. Endpoints come from the SDK's own settings (AWS_ENDPOINT_URL_S3), so a
 * local S3-protocol server stands in for S3 in tests.
 */
import { GetObjectCommand, PutObjectCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { LATEST_REPORT_KEY, type ReportSink } from './report-sink.js';

/** The longest a presigned link may live: SigV4 allows a week; a report link needs far less. */
export const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

const client = (config: S3ClientConfig = {}) => new S3Client({ maxAttempts: 5, ...config });

export class S3ReportSink implements ReportSink {
  constructor(
    private readonly bucket: string,
    private readonly s3: S3Client = client(),
  ) {}

  async write(html: string): Promise<string> {
    await this.s3.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: LATEST_REPORT_KEY,
        Body: html,
        ContentType: 'text/html; charset=utf-8',
        // Always the latest: a browser or proxy must not show an older one.
        CacheControl: 'no-cache',
      }),
    );
    return `s3://${this.bucket}/${LATEST_REPORT_KEY}`;
  }
}

/** The latest report's HTML; a missing one says that no scheduled report has run yet. */
export async function fetchLatestReport(bucket: string, config: S3ClientConfig = {}): Promise<string> {
  const s3 = client(config);
  try {
    const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: LATEST_REPORT_KEY }));
    if (!out.Body) throw new Error(`s3://${bucket}/${LATEST_REPORT_KEY} has no body`);
    return await out.Body.transformToString('utf-8');
  } catch (err) {
    if ((err as { name?: string }).name === 'NoSuchKey')
      throw new Error(
        `no report in s3://${bucket}/${LATEST_REPORT_KEY} yet: the scheduled report writes one every hour`,
      );
    throw err;
  } finally {
    s3.destroy();
  }
}

/** A presigned GET of the latest report, valid for `expiresInSeconds`. Signs locally: no request is sent. */
export async function presignLatestReport(
  bucket: string,
  expiresInSeconds: number,
  config: S3ClientConfig = {},
): Promise<string> {
  if (!Number.isInteger(expiresInSeconds) || expiresInSeconds < 1 || expiresInSeconds > MAX_PRESIGN_SECONDS)
    throw new RangeError(`the link's lifetime must be 1..${MAX_PRESIGN_SECONDS} seconds`);
  const s3 = client(config);
  try {
    return await getSignedUrl(s3, new GetObjectCommand({ Bucket: bucket, Key: LATEST_REPORT_KEY }), {
      expiresIn: expiresInSeconds,
    });
  } finally {
    s3.destroy();
  }
}
