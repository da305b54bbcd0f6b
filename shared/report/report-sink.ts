/**
 * The report's sink as the handler knows it, and the file adapter beside it; the S3 adapter (s3.ts)
 * implements the same interface and sink.ts picks one from the environment.
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
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
