/**
 * One checker of what tables say, for every command's table output: amounts in one vocabulary (m only
 * below a core, Mi only below a Gi, no Ki or decimal G, a cpu/memory pair written "cpu / memory") and
 * "-" for an empty cell (never a blank cell, never <none>, null, undefined or NaN).
 */

/** What is wrong with a table's text: one line per problem, empty when nothing is. */
export function tableProblems(text: string): string[] {
  const problems: string[] = [];
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    const at = `line ${i + 1} "${line.trim().slice(0, 80)}"`;
    for (const m of line.matchAll(/(?<![\w.])(\d{4,})m\b/g))
      problems.push(`${at}: ${m[0]} is a core or more: read it in cores`);
    for (const m of line.matchAll(/(?<![\w.])(\d+)Mi\b/g))
      if (Number(m[1]) >= 1024) problems.push(`${at}: ${m[0]} is a Gi or more: read it in Gi`);
    for (const m of line.matchAll(/(?<![\w.])\d+(\.\d+)?(Ki|Ti|G|M|k)\b/g))
      problems.push(`${at}: ${m[0]} is not in the table vocabulary (m or cores, Mi or Gi)`);
    if (/\S\/(unbounded|\d[\d.]*(Mi|Gi)\b)/.test(line) && !/\S\/\S+\/\S/.test(line))
      problems.push(`${at}: a cpu/memory pair without spaces: write "cpu / memory"`);
    for (const bad of ['<none>', 'undefined', 'null', 'NaN', '[object Object]'])
      if (new RegExp(`(^|\\s)${bad.replace(/[[\]]/g, '\\$&')}(\\s|$)`).test(line))
        problems.push(`${at}: ${bad} in a table: an absent value reads "-"`);
  });
  problems.push(...blankCells(lines));
  return problems;
}

/** A header: upper-case cells separated by two or more spaces. */
const isHeader = (line: string) => {
  const cells = line.trim().split(/ {2,}/);
  return cells.length >= 2 && cells.every((c) => /^[A-Z][A-Z0-9 ()'’→,./%-]*$/.test(c));
};

/** Cells of the rows under each header, cut at the header's column starts: none may be blank. */
function blankCells(lines: string[]): string[] {
  const problems: string[] = [];
  for (let h = 0; h < lines.length; h++) {
    const header = lines[h]!;
    if (!isHeader(header)) continue;
    const starts: number[] = [];
    for (const m of header.matchAll(/\S+(?: \S+)*/g)) starts.push(m.index);
    for (let r = h + 1; r < lines.length; r++) {
      const row = lines[r]!;
      if (row.trim() === '' || isHeader(row)) break;
      // A line whose words run across the header's column starts is text under the table, not a row.
      const inRow = (start: number) => start === 0 || start > row.length || row[start - 1] === ' ';
      if (row.search(/\S/) !== header.search(/\S/) || !starts.every(inRow)) break;
      starts.forEach((start, i) => {
        const cell = row.slice(start, starts[i + 1] ?? row.length).trim();
        if (cell === '')
          problems.push(
            `line ${r + 1} "${row.trim()}": column ${header.slice(start).trim().split(/ {2,}/)[0]} is blank`,
          );
      });
    }
  }
  return problems;
}
