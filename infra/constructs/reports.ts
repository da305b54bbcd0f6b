import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { LATEST_REPORT_KEY } from '../../shared/report/sink.js';

/** How long earlier reports (noncurrent versions of reports/latest.html) are kept. */
export const REPORT_HISTORY_DAYS = 30;
/** How long the report bucket's server access logs are kept. */
export const ACCESS_LOG_DAYS = 90;

/**
 * The private bucket the hourly fleet report is written to, and the bucket of its server access logs.
 * Both: S3-managed encryption, every public access blocked, TLS only (aws:SecureTransport), ACLs off
 * (bucket owner enforced). The report is one object, reports/latest.html; versioning keeps the earlier
 * ones for REPORT_HISTORY_DAYS. Retained on stack deletion like the table: the history is an audit trail.
 */
export class ReportBucket extends Construct {
  readonly bucket: s3.Bucket;
  readonly accessLogs: s3.Bucket;
  /** The one object the scheduled function writes. */
  readonly key = LATEST_REPORT_KEY;

  /** `retain`: both buckets outlive the stack (context retainData, default true). */
  constructor(scope: Construct, id: string, props: { retain: boolean }) {
    super(scope, id);
    // With retainData=false CloudFormation deletes them with the stack, and fails to if they hold objects.
    const removalPolicy = props.retain ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY;
    this.accessLogs = new s3.Bucket(this, 'AccessLogs', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [{ id: 'expire-logs', expiration: Duration.days(ACCESS_LOG_DAYS) }],
      removalPolicy,
    });
    this.bucket = new s3.Bucket(this, 'Bucket', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      versioned: true,
      lifecycleRules: [
        {
          id: 'report-history',
          noncurrentVersionExpiration: Duration.days(REPORT_HISTORY_DAYS),
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
      ],
      serverAccessLogsBucket: this.accessLogs,
      serverAccessLogsPrefix: 'report-bucket/',
      removalPolicy,
    });
  }
}
