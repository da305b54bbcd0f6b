/**
 * Rows of cells as aligned text lines (first row is the header), for CLI output and summaries. An empty
 * cell reads "-" (NONE), as in every table: a blank cell shifts the eye to the next column.
 */
import { NONE } from './units-format.js';

// The header lines drawn lately: a CLI's --no-headers leaves them out whatever their words.
const headers = new Set<string>();

/** The header lines textTable drew since the last call (and forgets them). */
export function takeHeaderLines(): Set<string> {
  const taken = new Set(headers);
  headers.clear();
  return taken;
}

export function textTable(rows: string[][]): string[] {
  if (headers.size > 1000) headers.clear();
  const filled = rows.map((r, i) => (i === 0 ? r : r.map((c) => (c === '' ? NONE : c))));
  const widths = filled[0]!.map((_, i) => Math.max(...filled.map((r) => (r[i] ?? '').length)));
  const lines = filled.map((r) =>
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd(),
  );
  headers.add(lines[0]!);
  return lines;
}

/** Text cut to fit a cell at a word boundary, with "…" saying there is more ("waiting 10m for…"). */
export function clipWords(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > max / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}
