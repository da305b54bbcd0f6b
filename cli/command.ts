import { readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/**
 * One `fleetscope <name> ...` command. Each lives in cli/commands/<name>.ts and is listed in cli/main.ts.
 * `run` gets the arguments after the command name and returns the process exit code; it throws a
 * UsageError for bad arguments (printed with the command's usage, exit 2).
 */
export interface CliCommand {
  name: string;
  summary: string;
  usage: string;
  /**
   * What each subcommand prints ('' for a command without subcommands; "policy get" for a nested one):
   * data takes -o table|wide|json|yaml (and --json), manifests -o yaml|json, an action a confirmation.
   * test/cli/data-commands.sim.test.ts reads it: a data subcommand without a case there fails it.
   */
  outputs?: Record<string, CommandOutput>;
  run(args: string[]): Promise<number>;
}

export type CommandOutput = 'data' | 'manifests' | 'action';

export class UsageError extends Error {
  override name = 'UsageError';
}

/** A required flag's value, or a usage error with `message`. */
export function need(value: string | undefined, message: string): string {
  if (!value) throw new UsageError(message);
  return value;
}

/**
 * Runs the handler of the subcommand named by the first positional argument; a usage error when it is
 * missing or unknown, or when more positional arguments follow.
 */
export function runSubcommand(
  positionals: string[],
  handlers: Record<string, () => Promise<number>>,
): Promise<number> {
  const [sub, ...extra] = positionals;
  if (extra.length) throw new UsageError(`unexpected argument "${extra[0]}"`);
  const handler = sub && Object.hasOwn(handlers, sub) ? handlers[sub] : undefined;
  if (!handler)
    throw new UsageError(
      sub
        ? `unknown subcommand "${sub}"${didYouMean(sub, Object.keys(handlers))}`
        : `missing subcommand (one of ${Object.keys(handlers).join(', ')})`,
    );
  return handler();
}

/** kubectl's hint for a mistyped word: `; did you mean "cluster"?`, or '' when nothing is close. */
export function didYouMean(word: string, candidates: string[]): string {
  const near = candidates
    .map((c) => ({ c, d: editDistance(word.toLowerCase(), c.toLowerCase()) }))
    .filter(({ c, d }) => d <= Math.max(1, Math.floor(c.length / 3)) || c.startsWith(word))
    .sort((a, b) => a.d - b.d);
  return near.length ? `; did you mean "${near[0]!.c}"?` : '';
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

/** A file's text, or standard input's for "-". */
export async function readInput(path: string): Promise<string> {
  if (path !== '-')
    return readFile(path, 'utf8').catch((err) => Promise.reject(fileError('read', path, err)));
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * A numeric flag's value, written in decimal only: Number() would also take "0x10", "1e3", "" or " 5 ",
 * none of which an operator means as a count or a duration.
 */
export function decimalFlag(
  name: string,
  v: string | undefined,
  { integer = false, min = 0, max = Number.MAX_SAFE_INTEGER } = {},
): number {
  const pattern = integer ? /^-?\d+$/ : /^-?\d+(\.\d+)?$/;
  const n = Number(v);
  if (v === undefined || !pattern.test(v) || n < min || n > max) {
    const what = integer ? 'an integer' : 'a decimal number';
    // A bound no operator would type (Number.MAX_SAFE_INTEGER) is left unsaid.
    const range = max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`;
    throw new UsageError(`${name} needs ${what} ${range}, got ${JSON.stringify(v ?? '')}`);
  }
  return n;
}

/** Writes a file the command produces (`--out`); a path that cannot be written says why, in words. */
export async function writeOutput(
  path: string,
  text: string,
  opts: { mode?: number; flag?: string } = {},
): Promise<void> {
  await writeFile(path, text, { encoding: 'utf8', ...opts }).catch((err) =>
    Promise.reject(fileError('write', path, err)),
  );
}

/** A file system error as a sentence naming the file, instead of "ENOENT: no such file or directory, open ...". */
function fileError(action: 'read' | 'write', path: string, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException).code;
  const why: Record<string, string> =
    action === 'read'
      ? { ENOENT: 'no such file', EISDIR: 'it is a directory', EACCES: 'permission denied' }
      : {
          ENOENT: `the directory ${dirname(resolve(path))} does not exist`,
          EISDIR: 'it is a directory',
          EACCES: 'permission denied',
          EEXIST: 'it already exists (--force overwrites it)',
        };
  const reason = (code && why[code]) ?? (err instanceof Error ? err.message : String(err));
  return new Error(`cannot ${action} ${path}: ${reason}`);
}
