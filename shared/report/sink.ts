/**
 * Where the scheduled report goes: a private S3 bucket in the stack, the state directory locally. The
 * handler knows only the ReportSink interface (report-sink.ts); reportSinkFromEnv picks the adapter from
 * the environment the stack (FLEETSCOPE_REPORT_BUCKET) or the local runtime (FLEETSCOPE_REPORT_DIR) sets.
 */
import { ENV } from '../platform/config.js';
import { FileReportSink, type ReportSink } from './report-sink.js';

export { FileReportSink, LATEST_REPORT_KEY, REPORT_PREFIX, type ReportSink } from './report-sink.js';

export async function reportSinkFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<ReportSink> {
  const bucket = env[ENV.reportBucket];
  if (bucket) {
    const { S3ReportSink } = await import('./s3.js');
    return new S3ReportSink(bucket);
  }
  const dir = env[ENV.reportDir];
  if (dir) return new FileReportSink(dir);
  throw new Error(`neither ${ENV.reportBucket} nor ${ENV.reportDir} is set: nowhere to write the report`);
}
