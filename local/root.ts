import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The repository's root: the nearest folder upward with a package.json. Found from this file, so it is
 * the same from the TypeScript sources and from the CLI bundle in dist/.
 */
export const REPO_ROOT = findRoot(dirname(fileURLToPath(import.meta.url)));

function findRoot(dir: string): string {
  return existsSync(join(dir, 'package.json')) || dirname(dir) === dir ? dir : findRoot(dirname(dir));
}

/**
 * tsx's loader for `node --import`, resolved from this checkout: a bare `--import tsx` is resolved from
 * the child's working directory, so a child started from elsewhere could not find it. A function: the
 * CLI bundle loads this module and must not need tsx to start. Resolved with require's algorithm (tsx's
 * one export is its ESM loader either way), which also works where this module was compiled to CommonJS.
 */
export const tsxImport = (): string =>
  pathToFileURL(createRequire(join(REPO_ROOT, 'package.json')).resolve('tsx')).href;
