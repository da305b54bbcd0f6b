/**
 * kubectl-style output: `-o table|wide|json|yaml|name|jsonpath=TEMPLATE` (and `--json`, an alias of
 * `-o json`; `--no-headers` for tables). JSON and YAML carry the same object, and `name` and `jsonpath`
 * read that object too; tables are for people.
 */
import { stringify } from 'yaml';
import { takeHeaderLines } from '../shared/kernel/text-table.js';
import { UsageError } from './command.js';
import { jsonpath } from './jsonpath.js';

export const outputOptions = {
  output: { type: 'string', short: 'o' },
  json: { type: 'boolean' },
  'no-headers': { type: 'boolean' },
} as const;

export type OutputFormat = 'table' | 'wide' | 'json' | 'yaml' | 'name' | `jsonpath=${string}`;
const FORMATS = ['table', 'wide', 'json', 'yaml', 'name'] as const;
/** What `-o` takes, as its usage errors list it. */
export const FORMATS_TEXT = `${FORMATS.join(', ')}, jsonpath=TEMPLATE`;

/** Whether `-o` names a format at all (cli/main.ts refuses any other before a command runs). */
export function knownFormat(f: string): f is OutputFormat {
  return (FORMATS as readonly string[]).includes(f) || f.startsWith('jsonpath=');
}

// --no-headers, as the command's outputFormat() call last read it: one command runs per process (and
// in-process test runs one after another), and print() has no other way to learn it.
let noHeaders = false;

export function outputFormat(flags: {
  output?: string;
  json?: boolean;
  'no-headers'?: boolean;
}): OutputFormat {
  let format: OutputFormat;
  if (flags.json) {
    if (flags.output && flags.output !== 'json')
      throw new UsageError(`--json and -o ${flags.output} disagree`);
    format = 'json';
  } else {
    const f = flags.output ?? 'table';
    if (!knownFormat(f)) throw new UsageError(`-o ${flags.output}: use one of ${FORMATS_TEXT}`);
    if (f === 'jsonpath=') throw new UsageError('-o jsonpath= needs a template, such as {[*].cluster}');
    format = f;
  }
  if (flags['no-headers'] && isDocument(format))
    throw new UsageError(`--no-headers goes with -o table or wide, not -o ${format}`);
  noHeaders = Boolean(flags['no-headers']);
  return format;
}

/** A document (json, yaml, name, jsonpath) rather than a table for people. */
export function isDocument(format: OutputFormat): boolean {
  return format !== 'table' && format !== 'wide';
}

/** Prints `data` as a document, or calls `table` with whether the wide form was asked for. */
export function print(format: OutputFormat, data: unknown, table: (wide: boolean) => string[]): void {
  if (format === 'json') console.log(JSON.stringify(data, null, 2));
  else if (format === 'yaml') console.log(stringify(data).trimEnd());
  else if (format === 'name') for (const n of names(data)) console.log(n);
  else if (format.startsWith('jsonpath=')) process.stdout.write(jsonpath(format.slice(9), data));
  else {
    takeHeaderLines();
    printLines(table(format === 'wide'));
  }
}

/**
 * A table's lines on standard output, without its header lines under --no-headers (those textTable
 * drew since the last call: the table's own, whatever its words).
 */
export function printLines(lines: string[]): void {
  const headers = noHeaders ? takeHeaderLines() : new Set<string>();
  for (const line of lines) if (!headers.has(line)) console.log(line);
}

/** Whether a table should print its header (a table drawn without textTable asks). */
export function headersWanted(): boolean {
  return !noHeaders;
}

/**
 * For commands whose table form is free text: a printer when a document format was asked for, else
 * undefined (print the text). Throws the usage error for an unknown format before any work is done.
 */
export function structured(flags: {
  output?: string;
  json?: boolean;
  'no-headers'?: boolean;
}): ((data: unknown) => void) | undefined {
  const format = outputFormat(flags);
  if (!isDocument(format)) return undefined;
  return (data) => print(format, data, () => []);
}

// What names a row, in kubectl's -o name order of parts: where it is, then what it is.
const NAME_PARTS = [
  'cluster',
  'clusterSet',
  'namespace',
  'daemonset',
  'name',
  'feature',
  'node',
  'pool',
  'id',
];

/**
 * `-o name`: one name per object of the document, for xargs: a list's rows, the rows of a document's
 * list (`{features: [...], unannounced}`), or the one object.
 */
function names(data: unknown): string[] {
  const list =
    data && typeof data === 'object' && !Array.isArray(data)
      ? Object.values(data).find((v) => Array.isArray(v) && v.length && typeof v[0] === 'object')
      : undefined;
  const rows = Array.isArray(data) ? data : ((list as unknown[] | undefined) ?? [data]);
  return rows.map((row) => {
    const parts = NAME_PARTS.flatMap((k) => {
      const v = (row as Record<string, unknown> | null)?.[k];
      const name = typeof v === 'string' ? v : (v as { name?: unknown } | undefined)?.name;
      return typeof name === 'string' && name ? [name] : [];
    });
    if (!parts.length) throw new UsageError('-o name: this output has no named objects; use -o json');
    return parts.join('/');
  });
}
