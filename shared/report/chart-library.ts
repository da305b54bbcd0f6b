/**
 * The charting library the HTML report carries inline: Chart.js's UMD build, read from the installed
 * package (so the report opens with no network). A Lambda bundle has no node_modules: the stack copies
 * the file beside the handler (FunctionSpec.bundleFiles), which is looked for first.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CHART_JS_FILE = 'chart.umd.min.js';
/** Where the file is in the package, for the stack's bundling step. */
export const CHART_JS_PACKAGE_PATH = `node_modules/chart.js/dist/${CHART_JS_FILE}`;

let cached: string | undefined;

export function chartLibrarySource(): string {
  if (cached) return cached;
  const beside = join(dirname(fileURLToPath(import.meta.url)), CHART_JS_FILE);
  cached = readFileSync(existsSync(beside) ? beside : fromPackage(beside), 'utf8');
  return cached;
}

function fromPackage(beside: string): string {
  try {
    return join(dirname(createRequire(import.meta.url).resolve('chart.js')), CHART_JS_FILE);
  } catch {
    throw new Error(`Chart.js is neither at ${beside} nor installed (npm ci installs chart.js)`);
  }
}
