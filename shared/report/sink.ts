/**
 * Where the scheduled report goes: a private S3 bucket in the stack, the state directory locally. The
 * handler knows only this interface; reportSinkFromEnv picks the adapter from the environment the stack
 * (FLEETSCOPE_REPORT_BUCKET) or the local runtime (FLEETSCOPE_REPORT_DIR) sets.
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ENV } from '../platform/config.js';

/** The object (and file) name of the latest report; S3 versioning keeps the earlier ones. */
export const REPORT_PREFIX = 'reports/';
export const LATEST_REPORT_KEY = `${REPORT_PREFIX}latest.html`;

export interface ReportSink {
  /** Stores the report as the latest one; returns where it went (for the log line). */
  write(html: string): Promise<string>;
}

/** Writes <dir>/latest.html atomically (a reader never sees half a report). */
export class FileReportSink implements ReportSink {
  constructor(private readonly dir: string) {}

  async write(html: string): Promise<string> {
    await mkdir(this.dir, { recursive: true });
    const path = join(this.dir, 'latest.html');
    const tmp = `${path}.${process.pid}.tmp`;
    await writeFile(tmp, html, 'utf8');
    await rename(tmp, path);
    return path;
  }
}

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
