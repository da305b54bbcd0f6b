/**
 * Rows of cells as aligned text lines (first row is the header), for CLI output and summaries. An empty
 * cell reads "-" (NONE), as in every table: a blank cell shifts the eye to the next column.
 */
import { NONE } from './units-format.js';

export function textTable(rows: string[][]): string[] {
  const filled = rows.map((r, i) => (i === 0 ? r : r.map((c) => (c === '' ? NONE : c))));
  const widths = filled[0]!.map((_, i) => Math.max(...filled.map((r) => (r[i] ?? '').length)));
  return filled.map((r) =>
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd(),
  );
}
