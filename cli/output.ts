/**
 * kubectl-style output: `-o table|wide|json|yaml` (and `--json`, an alias of `-o json`). JSON and YAML
 * carry the same object; tables are for people.
 */
import { stringify } from 'yaml';
import { UsageError } from './command.js';

export const outputOptions = {
  output: { type: 'string', short: 'o' },
  json: { type: 'boolean' },
} as const;

export type OutputFormat = 'table' | 'wide' | 'json' | 'yaml';
const FORMATS: readonly OutputFormat[] = ['table', 'wide', 'json', 'yaml'];

export function outputFormat(flags: { output?: string; json?: boolean }): OutputFormat {
  if (flags.json) {
    if (flags.output && flags.output !== 'json')
      throw new UsageError(`--json and -o ${flags.output} disagree`);
    return 'json';
  }
  const f = (flags.output ?? 'table') as OutputFormat;
  if (!FORMATS.includes(f)) throw new UsageError(`-o ${flags.output}: use one of ${FORMATS.join(', ')}`);
  return f;
}

/** Prints `data` as JSON or YAML, or calls `table` with whether the wide form was asked for. */
export function print(format: OutputFormat, data: unknown, table: (wide: boolean) => string[]): void {
  if (format === 'json') console.log(JSON.stringify(data, null, 2));
  else if (format === 'yaml') console.log(stringify(data).trimEnd());
  else for (const line of table(format === 'wide')) console.log(line);
}

/**
 * For commands whose table form is free text: a printer when -o json or yaml was asked for, else
 * undefined (print the text). Throws the usage error for an unknown format before any work is done.
 */
export function structured(flags: {
  output?: string;
  json?: boolean;
}): ((data: unknown) => void) | undefined {
  const format = outputFormat(flags);
  if (format !== 'json' && format !== 'yaml') return undefined;
  return (data) => print(format, data, () => []);
}
